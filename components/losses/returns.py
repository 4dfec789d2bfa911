"""Returns and advantages over time-major sequences ([T, ...]), written as reverse scans.

- `gae(rewards, discounts, values, lambda_)`: generalised advantage estimation; `values` has
  T + 1 entries (the last bootstraps).
- `n_step_returns(rewards, discounts, bootstrap_values, n)`: G_t = r_t + d_t r_{t+1} + ... +
  d_t…d_{t+m-2} r_{t+m-1} + d_t…d_{t+m-1} v_{t+m-1} with m = min(n, T - t); bootstrap_values[t]
  is the value of the state after reward r_t.
- `discounted_returns(rewards, discounts, bootstrap)`: the full Monte-Carlo return.

`discounts` are γ·(1 - terminated) per step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.losses.shapes import require_same_shape, require_shape


def gae(rewards: jax.Array, discounts: jax.Array, values: jax.Array,
        lambda_: float = 0.95) -> jax.Array:
    require_same_shape("gae", rewards=rewards, discounts=discounts)
    require_shape("gae", "values", values, (rewards.shape[0] + 1, *rewards.shape[1:]))
    deltas = rewards + discounts * values[1:] - values[:-1]

    def back(advantage, step):
        delta, discount = step
        advantage = delta + discount * lambda_ * advantage
        return advantage, advantage

    _, advantages = jax.lax.scan(back, jnp.zeros_like(deltas[0]), (deltas, discounts),
                                 reverse=True)
    return advantages


def discounted_returns(rewards: jax.Array, discounts: jax.Array,
                       bootstrap: jax.Array | float = 0.0) -> jax.Array:
    require_same_shape("discounted_returns", rewards=rewards, discounts=discounts)

    def back(ret, step):
        reward, discount = step
        ret = reward + discount * ret
        return ret, ret

    init = jnp.broadcast_to(jnp.asarray(bootstrap, rewards.dtype), rewards.shape[1:])
    return jax.lax.scan(back, init, (rewards, discounts), reverse=True)[1]


def n_step_returns(rewards: jax.Array, discounts: jax.Array, bootstrap_values: jax.Array,
                   n: int) -> jax.Array:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n_step_returns: n must be a positive int, got {n!r}")
    require_same_shape("n_step_returns", rewards=rewards, discounts=discounts,
                       bootstrap_values=bootstrap_values)
    t_len = rewards.shape[0]
    returns = jnp.zeros_like(rewards)
    # accumulate k = 0..n-1 terms with running discount products, then the bootstrap
    scale = jnp.ones_like(rewards)
    index = jnp.arange(t_len)
    last = jnp.minimum(index + n, t_len) - 1  # the step whose value bootstraps G_t
    for k in range(n):
        src = jnp.minimum(index + k, t_len - 1)
        valid = (index + k <= last).reshape((-1,) + (1,) * (rewards.ndim - 1))
        returns = returns + jnp.where(valid, scale * rewards[src], 0.0)
        scale = jnp.where(valid, scale * discounts[src], scale)
    return returns + scale * bootstrap_values[last]
