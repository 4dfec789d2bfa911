"""Refusing bad actions the same way on every door: a discrete action outside [0, n), or a
continuous action that is NaN or infinite, fails the step with the native core's own message
(`native/batch.h`, `check_actions`):

    CartPole-v1: action 7 at index 1 is outside [0, 2)
    Pendulum-v1: action at index 3 is not finite (NaN or inf)

The native door's C++ checks inside the FFI call; the pure-JAX twin and the host doors call
`refuse_bad_actions`, which fails the compiled call from a host callback that runs only when an
action is bad (a `lax.cond` on one reduction per step), so good actions cost no host round trip.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.specs import EnvSpec
from metagraph import context


def action_error(env_spec: EnvSpec, actions: np.ndarray) -> str | None:
    """The message for the first bad action of `actions` ([..., n] discrete, [..., n, *shape]
    continuous; the index counts within the last group of n environments), or None."""
    actions = np.asarray(actions)
    if env_spec.discrete:
        n = int(env_spec.action_space.n)
        rows = actions.reshape(-1, actions.shape[-1] if actions.ndim else 1)
        bad = (rows < 0) | (rows >= n)
        if bad.any():
            row, index = np.argwhere(bad)[0]
            return (f"{env_spec.env_id}: action {int(rows[row, index])} at index {int(index)} "
                    f"is outside [0, {n})")
        return None
    # one row of the environments' flags per group: [..., n, *action_shape] -> [groups, n]
    per_env = actions.ndim - len(env_spec.action_space.shape)
    bad = ~np.isfinite(actions).reshape(actions.shape[:per_env] + (-1,)).all(-1)
    bad = bad.reshape(-1, bad.shape[-1] if bad.ndim else 1)
    if bad.any():
        return (f"{env_spec.env_id}: action at index {int(np.argwhere(bad)[0][1])} is not finite "
                f"(NaN or inf)")
    return None


def actions_ok(env_spec: EnvSpec, action: jax.Array) -> jax.Array:
    """A scalar bool: every action is inside the action space (traced)."""
    if env_spec.discrete:
        return jnp.all((action >= 0) & (action < env_spec.action_space.n))
    return jnp.all(jnp.isfinite(action))


def refuse_bad_actions(env_spec: EnvSpec, action: jax.Array) -> None:
    """Inside a traced step: fail the call with `action_error`'s message when an action is bad.
    Nothing is checked while a graph's state is created (placeholder actions)."""
    if context.initializing():
        return

    def fail(action):
        message = action_error(env_spec, action)
        if message is not None:  # under vmap the cond is a select: both branches run
            raise ValueError(message)

    jax.lax.cond(actions_ok(env_spec, action), lambda a: None,
                 lambda a: jax.debug.callback(fail, a), action)
