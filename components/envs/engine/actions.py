"""Actions, checked the same way on every door.

Values: a discrete action outside [0, n), or a continuous action that is NaN or infinite,
fails the step with the engine's own message (`engine/batch.h`, `action_problem`):

    CartPole-v1: action 7 at index 1 is outside [0, 2)
    Pendulum-v1: action at index 3 is not finite (NaN or inf)

The native doors check inside the C++ step (in its threaded pass) before any environment
moves; the pure-JAX twin and the host doors call `action_error` (from a host callback that runs
only when `actions_ok` is false, so good actions cost no host round trip).

Dtypes (one rule for every door): discrete actions are int32, continuous ones float32; a dtype
that converts exactly (int8, int16, uint8, uint16; float16, bfloat16) is cast. On the host,
where the values are seen before any cast, wider dtypes are accepted too when every value
converts: any integer dtype whose values are in [0, n), float64 within float32's range (rounded
as Gymnasium's own float32 environments round it). Anything else is a TypeError or ValueError
saying what was expected; nothing is cast silently.

The host pool applies this rule itself, in its C++ threads, to C-contiguous aligned arrays of
any integer dtype or float64 (`engine/given_actions.h`, the same messages); `host_actions` is
the door for every other array (strided, misaligned, float16, lists, scalars).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.spec import EnvSpec
from metagraph import context

EXACT_INTEGERS = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16))
FLOAT32_MAX = float(np.finfo(np.float32).max)


def exact_float(dtype: Any) -> bool:
    """Whether `dtype` converts to float32 exactly (float16, bfloat16, float32)."""
    return np.dtype(dtype).name in ("float16", "bfloat16", "float32")


def expected(spec: EnvSpec, batch: tuple[int, ...]) -> str:
    """How the actions of `batch` environments should look, for messages."""
    return f"{spec.action_dtype.name}{list(batch + spec.action_shape)}"


def host_actions(spec: EnvSpec, actions: Any, num_envs: int) -> np.ndarray:
    """`actions` as the aligned C-contiguous array the C++ pool reads (a copy where it is not
    one), or a TypeError/ValueError saying what was expected (see the module docstring)."""
    shape = (num_envs, *spec.action_shape)
    arr = np.asarray(actions)
    if arr.dtype == object or (arr.dtype.kind not in "iuf" and not exact_float(arr.dtype)):
        raise TypeError(f"{spec.env_id}: actions must be a numeric array "
                        f"{expected(spec, (num_envs,))}, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{spec.env_id}: expected actions of shape {shape}, got {arr.shape}")
    if spec.discrete:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{spec.env_id}: discrete actions must be integers, got {arr.dtype}")
        if arr.dtype not in EXACT_INTEGERS and arr.size:
            message = action_error(spec, arr)  # before the cast: 2**32 is not 0
            if message is not None:
                raise ValueError(message)
        return np.require(arr, np.int32, "CA")
    if arr.dtype.kind in "iu":
        raise TypeError(f"{spec.env_id}: continuous actions must be floating point, got "
                        f"{arr.dtype}")
    if not exact_float(arr.dtype) and arr.size:
        big = np.isfinite(arr) & (np.abs(arr) > FLOAT32_MAX)
        if big.any():
            index = np.argwhere(big)[0]
            raise ValueError(f"{spec.env_id}: action at index {int(index[0])} is "
                             f"{float(arr[tuple(index)])!r}, outside float32's range")
    return np.require(arr, np.float32, "CA")


def action_error(spec: EnvSpec, actions: Any) -> str | None:
    """The message for the first bad action of `actions` ([..., n] discrete, [..., n, *shape]
    continuous; the index counts within the last group of n environments), or None."""
    actions = np.asarray(actions)
    if spec.discrete:
        n = int(spec.action_space.n)
        rows = actions.reshape(-1, actions.shape[-1] if actions.ndim else 1)
        bad = (rows < 0) | (rows >= n)
        if bad.any():
            row, index = np.argwhere(bad)[0]
            return (f"{spec.env_id}: action {int(rows[row, index])} at index {int(index)} "
                    f"is outside [0, {n})")
        return None
    per_env = actions.ndim - len(spec.action_shape)
    bad = ~np.isfinite(actions.astype(np.float64)).reshape(actions.shape[:per_env] + (-1,)).all(-1)
    bad = bad.reshape(-1, bad.shape[-1] if bad.ndim else 1)
    if bad.any():
        return (f"{spec.env_id}: action at index {int(np.argwhere(bad)[0][1])} is not finite "
                f"(NaN or inf)")
    return None


MUST_OFFER_A_MOVE = "a game that goes on must offer a move, a pass if nothing else (task.h)"
"""Why a state without a legal action that is not a game's end is the task's error."""


def step_error(spec: EnvSpec, actions: Any, legal: Any = None) -> str | None:
    """`action_error`'s message, else, given the legal actions of the environments' states
    (`legal`, bool [..., n, num_actions]), the engine's message for the first action that is
    not legal in its state; None when every action may be taken."""
    message = action_error(spec, actions)
    if message is not None or legal is None:
        return message
    actions, legal = np.asarray(actions), np.asarray(legal)
    rows = actions.reshape(-1, actions.shape[-1] if actions.ndim else 1)
    masks = legal.reshape((-1,) + legal.shape[-2:])
    taken = np.take_along_axis(masks, rows[..., None].astype(np.int64), -1)[..., 0]
    if taken.all():
        return None
    row, index = np.argwhere(~taken)[0]
    none = "" if masks[row, index].any() else (f", which offers no legal action at all though "
                                               f"it is not an end: {MUST_OFFER_A_MOVE}")
    return (f"{spec.env_id}: action {int(rows[row, index])} at index {int(index)} is not legal "
            f"in its state{none}")


def legal_ok(action: jax.Array, legal: jax.Array) -> jax.Array:
    """A scalar bool: every action (in range) is legal in its state, `legal` bool [..., n,
    num_actions] (traced)."""
    index = jnp.clip(action, 0, legal.shape[-1] - 1)[..., None]
    return jnp.all(jnp.take_along_axis(legal, index, -1))


def traced_actions(spec: EnvSpec, action: Any, batch: tuple[int, ...], where: str) -> jax.Array:
    """Inside a traced step: `action` of `batch` environments as int32 / float32 (exact
    conversions only), or a TypeError naming what was expected."""
    action = jnp.asarray(action)
    want = batch + spec.action_shape
    dtype = np.dtype(action.dtype)
    ok_dtype = (dtype in EXACT_INTEGERS) if spec.discrete else exact_float(dtype)
    if action.shape != want or not ok_dtype:
        raise TypeError(f"{where}: expected actions {expected(spec, batch)}, got "
                        f"{action.dtype}{list(action.shape)} (a dtype that converts exactly is "
                        f"cast)")
    return action.astype(spec.action_dtype)


def actions_ok(spec: EnvSpec, action: jax.Array) -> jax.Array:
    """A scalar bool: every action is inside the action space (traced)."""
    if spec.discrete:
        return jnp.all((action >= 0) & (action < spec.action_space.n))
    return jnp.all(jnp.isfinite(action))


def refuse_bad_actions(spec: EnvSpec, action: jax.Array) -> None:
    """Inside a traced step: fail the call with `action_error`'s message when an action is bad.
    Nothing is checked while a graph's state is created (placeholder actions)."""
    if context.initializing():
        return

    def fail(action):
        message = action_error(spec, action)
        if message is not None:  # under vmap the cond is a select: both branches run
            raise ValueError(message)

    jax.lax.cond(actions_ok(spec, action), lambda a: None,
                 lambda a: jax.debug.callback(fail, a), action)
