"""`ProcessLocalExecutor`: an executor over a mesh that spans processes, whose root APIs take
each process's own part of the batch (and convert it to the global arrays the executable
takes), so that an algorithm's code calls `exe.learn(...)` the same way in one process and in
a group of learner processes:

    dp = backends.xla.DataParallel.across_processes(batch_axes=...)
    exe = ProcessLocalExecutor(backends.xla.lower(graph, seed=0, data_parallel=dp))
    exe.learn(*this_process_part)     # every process calls it, each with its own part
"""

from __future__ import annotations

from typing import Any

from backends.xla.executor import XlaExecutor


class ProcessLocalExecutor:
    """`exe` (an `XlaExecutor` lowered with a `DataParallel`) whose root APIs take this
    process's part of each batch axis (`DataParallel.global_inputs`). Anything else
    (`graph`, `get_state`, `save_checkpoint`, ...) is `exe`'s own."""

    def __init__(self, exe: XlaExecutor):
        """Wrap `exe`.

        Raises:
            ValueError: `exe` was not lowered with `data_parallel=`.
        """
        if getattr(exe, "data_parallel", None) is None:
            raise ValueError("ProcessLocalExecutor: the executor was lowered without "
                             "data_parallel=DataParallel(...); lower it with one")
        self.exe, self.data_parallel = exe, exe.data_parallel
        for name in exe.graph.apis:
            self.__dict__[name] = self._bound(name)

    def _bound(self, name: str):
        names = list(self.exe.graph.apis[name].inputs)
        call = self.exe.__dict__[name]

        def bound(*args: Any, **kwargs: Any) -> Any:
            unknown = [key for key in kwargs if key not in names]
            if len(args) > len(names) or unknown or len(args) + len(kwargs) != len(names):
                return call(*args, **kwargs)  # the executor names what is wrong
            values = (*args, *(kwargs[n] for n in names[len(args):]))
            return call(*self.data_parallel.global_inputs(self.exe.graph, name, values))

        bound.__name__ = name
        bound.__doc__ = f"Run root API {self.exe.graph.apis[name]} on this process's part"
        return bound

    def call(self, api: str, *args: Any, **kwargs: Any) -> Any:
        """Call root API `api` with this process's part of its inputs (see `Executor.call`)."""
        if api not in self.exe.graph.apis:
            return self.exe.call(api, *args, **kwargs)  # raises, naming the built APIs
        return self.__dict__[api](*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.exe, name)

    def __repr__(self) -> str:
        return f"ProcessLocalExecutor({self.exe.graph.root.name}, {self.data_parallel})"
