"""The running mean and variance of a stream of batches, as pure functions over a `Moments`
state: the parallel update of Chan, Golub and LeVeque (1979), the one Gymnasium's
`gymnasium.wrappers.utils.RunningMeanStd` (and OpenAI Baselines') uses, starting like it from
mean 0, variance 1 and a count of `epsilon` (1e-4); `normalising_settings`, the checked
`clip` and `epsilon` of a normaliser that divides by them."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Moments(NamedTuple):
    """The running statistics: `mean` and `var` (population variance) per feature, and the
    (fractional) `count` of rows seen, float32 scalars and arrays."""
    mean: jax.Array
    var: jax.Array
    count: jax.Array


def init_moments(shape: tuple[int, ...] = (), epsilon: float = 1e-4) -> Moments:
    """Moments before any data: mean 0, variance 1, count `epsilon` (Gymnasium's start)."""
    return Moments(jnp.zeros(shape, jnp.float32), jnp.ones(shape, jnp.float32),
                   jnp.asarray(epsilon, jnp.float32))


def update_moments(moments: Moments, batch: jax.Array) -> Moments:
    """The moments after also seeing the rows of `batch` [n, *shape] (n >= 1).

    Raises:
        ValueError: `batch` is not [n, *shape] for the moments' feature shape.
    """
    shape = moments.mean.shape
    if batch.ndim != len(shape) + 1 or batch.shape[1:] != shape or batch.shape[0] < 1:
        raise ValueError(f"update_moments: expected a batch [n >= 1, *{shape}], got "
                         f"{batch.shape}")
    batch = batch.astype(jnp.float32)
    n = jnp.asarray(batch.shape[0], jnp.float32)
    batch_mean, batch_var = batch.mean(0), batch.var(0)
    delta = batch_mean - moments.mean
    total = moments.count + n
    mean = moments.mean + delta * n / total
    m2 = moments.var * moments.count + batch_var * n + delta**2 * moments.count * n / total
    return Moments(mean, m2 / total, total)


def normalising_settings(owner: str, clip: float | None, epsilon: float
                         ) -> tuple[float | None, float]:
    """`(clip, float(epsilon))` of a normaliser over moments (values divided by
    sqrt(var + epsilon), then clipped to [-clip, clip]; None: unclipped).

    Raises:
        ValueError: naming `owner`: `clip` is not a number > 0 (or None), or `epsilon` not
            a number >= 0.
    """
    if clip is not None and not (isinstance(clip, (int, float)) and clip > 0):
        raise ValueError(f"{owner}: clip must be a number > 0 or None, got {clip!r}")
    if not (isinstance(epsilon, (int, float)) and epsilon >= 0):
        raise ValueError(f"{owner}: epsilon must be a number >= 0, got {epsilon!r}")
    return clip, float(epsilon)
