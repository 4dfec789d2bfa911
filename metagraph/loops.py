"""`scan`: `jax.lax.scan` whose body may call APIs that read and write component state.

    def body(carry, batch):
        stats = self.optimizer.step(batch)        # writes the optimizer's and policy's state
        return carry, stats["loss"]

    _, losses = mg.scan(body, None, minibatches)  # K gradient steps in one executable

The whole state of the graph is part of the loop carry: each iteration sees the writes of the
one before, and the API sees the writes of the last iteration afterwards. While state is
being created (mg.build, init_state), the body runs once, outside any loop, on the first slice
of `xs`: that creates every variable, and the outputs are placeholders of the right shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from metagraph import context
from metagraph.errors import MetaGraphError, StateError


def copy_state(state: dict) -> dict:
    """A copy of a graph state two levels deep (scopes and their variables), the arrays shared."""
    return {scope: dict(variables) for scope, variables in state.items()}


def run_on_state(frame: context.Frame, state: dict, fn: Callable, what: str, *args: Any
                 ) -> tuple[dict, Any]:
    """(state after, output) of `fn(*args)` run on `state` (inside a control-flow primitive's
    trace), leaving the frame's own state as it was."""
    outer = frame.state
    frame.state = copy_state(state)
    try:
        out = fn(*args)
        new_state = frame.state
    finally:
        frame.state = outer
    if jax.tree.structure(new_state) != jax.tree.structure(state):
        raise StateError(f"{what}: the body created state; create it before (call the API "
                         f"once outside it)")
    return new_state, out


def scan(body: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None) -> tuple[Any, Any]:
    """`jax.lax.scan` whose body may call APIs that read and write component state.

    Args:
        body: `(carry, x) -> (carry, y)`, as for `lax.scan`; it may call APIs.
        init: The initial carry.
        xs: What is scanned over (leading axis), or None with `length`.
        length: The number of iterations when `xs` is None.

    Returns:
        `(carry, ys)`: the final carry and the stacked outputs, as `lax.scan` returns them.

    Raises:
        MetaGraphError: Called outside an API of a graph being built or run.
        StateError: The body creates state that was not created before the loop.
    """
    frame = context.current()
    if frame is None:
        raise MetaGraphError("mg.scan called outside a graph: use it inside an API")
    if frame.mode == context.INIT:
        # Create the state the body reads and writes by running it once. While state is
        # created only shapes matter (writes are not kept, outputs are placeholders), so the
        # loop itself is not traced: that keeps init programs small and quick to compile.
        first = None if xs is None else jax.tree.map(lambda x: x[0], xs)
        carry, y = body(init, first)
        if frame.recorder is not None:  # the next iteration consumes this one's carry
            frame.recorder.carried(init, carry)
        steps = length if xs is None else jax.tree.leaves(xs)[0].shape[0]
        return carry, jax.tree.map(lambda v: jnp.zeros((steps, *jnp.shape(v)),
                                                       jnp.result_type(v)), y)

    def step(carry, x):
        state, inner = carry
        new_state, (inner, y) = run_on_state(frame, state, body, "mg.scan", inner, x)
        return (new_state, inner), y

    (state, carry), ys = jax.lax.scan(step, (copy_state(frame.state), init), xs, length)
    if frame.mode == context.APPLY:
        frame.state = state
    return carry, ys
