"""Quality scores q(p) of whole paths, batched over N paths of T steps ([N, T, ...] with a
mask [N, T] of the steps inside each path). Any function of a path will do; these are the
common ones.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp


def path_return(rewards: jax.Array, mask: jax.Array, gamma: float = 1.0) -> jax.Array:
    """Σ_t γ^t r_t over the steps of each path."""
    discounts = gamma ** jnp.arange(rewards.shape[-1], dtype=jnp.float32)
    return (rewards * mask * discounts).sum(-1)


def max_over_path(values: jax.Array, mask: jax.Array) -> jax.Array:
    """The largest value reached along each path (e.g. MountainCar's height)."""
    return jnp.where(mask > 0, values, -jnp.inf).max(-1)


def final_value(values: jax.Array, mask: jax.Array) -> jax.Array:
    """The value at each path's last step (e.g. a final state's coordinate)."""
    last = jnp.maximum(mask.sum(-1).astype(jnp.int32) - 1, 0)
    return jnp.take_along_axis(values, last[..., None], -1)[..., 0]


def success(flags: jax.Array, mask: jax.Array) -> jax.Array:
    """1.0 for paths where the flag (e.g. terminated at a goal) is ever set, else 0.0."""
    return (flags.astype(bool) & (mask > 0)).any(-1).astype(jnp.float32)


def game_outcome(rewards: jax.Array, mask: jax.Array, side: jax.Array,
                 movers: jax.Array | None = None) -> jax.Array:
    """A two-player zero-sum game's outcome for player `side` [N], from paths of [N, T]
    plies where `movers` [N, T] is the player who made each ply (as the task reported it:
    `Trajectory.movers`; a player may move twice in a row) and its reward is the mover's
    (+1 win, -1 loss, 0 draw or not over): each ply's reward counts for `side` when `side`
    moved, negated when the opponent did. Without `movers` the players are taken to
    alternate from player 0 (ply t is player t % 2's; a DeprecationWarning: pass them)."""
    if movers is None:
        warnings.warn("game_outcome without movers takes ply t as player t % 2's; pass movers "
                      "(Trajectory.movers) so that a game where a player moves again is "
                      "scored right. It becomes required in the next release.",
                      DeprecationWarning, stacklevel=2)
        movers = jnp.broadcast_to(jnp.arange(rewards.shape[-1]) % 2, rewards.shape)
    if movers.shape != rewards.shape:
        raise ValueError(f"game_outcome: movers must have the rewards' shape {rewards.shape} "
                         f"(the player who made each ply), got {movers.shape}")
    sign = jnp.where(movers == side[..., None], 1.0, -1.0)
    return (rewards * mask * sign).sum(-1)


def quick_outcome(outcome: jax.Array, plies: jax.Array, horizon: int,
                  bonus: float = 0.5) -> jax.Array:
    """A game's outcome (+1, 0, -1) ranked within wins and within losses by the game's
    length: a win in p of at most `horizon` plies scores 1 + bonus (1 - p / horizon) (quick
    wins first), a loss -(1 + bonus (1 - p / horizon)) (long resistance first), a draw 0."""
    return outcome * (1.0 + bonus * (1.0 - plies / horizon))


def margin_outcome(outcome: jax.Array, margin: jax.Array, cells: int, bonus: float = 0.5
                   ) -> jax.Array:
    """A game's outcome (+1, 0, -1) ranked within wins and within losses by the final stone
    margin for the player (own stones minus the opponent's on a board of `cells`: Othello's
    disc margin): outcome + bonus · margin / cells for a win or a loss, a draw 0."""
    return jnp.where(outcome != 0, outcome + bonus * margin / cells, 0.0)
