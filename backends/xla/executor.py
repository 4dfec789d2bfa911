"""The XLA executor: root APIs run as compiled XLA executables."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.executor import Executor
from backends.xla.data_parallel import DataParallel
from backends.xla.executable import ApiExecutable
from backends.xla.export import export_api
from backends.xla.transforms import Seeds, Transform
from metagraph import runtime_checks
from metagraph.graph import MetaGraph, State

try:
    from backends.xla._fast_call import FastCall
except ModuleNotFoundError as error:
    if error.name != "backends.xla._fast_call":
        raise
    raise ImportError(
        f"metagraph: the compiled call path (backends.xla._fast_call) is not built in "
        f"{__file__.rpartition('/')[0]}, a source tree: build it here with `pip install -e .`, "
        f"or run from another directory to use the installed package") from None


def check_compiler_options(options: dict[str, Any]) -> None:
    """Raise ValueError now, naming the option, if XLA rejects any of `options`."""
    if not options:
        return
    try:
        jax.jit(lambda x: x + 1).lower(np.float32(0)).compile(dict(options))
    except Exception as e:  # XLA reports bad names and values as a runtime error
        raise ValueError(f"backends.xla.lower: XLA rejected the compiler options "
                         f"{options}: {e}") from None


def _jax_array_type() -> type:
    """JAX's concrete array class (what `jnp` functions return), found from an array (at
    lowering, when the backend runs already: not at import)."""
    return type(jax.numpy.zeros((), np.float32))


# The JAX versions whose `jax.stages.Compiled` keeps its C++ dispatch in the private attribute
# `_call` after its first call, and whose `__call__` only forwards to it (checked by
# tests/backends/test_stages.py on the installed JAX).
PRIVATE_DISPATCH_VERSIONS = ((0, 7), (0, 13))


def _dispatch(compiled: Any, version: tuple[int, ...] = jax.__version_info__) -> Any:
    """What calling `compiled` runs: within PRIVATE_DISPATCH_VERSIONS its C++ dispatch
    (`_call`), which saves a Python frame per call; on any other JAX version, or where the
    attribute is missing, `compiled` itself (public, a frame slower)."""
    low, high = PRIVATE_DISPATCH_VERSIONS
    if not low <= tuple(version[:2]) < high:
        return compiled
    call = getattr(compiled, "_call", None)
    return call if callable(call) else compiled


def _waiting(call: Any) -> Any:
    """`call` followed by waiting for its results: for programs with runtime checks, whose
    reports XLA may make after the call returned (`ApiExecutable.last_reports`)."""

    def run(*args: Any) -> Any:
        return jax.block_until_ready(call(*args))

    return run

class XlaExecutor(Executor):
    """Runs each root API through its `ApiExecutable` (in `.executables[api]`): the graph's
    pure functions transformed by `transform` (seeds, data parallelism: `transforms.py`),
    lowered, compiled once per input signature, and called."""

    executables: dict[str, ApiExecutable]
    compiler_options: dict[str, Any]
    transform: Transform

    def __init__(self, graph: MetaGraph, compiler_options: dict[str, Any] | None = None,
                 seed: int = 0, state: State | None = None, donate_state: bool = True,
                 transform: Transform | None = None, precompile: tuple[str, ...] = ()):
        self._check_api_names(graph)  # before anything compiles
        check_compiler_options(compiler_options or {})
        if transform is not None and not isinstance(transform, Transform):
            raise TypeError(f"backends.xla.lower: transform must be a backends.xla.Transform "
                            f"(Seeds, DataParallel), got {type(transform).__name__}")
        self.compiler_options = dict(compiler_options or {})
        self.transform = transform or Transform()
        self.executables = {name: ApiExecutable(graph, name, compiler_options, donate_state,
                                                self.transform) for name in graph.apis}
        for name in precompile:  # compiling while the state initialises below
            if name not in self.executables:
                raise ValueError(f"backends.xla.lower: precompile names {name!r}, which is not "
                                 f"a root API of {graph.root.name} ({sorted(graph.apis)})")
            self.executables[name].compile_in_background()
        super().__init__(graph, seed, state)
        checkers = {name: self.transform.input_checker(checker)
                    for name, checker in self._checkers.items()}
        if any(checkers[name] is not self._checkers[name] for name in checkers):
            self._checkers = checkers
            for name in graph.apis:
                self.__dict__[name] = self._bound(name)

    @property
    def seeds(self) -> int | None:
        """The number of independent seeds the executables run (`Seeds`), or None for one."""
        return self.transform.count if isinstance(self.transform, Seeds) else None

    @property
    def data_parallel(self) -> DataParallel | None:
        """The mesh the executables run over (`DataParallel`), or None for one device."""
        return self.transform if isinstance(self.transform, DataParallel) else None

    def _initial_state(self, seed: int) -> State:
        return self.transform.place(self.transform.initial_state(self.graph, seed))

    def set_state(self, value: Any, path: str | None = None) -> None:
        """Replace the state (or the scope `path`'s part of it), placed on the executor's
        devices."""
        super().set_state(value, path)
        self.state = self.transform.place(self.state)

    def _bound(self, name: str) -> Any:
        """`exe.<name>`: the checked call of `Executor`, plus a fast path while the signature
        does not change (`FastCall`, backends/xla/fast_call.cpp). After a checked call whose
        inputs are all arrays (NumPy or JAX), the next calls with arrays go straight to that
        signature's compiled executable, whose own C++ dispatch checks shapes, dtypes and
        structure as `jax.jit`'s does (before running, so a mismatch donates nothing): any
        other signature takes the checked path again. NumPy arrays' dtypes are compared too,
        because XLA would cast NumPy's 64-bit arrays to 32 bits silently."""
        checked = super()._bound(name)
        executable = self.executables[name]
        jax_array = _jax_array_type()
        kinds = (np.ndarray, jax_array)

        def checked_call(*args: Any, **kwargs: Any) -> Any:
            outputs = checked(*args, **kwargs)
            if not kwargs and all(type(value) in kinds for value in args):
                call = _dispatch(executable.last_compiled())
                fast.arm(_waiting(call) if executable.last_reports() else call,
                         tuple(value.dtype for value in args))
            else:
                fast.disarm()
            return outputs

        fast = FastCall(checked_call, self, functools.partial(self._failed, name),
                        runtime_checks, jax_array, np.ndarray,
                        len(self.graph.apis[name].inputs))
        fast.__name__, fast.__doc__ = checked.__name__, checked.__doc__
        return fast

    def _run(self, api: str, state: State, inputs: tuple, key: tuple) -> tuple[State, Any]:
        return self.executables[api](state, inputs, key)

    def export(self, api: str, path: str | Path | None = None,
               platforms: tuple[str, ...] | None = None) -> bytes:
        """Serialize root API `api` with the current state (`jax.export`, batch and time
        dimensions left symbolic) so that `backends.xla.load` runs it in another process
        without the component classes. Writes to `path` if given; returns the bytes."""
        data = export_api(self.graph, api, self.state, platforms)
        if path is not None:
            Path(path).write_bytes(data)
        return data

    # ---- costs, for the drawing ----------------------------------------------------------------
    def costs(self, batch_size: int = 1, time_size: int = 1) -> dict[str, dict[str, Any]]:
        """Each root API's XLA cost and memory analysis and compile time at these sizes:
        `{api: {"flops", "transcendentals", "bytes accessed", "argument bytes", "output
        bytes", "temp bytes", "generated code bytes", "compile seconds"}}` (what XLA reports).

        An API not compiled yet for these sizes is compiled now and timed; one compiled
        before is compiled once more to time it. The drawing shows them on the root APIs:
        `graph.render("agent.html", costs=exe.costs())`, or `exe.render("agent.html")`."""
        found = {}
        for name, executable in self.executables.items():
            before = len(executable.signatures)
            start = time.perf_counter()
            compiled = executable.compile(batch_size, time_size)
            seconds = time.perf_counter() - start
            if len(executable.signatures) == before:  # compiled earlier: time a compile
                start = time.perf_counter()
                executable.lower(batch_size, time_size).compile(self.compiler_options or None)
                seconds = time.perf_counter() - start
            found[name] = {**_xla_costs(compiled), "compile seconds": seconds}
        return found

    def render(self, path: str | Path, **options: Any) -> Path:
        """Draw the graph with each root API's cost (`costs()`) to `path` (`.html`, `.svg`, ...;
        options as for `MetaGraph.render`)."""
        return self.graph.render(path, costs=self.costs(), **options)


def _xla_costs(compiled: jax.stages.Compiled) -> dict[str, float]:
    """The flops, bytes accessed and memory sizes XLA reports for one executable."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, list | tuple):  # one per device in older JAX
        analysis = analysis[0] if analysis else {}
    found = {key: float(analysis[key]) for key in ("flops", "transcendentals", "bytes accessed")
             if float((analysis or {}).get(key, -1)) >= 0}  # XLA says -1 for unknown
    memory = compiled.memory_analysis()
    for attr, key in (("argument_size_in_bytes", "argument bytes"),
                      ("output_size_in_bytes", "output bytes"),
                      ("temp_size_in_bytes", "temp bytes"),
                      ("generated_code_size_in_bytes", "generated code bytes")):
        if memory is not None and hasattr(memory, attr):
            found[key] = float(getattr(memory, attr))
    return found
