"""Define-by-run: the graph's pure functions run op by op, without jit.

Results equal the XLA backend's (to float rounding: XLA fuses ops), and a breakpoint or a print
inside an API method sees concrete arrays, so a user can step through it in pdb.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from backends.executor import Executor
from metagraph import runtime_checks
from metagraph.graph import MetaGraph, State


class EagerExecutor(Executor):
    """An executor running the graph's pure functions op by op under `jax.disable_jit()` (for
    pdb and prints)."""
    def __init__(self, graph: MetaGraph, seed: int = 0, state: State | None = None):
        self._pure = {name: runtime_checks.reporting(graph.pure(name)) for name in graph.apis}
        super().__init__(graph, seed, state)

    def _run(self, api: str, state: State, inputs: tuple, key: tuple) -> tuple[State, Any]:
        with jax.disable_jit():
            return self._pure[api](state, *jax.tree.map(jnp.asarray, inputs))


def lower(graph: MetaGraph, seed: int = 0, state: State | None = None) -> EagerExecutor:
    """An executor that runs `graph`'s APIs eagerly (no jit, no XLA compile of the whole API)."""
    return EagerExecutor(graph, seed, state)


__all__ = ["EagerExecutor", "lower"]
