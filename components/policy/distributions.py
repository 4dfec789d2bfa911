"""Action distributions, pure functions of their parameters (the network's output):

- `Categorical(n)` for `Discrete` actions: parameters are logits [..., n];
- `DiagGaussian(d, low, high, squash)` for `Box` actions: parameters are [..., 2d], the mean
  and log standard deviation; with `squash=True` a sample u is mapped into the bounds by
  low + (tanh(u) + 1) (high - low) / 2 and log-probabilities include that change of variables.

Each has `sample(params, key)`, `sample_and_log_prob(params, key)`, `mode(params)`,
`log_prob(params, action)`, `entropy(params)` and `kl(p, q)` (KL(p‖q)), and `num_params`.
A squashed Gaussian's `sample_and_log_prob` takes the log-probability from the Gaussian sample
before the tanh (as SAC needs it: exact where tanh saturates, and differentiable through the
reparameterised sample), not from the action.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metagraph.spaces import Box, Discrete, Space

LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0


@dataclasses.dataclass(frozen=True)
class Categorical:
    """A categorical distribution over `n` actions; its parameters are logits [..., n]."""
    n: int

    @property
    def num_params(self) -> int:
        """The number of parameters per distribution (`n` logits)."""
        return self.n

    def sample(self, logits: jax.Array, key: jax.Array) -> jax.Array:
        """An int32 action drawn from the logits."""
        return jax.random.categorical(key, logits).astype(jnp.int32)

    def sample_and_log_prob(self, logits: jax.Array, key: jax.Array
                            ) -> tuple[jax.Array, jax.Array]:
        """An action drawn from the logits and its log-probability."""
        action = self.sample(logits, key)
        return action, self.log_prob(logits, action)

    def mode(self, logits: jax.Array) -> jax.Array:
        """The most likely action (int32)."""
        return jnp.argmax(logits, -1).astype(jnp.int32)

    def log_prob(self, logits: jax.Array, action: jax.Array) -> jax.Array:
        """log π(action) under the logits."""
        logp = jax.nn.log_softmax(logits)
        return jnp.take_along_axis(logp, action[..., None].astype(jnp.int32), -1)[..., 0]

    def entropy(self, logits: jax.Array) -> jax.Array:
        """The entropy of the distribution."""
        logp = jax.nn.log_softmax(logits)
        return -(jnp.exp(logp) * logp).sum(-1)

    def kl(self, p: jax.Array, q: jax.Array) -> jax.Array:
        """KL(p‖q) between the distributions of logits `p` and `q`."""
        logp, logq = jax.nn.log_softmax(p), jax.nn.log_softmax(q)
        return (jnp.exp(logp) * (logp - logq)).sum(-1)


@dataclasses.dataclass(frozen=True)
class DiagGaussian:
    """A diagonal Gaussian over `dim` action dimensions; parameters are [..., 2 dim] (mean, log
    std); with `squash` samples are tanh-mapped into [low, high]."""
    dim: int
    low: Any = None
    high: Any = None
    squash: bool = False

    @property
    def num_params(self) -> int:
        """The number of parameters per distribution (2 `dim`: means and log standard
        deviations)."""
        return 2 * self.dim

    def split(self, params: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The mean and the log standard deviation (clipped to [-20, 2]) of `params`."""
        mean, log_std = params[..., : self.dim], params[..., self.dim:]
        return mean, jnp.clip(log_std, LOG_STD_MIN, LOG_STD_MAX)

    def _scale(self) -> tuple[jax.Array, jax.Array]:
        low, high = jnp.asarray(self.low, jnp.float32), jnp.asarray(self.high, jnp.float32)
        return (high - low) / 2, (high + low) / 2

    def _to_action(self, u: jax.Array) -> jax.Array:
        if not self.squash:
            return u
        half, mid = self._scale()
        return mid + half * jnp.tanh(u)

    def sample(self, params: jax.Array, key: jax.Array) -> jax.Array:
        """An action: a Gaussian sample, squashed into the bounds when `squash`."""
        mean, log_std = self.split(params)
        return self._to_action(mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape))

    def sample_and_log_prob(self, params: jax.Array, key: jax.Array
                            ) -> tuple[jax.Array, jax.Array]:
        """An action (reparameterised: mean + std * noise, differentiable in `params`) and
        its log-probability. Squashed, the log-probability is that of the Gaussian sample u
        minus log|d action / d u| = Σ log(half (1 - tanh(u)²)), the last term in the stable
        form 2 (log 2 - u - softplus(-2u)) (Haarnoja et al. 2018, appendix C), computed from
        u rather than recovered from the action."""
        mean, log_std = self.split(params)
        u = mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)
        if not self.squash:
            return u, self._gaussian_log_prob(params, u)
        half, _ = self._scale()
        log_det = jnp.log(half) + 2.0 * (np.log(2.0) - u - jax.nn.softplus(-2.0 * u))
        return self._to_action(u), self._gaussian_log_prob(params, u) - log_det.sum(-1)

    def mode(self, params: jax.Array) -> jax.Array:
        """The mean, squashed into the bounds when `squash`."""
        return self._to_action(self.split(params)[0])

    def _gaussian_log_prob(self, params: jax.Array, u: jax.Array) -> jax.Array:
        mean, log_std = self.split(params)
        z = (u - mean) / jnp.exp(log_std)
        return (-0.5 * z * z - log_std - 0.5 * np.log(2 * np.pi)).sum(-1)

    def log_prob(self, params: jax.Array, action: jax.Array) -> jax.Array:
        """log π(action), with the tanh change of variables when `squash`."""
        if not self.squash:
            return self._gaussian_log_prob(params, action)
        half, mid = self._scale()
        y = jnp.clip((action - mid) / half, -1 + 1e-6, 1 - 1e-6)
        u = jnp.arctanh(y)
        # d action / d u = half * (1 - tanh(u)^2)
        return self._gaussian_log_prob(params, u) - jnp.log(half * (1 - y * y)).sum(-1)

    def entropy(self, params: jax.Array) -> jax.Array:
        """Entropy of the Gaussian before squashing (the squashed one has no closed form)."""
        _, log_std = self.split(params)
        return (log_std + 0.5 * np.log(2 * np.pi * np.e)).sum(-1)

    def kl(self, p: jax.Array, q: jax.Array) -> jax.Array:
        """KL(p‖q) of the Gaussians (invariant under the squashing bijection)."""
        mp, lp = self.split(p)
        mq, lq = self.split(q)
        vp, vq = jnp.exp(2 * lp), jnp.exp(2 * lq)
        return (lq - lp + (vp + (mp - mq) ** 2) / (2 * vq) - 0.5).sum(-1)


def distribution_for(space: Space, squash: bool = True) -> Categorical | DiagGaussian:
    """The distribution of actions in `space`: Categorical for Discrete, a diagonal Gaussian
    for a one-dimensional Box (squashed into its bounds when they are finite and `squash`)."""
    if isinstance(space, Discrete):
        if space.shape != ():
            raise ValueError(f"distribution_for: a Discrete action space must be scalar, got "
                             f"shape {space.shape}")
        return Categorical(int(space.n))
    if isinstance(space, Box):
        if len(space.shape) != 1:
            raise ValueError(f"distribution_for: a Box action space must have one axis, got "
                             f"shape {space.shape}")
        low, high = np.asarray(space.low, np.float32), np.asarray(space.high, np.float32)
        bounded = bool(np.isfinite(low).all() and np.isfinite(high).all())
        return DiagGaussian(space.shape[0], tuple(np.broadcast_to(low, space.shape).tolist()),
                            tuple(np.broadcast_to(high, space.shape).tolist()), squash and bounded)
    raise TypeError(f"distribution_for: no action distribution for {type(space).__name__}; "
                    f"expected Discrete or Box")
