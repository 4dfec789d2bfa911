"""`cond`: `jax.lax.cond` whose branches may call APIs that read and write component state.

    stats = mg.cond(index < count, self._iteration, None, key)   # runs, or is skipped

Both branches start from the state as it is; the branch taken decides the state afterwards.
`false_fn=None` is a skip: the state stays as it was and the outputs are zeros shaped like the
true branch's. Only the branch taken runs (XLA's conditional), so a skipped iteration costs
nothing. While state is being created (mg.build, init_state) both branches run once, outside
any cond, so that each creates the variables it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from metagraph import context
from metagraph.errors import MetaGraphError
from metagraph.loops import copy_state, run_on_state


def cond(pred: Any, true_fn: Callable, false_fn: Callable | None, *operands: Any) -> Any:
    """`jax.lax.cond` whose branches may call APIs that read and write component state.

    Args:
        pred: A boolean scalar: which branch runs.
        true_fn: Called with `*operands` when `pred` is true.
        false_fn: Called with `*operands` when `pred` is false; None skips (the state stays, the
            outputs are zeros shaped like `true_fn`'s).
        *operands: The branches' arguments.

    Returns:
        The outputs of the branch taken.

    Raises:
        MetaGraphError: Called outside an API of a graph being built or run.
    """
    frame = context.current()
    if frame is None:
        raise MetaGraphError("mg.cond called outside a graph: use it inside an API")
    if frame.mode == context.INIT:
        if false_fn is not None:
            false_fn(*operands)
        return true_fn(*operands)
    shapes: list = []  # the true branch's outputs, for a skip

    def taken(state: dict, ops: tuple) -> tuple[dict, Any]:
        new_state, out = run_on_state(frame, state, true_fn, "mg.cond", *ops)
        shapes.append(jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x),
                                                                  jnp.result_type(x)), out))
        return new_state, out

    def not_taken(state: dict, ops: tuple) -> tuple[dict, Any]:
        if false_fn is not None:
            return run_on_state(frame, state, false_fn, "mg.cond", *ops)
        if not shapes:  # lax.cond traced this branch first
            jax.eval_shape(taken, state, ops)
        return state, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes[-1])

    try:
        state, out = jax.lax.cond(pred, taken, not_taken, copy_state(frame.state), operands)
    except TypeError as error:
        if "true_fun" not in str(error):
            raise
        raise MetaGraphError(f"mg.cond: both branches must return outputs of the same "
                             f"structure, shapes and dtypes ({error})") from None
    if frame.mode == context.APPLY:
        frame.state = state
    return out
