"""The XLA executor: root APIs run as compiled XLA executables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.executor import Executor
from backends.xla.executable import ApiExecutable
from backends.xla.export import export_api
from metagraph.graph import MetaGraph, State


def check_compiler_options(options: dict[str, Any]) -> None:
    """Raise ValueError now, naming the option, if XLA rejects any of `options`."""
    if not options:
        return
    try:
        jax.jit(lambda x: x + 1).lower(np.float32(0)).compile(dict(options))
    except Exception as e:  # XLA reports bad names and values as a runtime error
        raise ValueError(f"backends.xla.lower: XLA rejected the compiler options "
                         f"{options}: {e}") from None


class XlaExecutor(Executor):
    """Runs each root API through its `ApiExecutable` (in `.executables[api]`)."""

    def __init__(self, graph: MetaGraph, compiler_options: dict[str, Any] | None = None,
                 seed: int = 0, state: State | None = None, donate_state: bool = True):
        check_compiler_options(compiler_options or {})
        self.compiler_options = dict(compiler_options or {})
        self.executables = {name: ApiExecutable(graph, name, compiler_options, donate_state)
                            for name in graph.apis}
        super().__init__(graph, seed, state)

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
