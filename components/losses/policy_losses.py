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
    """-Σ_i w_i log π(path_i), averaged over the leading axes: `log_probs` [..., N] (or [..., N,
    T], summed over steps) and `weights` [..., N], whose gradient is stopped."""
    if log_probs.ndim == weights.ndim + 1:
        log_probs = log_probs.sum(-1)
    if log_probs.shape != weights.shape:
        raise ValueError(f"weighted_nll: log_probs {log_probs.shape} and weights "
                         f"{weights.shape} must match (per path, optionally per step)")
    return -(jax.lax.stop_gradient(weights) * log_probs).sum(-1).mean()


def policy_gradient(log_probs: jax.Array, advantages: jax.Array) -> jax.Array:
    """The REINFORCE loss -mean(log π · A), the advantages' gradient stopped; shapes must match."""
    require_same_shape("policy_gradient", log_probs=log_probs, advantages=advantages)
    return -(log_probs * jax.lax.stop_gradient(advantages)).mean()


def ppo_clipped_surrogate(log_probs: jax.Array, old_log_probs: jax.Array,
                          advantages: jax.Array, epsilon: float = 0.2) -> jax.Array:
    """PPO's clipped surrogate loss (Schulman et al. 2017): -mean(min(r A, clip(r, 1-ε, 1+ε) A))
    with r = π/π_old; shapes must match."""
    require_same_shape("ppo_clipped_surrogate", log_probs=log_probs,
                       old_log_probs=old_log_probs, advantages=advantages)
    ratio = jnp.exp(log_probs - jax.lax.stop_gradient(old_log_probs))
    advantages = jax.lax.stop_gradient(advantages)
    clipped = jnp.clip(ratio, 1 - epsilon, 1 + epsilon)
    return -jnp.minimum(ratio * advantages, clipped * advantages).mean()


def value_loss(values: jax.Array, targets: jax.Array, old_values: jax.Array | None = None,
               clip: float | None = None) -> jax.Array:
    """Half the mean squared error to `targets` (gradient stopped), with PPO's value clipping
    around `old_values` when `clip` is given."""
    require_same_shape("value_loss", values=values, targets=targets,
                       **({"old_values": old_values} if old_values is not None else {}))
    targets = jax.lax.stop_gradient(targets)
    loss = (values - targets) ** 2
    if clip is not None and old_values is not None:
        clipped = old_values + jnp.clip(values - old_values, -clip, clip)
        loss = jnp.maximum(loss, (clipped - targets) ** 2)
    return 0.5 * loss.mean()
