"""Exploration on the games: a uniformly random legal move in place of the chosen one."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.policy.masked_policy import ILLEGAL_LOGIT


def explore_legal(key: jax.Array, action: jax.Array, legal: jax.Array, probability: float
                  ) -> jax.Array:
    """`action` [N] with each entry replaced, with probability `probability` (independently),
    by a uniformly random legal move of its row of `legal` [N, num_actions] (bool).

    Raises:
        ValueError: `legal` is not bool of `action`'s shape plus the actions, or
            `probability` is not in [0, 1].
    """
    if legal.dtype != jnp.bool_ or legal.shape[:-1] != action.shape or legal.ndim < 1:
        raise ValueError(f"explore_legal: legal must be bool [*action.shape, num_actions] = "
                         f"[{', '.join(map(str, action.shape))}, A], got {legal.dtype} "
                         f"{list(legal.shape)}")
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"explore_legal: probability must be in [0, 1], got {probability!r}")
    pick_key, move_key = jax.random.split(key)
    random_move = jax.random.categorical(move_key, jnp.where(legal, 0.0, ILLEGAL_LOGIT))
    explored = jax.random.uniform(pick_key, action.shape) < probability
    return jnp.where(explored, random_move.astype(action.dtype), action)
