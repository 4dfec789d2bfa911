"""`ObservationNormaliser`: observations to zero mean and unit variance from the running
moments of every observation its `update` has seen, then clipped to [-clip, clip]
(Gymnasium's `NormalizeObservation` followed by `TransformObservation(np.clip)`, as CleanRL's
and rl-baselines3-zoo's continuous-control PPO use them). An agent's `preprocessor=`: the
agent calls `update(obs)` on rollout observations only (`components.agents.preprocessing`)."""

from __future__ import annotations

import jax.numpy as jnp

import metagraph as mg
from components.preprocessing.running_moments import (
    Moments,
    init_moments,
    normalising_settings,
    update_moments,
)


class ObservationNormaliser(mg.Component):
    """(obs - mean) / sqrt(var + epsilon), clipped to [-clip, clip], over the last axis.

    Its state is the running `mean`, `var` and `count` (`running_moments`), created from the
    observations' last axis on the first call. Both APIs are polymorphic over leading axes.

    Args:
        clip: The bound of the normalised observations (None: no clipping).
        epsilon: Added to the variance before its square root (Gymnasium's 1e-8).
        name: The scope name.

    Raises:
        ValueError: `clip` is not a number > 0 (or None), or `epsilon` not >= 0.
    """

    def __init__(self, clip: float | None = 10.0, epsilon: float = 1e-8,
                 name: str | None = None):
        super().__init__(name)
        self.clip, self.epsilon = normalising_settings("ObservationNormaliser", clip, epsilon)

    def _moments(self, obs) -> Moments:
        start = init_moments(obs.shape[-1:])
        return Moments(*(self.get_state(field, value)
                         for field, value in zip(Moments._fields, start, strict=True)))

    @mg.api(polymorphic=True)
    def update(self, obs):
        """Add every row of `obs` [..., d] to the running moments; returns the new count."""
        moments = update_moments(self._moments(obs), obs.reshape(-1, obs.shape[-1]))
        for field, value in zip(Moments._fields, moments, strict=True):
            self.set_state(field, value)
        return moments.count

    @mg.api(polymorphic=True)
    def moments(self, obs):
        """The current running moments, {"mean", "var", "count"} (for observations like `obs`
        [..., d]: what they start from before any `update`)."""
        return self._moments(obs)._asdict()

    @mg.api(polymorphic=True)
    def forward(self, obs):
        """`obs` [..., d] normalised with the current moments (and clipped)."""
        moments = self._moments(obs)
        out = (obs - moments.mean) / jnp.sqrt(moments.var + self.epsilon)
        return out if self.clip is None else jnp.clip(out, -self.clip, self.clip)
