"""The executors a run can use, by name: `xla` (the default: AOT-compiled executables,
`backends.xla`) and `eager` (`backends.eager`: the same pure functions op by op without jit,
for stepping through a short run in pdb, as RLgraph's define-by-run did). The trainer and
`evaluate` take the name and call `lower` here; nothing else in the application layer picks a
backend."""

from __future__ import annotations

from typing import Any

from backends import eager, xla
from metagraph.graph import MetaGraph

EXECUTORS = ("xla", "eager")


def lower(graph: MetaGraph, executor: str = "xla", seed: int = 0, seeds: int | None = None,
          data_parallel: Any = None, precompile: tuple[str, ...] = (), state: Any = None,
          device: Any = None) -> Any:
    """An executor of `graph` of the kind `executor` names, holding `state` when given (a
    loaded run's), its programs on `device` (a name such as "cpu" or "gpu:0"; None: JAX's
    default device). The eager one runs one seed on JAX's default device: `seeds`,
    `data_parallel` and `device` are refused with it, and `precompile` means nothing to it
    (it compiles nothing)."""
    if executor == "xla":
        return xla.lower(graph, seed=seed, seeds=seeds, data_parallel=data_parallel,
                         precompile=precompile, state=state, device=device)
    if executor != "eager":
        raise ValueError(f"unknown executor {executor!r}; expected one of {EXECUTORS}")
    if seeds is not None or data_parallel is not None or device is not None:
        raise ValueError("the eager executor runs one seed on JAX's default device: drop "
                         "--seeds and --device (and run without several local devices' data "
                         "parallelism)")
    return eager.lower(graph, seed=seed, state=state)
