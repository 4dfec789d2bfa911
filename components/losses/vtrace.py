"""V-trace targets and policy-gradient advantages (Espeholt et al. 2018, IMPALA), time-major.

    vs, pg_advantages = vtrace(values, bootstrap_value, rewards, discounts, log_rhos)

values [T, ...] are V(x_t) under the learner; bootstrap_value [...] is V(x_T); log_rhos are
log π(a_t|x_t) - log μ(a_t|x_t). ρ̄ (clip_rho) bounds the importance weights of the targets,
c̄ (clip_c) the traces, and clip_pg_rho those of the policy-gradient advantage.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.losses.shapes import require_same_shape, require_shape


def vtrace(values: jax.Array, bootstrap_value: jax.Array, rewards: jax.Array,
           discounts: jax.Array, log_rhos: jax.Array, clip_rho: float = 1.0,
           clip_c: float = 1.0, clip_pg_rho: float = 1.0, lambda_: float = 1.0
           ) -> tuple[jax.Array, jax.Array]:
    """V-trace targets and policy-gradient advantages (Espeholt et al. 2018, IMPALA), time-
    major.

    Args:
        values: V(x_t) [T, B].
        bootstrap_value: V(x_T) [B].
        rewards: r_t [T, B].
        discounts: γ (0 after termination) [T, B].
        log_rhos: log π(a_t|x_t) - log μ(a_t|x_t) [T, B].
        clip_rho: rho-bar, the clip of the importance weights in the targets.
        clip_c: c-bar, the clip of the trace coefficients.
        clip_pg_rho: The clip of the importance weights in the advantages.
        lambda_: Mixes in TD(lambda) style trace cutting (1: plain V-trace).

    Returns:
        `(vs, advantages)`, both [T, B] with their gradients stopped.

    Raises:
        ValueError: The shapes do not match.
    """
    require_same_shape("vtrace", values=values, rewards=rewards, discounts=discounts,
                       log_rhos=log_rhos)
    require_shape("vtrace", "bootstrap_value", bootstrap_value, values.shape[1:])
    rhos = jnp.exp(log_rhos)
    clipped_rhos = jnp.minimum(clip_rho, rhos)
    cs = lambda_ * jnp.minimum(clip_c, rhos)
    values_next = jnp.concatenate([values[1:], bootstrap_value[None]], 0)
    deltas = clipped_rhos * (rewards + discounts * values_next - values)

    def back(acc, step):
        delta, discount, c = step
        acc = delta + discount * c * acc
        return acc, acc

    _, corrections = jax.lax.scan(back, jnp.zeros_like(bootstrap_value), (deltas, discounts, cs),
                                  reverse=True)
    vs = jax.lax.stop_gradient(values + corrections)
    vs_next = jnp.concatenate([vs[1:], bootstrap_value[None]], 0)
    pg_advantages = jnp.minimum(clip_pg_rho, rhos) * (rewards + discounts * vs_next - values)
    return vs, jax.lax.stop_gradient(pg_advantages)
