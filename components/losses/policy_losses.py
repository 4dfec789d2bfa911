"""Policy losses as pure functions of per-sample quantities (means over all rows):

- `weighted_nll(log_probs, weights)`: -Σ_i w_i log π(p_i), fitting the policy to a reweighted
  path distribution Q (log_probs [N] are whole-path log-likelihoods Σ_t log π(a_t|s_t), or
  [N, T] per step, summed over T); weights sum to 1 over N;
- `policy_gradient(log_probs, advantages)`: -mean(log π · A), advantages held constant;
- `ppo_clipped_surrogate(log_probs, old_log_probs, advantages, epsilon)`: -mean(min(ρA,
  clip(ρ, 1 ± ε)A));
- `value_loss(values, targets, old_values=None, clip=None)`: ½ mean squared error, optionally
  PPO's clipped form.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.losses.shapes import require_same_shape


def weighted_nll(log_probs: jax.Array, weights: jax.Array) -> jax.Array:
    if log_probs.ndim == weights.ndim + 1:
        log_probs = log_probs.sum(-1)
    if log_probs.shape != weights.shape:
        raise ValueError(f"weighted_nll: log_probs {log_probs.shape} and weights "
                         f"{weights.shape} must match (per path, optionally per step)")
    return -(jax.lax.stop_gradient(weights) * log_probs).sum(-1).mean()


def policy_gradient(log_probs: jax.Array, advantages: jax.Array) -> jax.Array:
    require_same_shape("policy_gradient", log_probs=log_probs, advantages=advantages)
    return -(log_probs * jax.lax.stop_gradient(advantages)).mean()


def ppo_clipped_surrogate(log_probs: jax.Array, old_log_probs: jax.Array,
                          advantages: jax.Array, epsilon: float = 0.2) -> jax.Array:
    require_same_shape("ppo_clipped_surrogate", log_probs=log_probs,
                       old_log_probs=old_log_probs, advantages=advantages)
    ratio = jnp.exp(log_probs - jax.lax.stop_gradient(old_log_probs))
    advantages = jax.lax.stop_gradient(advantages)
    clipped = jnp.clip(ratio, 1 - epsilon, 1 + epsilon)
    return -jnp.minimum(ratio * advantages, clipped * advantages).mean()


def value_loss(values: jax.Array, targets: jax.Array, old_values: jax.Array | None = None,
               clip: float | None = None) -> jax.Array:
    require_same_shape("value_loss", values=values, targets=targets,
                       **({"old_values": old_values} if old_values is not None else {}))
    targets = jax.lax.stop_gradient(targets)
    loss = (values - targets) ** 2
    if clip is not None and old_values is not None:
        clipped = old_values + jnp.clip(values - old_values, -clip, clip)
        loss = jnp.maximum(loss, (clipped - targets) ** 2)
    return 0.5 * loss.mean()
