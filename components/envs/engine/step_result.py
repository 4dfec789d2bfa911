"""`StepResult`: what one step of a batch of environments gives on every functional door
(`FunctionalEnv.step`): named fields, the optional ones None unless asked for; and
`PlayoutResult`, what the in-graph door's random playouts give."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import jax


class StepResult(NamedTuple):
    """One step of environments [..., n] with same-step auto-reset (a pytree: it passes
    through `jax.jit`, `lax.scan` and `jax.vmap`).

    Attributes:
        state: the door's state after the step (the next episode's where one ended).
        obs: the observations of `state`, [..., n, *obs_shape].
        reward: float32[..., n], what the step gave (a game: the mover's reward).
        terminated: bool[..., n], the episode ended in a terminal state.
        truncated: bool[..., n], the episode reached its step limit.
        final_obs: with `final_obs=True`, the observation each step ended in, before any
            auto-reset (an ended episode's last), [..., n, *obs_shape]; else None.
        extras: with `extras=True`, the task's extra step outputs by name (its
            `extras_names`: a game's "player_to_move", "reward_player_0", ...), each
            float32[..., n], read from the state each step ended in; else None.
        legal_mask: with `legal_mask=True`, the legal actions of `state`, bool[..., n,
            num_actions]; else None.
    """

    state: Any
    obs: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_obs: jax.Array | None = None
    extras: dict[str, jax.Array] | None = None
    legal_mask: jax.Array | None = None

    def __getitem__(self, key):
        """A field by position, as a tuple's; by name (`out["terminated"]`, the release
        before, when a step gave a dict) with a DeprecationWarning: write `out.terminated`."""
        if isinstance(key, str):
            if key not in self._fields:
                raise KeyError(f"StepResult has no field {key!r}; its fields are "
                               f"{list(self._fields)}")
            warnings.warn(f"StepResult[{key!r}]: a step's result is a StepResult now, not a "
                          f"dict; write .{key}. Indexing by name stops working in the next "
                          f"release.", DeprecationWarning, stacklevel=2)
            return getattr(self, key)
        return tuple.__getitem__(self, key)


class PlayoutResult(NamedTuple):
    """Random playouts from environments [..., n] (`InGraphEnv.playout`).

    Attributes:
        returns: float32[..., n], the rewards summed along each playout.
        extras: the task's extra outputs by name, each float32[..., n], of the state each
            playout ended in (a game's outcome for every player).
        length: int32[..., n], the steps played.
    """

    returns: jax.Array
    extras: dict[str, jax.Array]
    length: jax.Array


__all__ = ["PlayoutResult", "StepResult"]
