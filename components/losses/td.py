"""Temporal-difference losses for Q-learning, per transition ([B] rows).

- `q_learning_td(q_tm1, a_tm1, r_t, discount_t, q_t)`: r + d max_a q_t(a) - q_tm1(a_tm1);
- `double_q_learning_td(q_tm1, a_tm1, r_t, discount_t, q_t_target, q_t_online)`: the action
  chosen by the online network, evaluated by the target network (van Hasselt et al. 2016);
- `huber(x, delta)`: quadratic within ±delta, linear outside.

With n-step transitions, r_t is the discounted n-step reward sum and discount_t the product of
the n discounts (see `n_step_returns`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.losses.shapes import require_same_shape


def _take(q: jax.Array, a: jax.Array) -> jax.Array:
    return jnp.take_along_axis(q, a[..., None].astype(jnp.int32), -1)[..., 0]


def _check(where: str, q_tm1, a_tm1, r_t, discount_t, *q_next) -> None:
    require_same_shape(where, q_tm1=q_tm1, **{f"q_t_{i}": q for i, q in enumerate(q_next)})
    require_same_shape(where, a_tm1=a_tm1, r_t=r_t, discount_t=discount_t,
                       rows_of_q_tm1=q_tm1[..., 0])


def q_learning_td(q_tm1, a_tm1, r_t, discount_t, q_t) -> jax.Array:
    """The Q-learning TD error r + γ max_a q_t[a] - q_tm1[a_tm1] (target's gradient stopped), as
    rlax's `q_learning` over a batch."""
    _check("q_learning_td", q_tm1, a_tm1, r_t, discount_t, q_t)
    target = jax.lax.stop_gradient(r_t + discount_t * q_t.max(-1))
    return target - _take(q_tm1, a_tm1)


def double_q_learning_td(q_tm1, a_tm1, r_t, discount_t, q_t_target, q_t_online) -> jax.Array:
    """The double Q-learning TD error (van Hasselt et al. 2016): the next action chosen by
    `q_t_online`, valued by `q_t_target`."""
    _check("double_q_learning_td", q_tm1, a_tm1, r_t, discount_t, q_t_target, q_t_online)
    best = jnp.argmax(q_t_online, -1)
    target = jax.lax.stop_gradient(r_t + discount_t * _take(q_t_target, best))
    return target - _take(q_tm1, a_tm1)


def huber(x: jax.Array, delta: float = 1.0) -> jax.Array:
    """The Huber penalty: x²/2 inside ±`delta`, linear beyond it."""
    abs_x = jnp.abs(x)
    quadratic = jnp.minimum(abs_x, delta)
    return 0.5 * quadratic**2 + delta * (abs_x - quadratic)
