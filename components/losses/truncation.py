"""An episode cut by the time limit, bootstrapped: its tail estimated from the value of its
final observation rather than taken as 0 (Pardo et al. 2018, "Time Limits in Reinforcement
Learning"; Stable-Baselines3's `OnPolicyAlgorithm.collect_rollouts` on `TimeLimit.truncated`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def bootstrap_truncated(reward: jax.Array, final_value: jax.Array, gamma: float) -> jax.Array:
    """Rewards with gamma * V(final observation) added where an episode was truncated
    (`final_value` is 0 elsewhere): the episode did not end, so its tail is estimated rather
    than taken as 0. The step stays a boundary for GAE, whose discount there is 0."""
    if reward.shape != final_value.shape:
        raise ValueError(f"bootstrap_truncated: reward {reward.shape} and final_value "
                         f"{final_value.shape} must have one shape")
    return reward + gamma * final_value


def truncated_values(trajectory: Any, value: Any) -> jax.Array:
    """[T, N]: `value(final observation)` where a step of `trajectory` (a `Trajectory`: its
    `truncated`, `terminated` and `final_observations`) truncated an episode that did not
    terminate, 0 elsewhere (what `bootstrap_truncated` adds)."""
    cut = trajectory.truncated & ~trajectory.terminated
    return jnp.where(cut, value(trajectory.final_observations), 0.0)
