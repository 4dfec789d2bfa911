"""Which state leaves a root API needs: those its outputs depend on, and those the state it
keeps needs, over any number of calls.

    needed = needed_leaves(graph.pure("greedy"), graph.state_spec, obs_spec)

An exported `greedy` carries only these: a policy's parameters and a preprocessor's frozen
statistics, not the optimizer's moments, a replay buffer or a target network. The answer
comes from the API's jaxpr, read backwards from the outputs: an equation with any needed
output needs all its inputs (conservative inside `scan`, `cond` and nested `jit`s, exact
elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jax.extend.core import Var


def _inputs_needed(jaxpr: Any, needed_outputs: list[bool]) -> list[bool]:
    """For each input variable of `jaxpr`, whether the outputs marked in `needed_outputs`
    depend on it."""
    live = {v for v, needed in zip(jaxpr.outvars, needed_outputs, strict=True)
            if needed and isinstance(v, Var)}
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or eqn.effects:
            live.update(v for v in eqn.invars if isinstance(v, Var))
    return [v in live for v in jaxpr.invars]


def needed_leaves(pure: Callable[..., tuple[Any, Any]], state: Any, *inputs: Any
                  ) -> list[bool]:
    """For each leaf of `state` (in `jax.tree.leaves` order), whether `pure(state, *inputs)
    -> (state', outputs)` needs it to compute its outputs, now or in later calls that start
    from the state it returns. `state` and `inputs` may be abstract (`ShapeDtypeStruct`)."""
    closed, (new_state, outputs) = jax.make_jaxpr(pure, return_shape=True)(state, *inputs)
    count = len(jax.tree.leaves(state))
    num_outputs = len(jax.tree.leaves(outputs))
    if len(jax.tree.leaves(new_state)) != count:
        raise ValueError(f"{getattr(pure, '__name__', pure)}: the state it returns has "
                         f"{len(jax.tree.leaves(new_state))} leaves, the state it takes "
                         f"{count}")
    needed = [False] * count
    while True:  # grow until the kept state needs nothing more
        wanted = needed + [True] * num_outputs
        reads = _inputs_needed(closed.jaxpr, wanted)[:count]
        grown = [a or b for a, b in zip(needed, reads, strict=True)]
        if grown == needed:
            return needed
        needed = grown
