"""`RewardNormaliser`: rewards divided by the running standard deviation of each
environment's discounted return, then clipped (Gymnasium's vector `NormalizeReward`, as
CleanRL's continuous-control PPO uses it with `TransformReward(np.clip)`). The mean is not
subtracted (see openai/baselines#538)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import metagraph as mg
from components.preprocessing.running_moments import (
    Moments,
    init_moments,
    normalising_settings,
    update_moments,
)


class RewardNormaliser(mg.Component):
    """Step by step over a trajectory [T, N] of N environments: the discounted return
    G <- gamma * G * (1 - done) + r, its running moments updated with the N returns, the
    reward divided by sqrt(var + epsilon), clipped to [-clip, clip], and G reset to 0 where
    the episode ended. This is Gymnasium's vector `NormalizeReward` over environments that
    reset in the step that ends an episode (`AutoresetMode.SAME_STEP`, as the native ones do)
    with `done` as its `terminated`: an agent passes terminated | truncated, so a truncated
    episode's last return is not discounted into the next (Gymnasium differs only there: it
    still adds the truncating step's reward to the discounted G before resetting it).

    Its state: the per-environment return `G` [N] and the moments of the returns, created on
    the first call.

    Args:
        gamma: The discount of the return whose scale is tracked (the agent's).
        clip: The bound of the scaled rewards (None: no clipping).
        epsilon: Added to the variance before its square root (Gymnasium's 1e-8).
        name: The scope name.

    Raises:
        ValueError: `gamma` outside [0, 1], `clip` not > 0 (or None), `epsilon` < 0.
    """

    def __init__(self, gamma: float = 0.99, clip: float | None = 10.0, epsilon: float = 1e-8,
                 name: str | None = None):
        super().__init__(name)
        if not (isinstance(gamma, (int, float)) and 0 <= gamma <= 1):
            raise ValueError(f"RewardNormaliser: gamma must be a number in [0, 1], got "
                             f"{gamma!r}")
        self.gamma = float(gamma)
        self.clip, self.epsilon = normalising_settings("RewardNormaliser", clip, epsilon)

    @mg.api
    def scale(self, reward, done):
        """The scaled rewards of a trajectory of `reward` [T, N] (float) and `done` [T, N]
        (bool: the step ended the episode), updating the state step by step; or of one step,
        [N] (without the loop: what a wrapper calls at every step)."""
        if reward.ndim not in (1, 2) or done.shape != reward.shape:
            raise ValueError(f"{self.scope}.scale: expected reward and done [T, N] or [N] of "
                             f"one shape, got {reward.shape} and {done.shape}")
        xs = (reward.astype(jnp.float32), done)
        if reward.ndim == 1:
            return self._kept(*self._step(self._carry(reward.shape[0]), xs))
        return self._kept(*jax.lax.scan(self._step, self._carry(reward.shape[1]), xs))

    def _carry(self, n: int) -> tuple[jax.Array, Moments]:
        start = init_moments()
        moments = Moments(*(self.get_state(field, value)
                            for field, value in zip(Moments._fields, start, strict=True)))
        return self.get_state("return", jnp.zeros((n,), jnp.float32)), moments

    def _step(self, carry, xs):
        returns, moments = carry
        r, d = xs
        returns = returns * self.gamma * (1.0 - d.astype(jnp.float32)) + r
        moments = update_moments(moments, returns)
        scaled = r / jnp.sqrt(moments.var + self.epsilon)
        return (jnp.where(d, 0.0, returns), moments), scaled

    def _kept(self, carry, scaled):
        """`scaled` clipped, the returns and moments of `carry` kept as the state."""
        returns, moments = carry
        self.set_state("return", returns)
        for field, value in zip(Moments._fields, moments, strict=True):
            self.set_state(field, value)
        return scaled if self.clip is None else jnp.clip(scaled, -self.clip, self.clip)
