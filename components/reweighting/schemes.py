"""Path reweighting, as pure functions on NumPy or JAX arrays (the last axis is the N paths).

N sampled paths p_i with quality scores q_i define Q, the empirical path distribution
reweighted by q: path i has probability w_i. Against the uniform empirical distribution P̂
(1/N each) the simulation revealed D(Q‖P̂) = Σ w_i log2(N w_i) bits.

    w = weights(q, scheme="exponential", temperature=1.0)
    information_bits(w), effective_sample_size(w)

Every function follows its input: NumPy in, NumPy out; JAX in (traced or not), JAX out.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metagraph.checks import positive_int

SCHEMES = ("proportional", "exponential", "elite", "rank")


def _xp(x: Any) -> Any:
    return jnp if isinstance(x, jax.Array) else np


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, jax.core.Tracer)


def weights(q: Any, scheme: str = "exponential", temperature: float = 1.0,
            fraction: float = 0.1) -> Any:
    """Normalised weights w over the last axis (sums to 1) from quality scores q.

    - "proportional": w ∝ q; q must be finite and ≥ 0 with a positive sum;
    - "exponential": w ∝ exp(q / temperature), computed stably (max subtracted);
    - "elite": uniform over the top `fraction` of paths (at least one; ties at the cut share);
    - "rank": w ∝ rank(q), the best path N, the worst 1 (tied scores share their average
      rank).
    """
    xp = _xp(q)
    q = xp.asarray(q)
    if scheme not in SCHEMES:
        raise ValueError(f"reweighting.weights: scheme must be one of {SCHEMES}, got {scheme!r}")
    if q.ndim < 1 or q.shape[-1] < 1:
        raise ValueError(f"reweighting.weights: q must have at least one path on its last axis, "
                         f"got shape {q.shape}")
    if not xp.issubdtype(q.dtype, xp.floating):
        q = q.astype(xp.float32)
    if _is_concrete(q) and not bool(xp.all(xp.isfinite(q))):
        raise ValueError(f"reweighting.weights({scheme}): q must be finite, got NaN or inf")
    n = q.shape[-1]
    if scheme == "proportional":
        if _is_concrete(q) and (bool(xp.any(q < 0)) or bool(xp.any(q.sum(-1) <= 0))):
            raise ValueError("reweighting.weights(proportional): q must be ≥ 0 with a positive "
                             "sum over the paths")
        return q / q.sum(-1, keepdims=True)
    if scheme == "exponential":
        if not temperature > 0:
            raise ValueError(f"reweighting.weights(exponential): temperature must be > 0, got "
                             f"{temperature}")
        z = (q - q.max(-1, keepdims=True)) / temperature
        e = xp.exp(z)
        return e / e.sum(-1, keepdims=True)
    if scheme == "elite":
        if not 0 < fraction <= 1:
            raise ValueError(f"reweighting.weights(elite): fraction must be in (0, 1], got "
                             f"{fraction}")
        k = max(1, int(np.ceil(fraction * n)))
        cut = xp.sort(q, axis=-1)[..., n - k: n - k + 1]  # the k-th best score
        chosen = (q >= cut).astype(q.dtype)
        return chosen / chosen.sum(-1, keepdims=True)
    # average ranks, 1 = worst (ties share: all-equal scores give uniform weights)
    below = (q[..., None, :] < q[..., :, None]).sum(-1)
    tied = (q[..., None, :] == q[..., :, None]).sum(-1)
    score = (below + (tied + 1) / 2).astype(q.dtype)
    return score / score.sum(-1, keepdims=True)


def _check_weights(where: str, w: Any) -> None:
    if _is_concrete(w) and not bool(_xp(w).all((w >= 0) & _xp(w).isfinite(w))):
        raise ValueError(f"reweighting.{where}: weights must be finite and >= 0")


def information_bits(w: Any) -> Any:
    """D(Q‖P̂) = Σ w_i log2(N w_i) in bits: 0 for uniform weights, log2 N for one path."""
    xp = _xp(w)
    w = xp.asarray(w)
    _check_weights("information_bits", w)
    n = w.shape[-1]
    terms = xp.where(w > 0, w * xp.log2(xp.where(w > 0, n * w, 1.0)), 0.0)
    return terms.sum(-1)


def effective_sample_size(w: Any) -> Any:
    """Kish's effective sample size 1 / Σ w_i² (N for uniform weights, 1 for one path)."""
    xp = _xp(w)
    w = xp.asarray(w)
    _check_weights("effective_sample_size", w)
    return 1.0 / (w * w).sum(-1)


def information_per_step(w: Any, step_log_ratios: Any) -> Any:
    """The decomposition of the information over time steps.

    With Q(p) = Σ_t log Q(a_t|s_t) and the policy P factorised the same way, D(Q‖P) =
    Σ_t E_Q[log2 Q_t - log2 P_t]. Given, per path and step, the log2-ratio between the
    reweighted and the sampling policy's step probabilities (`step_log_ratios`, [..., N, T]),
    returns the per-step terms E_Q[·] over paths, [..., T]; they sum to the total.
    """
    xp = _xp(w)
    return (xp.asarray(w)[..., None] * xp.asarray(step_log_ratios)).sum(-2)


def resample(key: Any, w: Any, num_samples: int | None = None,
             method: str = "systematic") -> jax.Array:
    """Path indices drawn ∝ w (last axis): "systematic" (one uniform offset, low variance) or
    "multinomial" (independent draws)."""
    w = jnp.asarray(w)
    n = w.shape[-1]
    m = n if num_samples is None else num_samples
    m = positive_int(m, "reweighting.resample: num_samples")
    if method == "multinomial":
        draws = jax.random.categorical(key, jnp.log(w), axis=-1, shape=(m,) + w.shape[:-1])
        return jnp.moveaxis(draws, 0, -1)
    if method != "systematic":
        raise ValueError(f"reweighting.resample: method must be 'systematic' or 'multinomial', "
                         f"got {method!r}")
    u = (jax.random.uniform(key, w.shape[:-1] + (1,)) + jnp.arange(m)) / m
    cumulative = jnp.cumsum(w, axis=-1)
    cumulative = cumulative / cumulative[..., -1:]
    index = jax.vmap(jnp.searchsorted)(cumulative.reshape(-1, n), u.reshape(-1, m))
    return jnp.minimum(index.reshape(w.shape[:-1] + (m,)), n - 1)
