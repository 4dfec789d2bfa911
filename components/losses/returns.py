"""Returns and advantages over time-major sequences ([T, ...]), written as reverse scans.

- `gae(rewards, discounts, values, lambda_)`: generalised advantage estimation; `values` has
  T + 1 entries (the last bootstraps).
- `n_step_returns(rewards, discounts, bootstrap_values, n)`: G_t = r_t + d_t r_{t+1} + ... +
  d_t…d_{t+m-2} r_{t+m-1} + d_t…d_{t+m-1} v_{t+m-1} with m = min(n, T - t); bootstrap_values[t]
  is the value of the state after reward r_t.
- `n_step_terms(rewards, discounts, n)`: the same return in pieces (the reward sum, the
  discount product and the step whose next state bootstraps), what an n-step transition for
  a replay holds (DQN).
- `discounted_returns(rewards, discounts, bootstrap)`: the full Monte-Carlo return.
- `game_outcomes(rewards, terminated)`: each position's outcome for its mover in two-player
  games (AlphaZero's value target), and whether its game ended within the sequence.

`discounts` are γ·(1 - terminated) per step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from components.losses.shapes import require_same_shape, require_shape
from metagraph.checks import positive_int


def gae(rewards: jax.Array, discounts: jax.Array, values: jax.Array,
        lambda_: float = 0.95) -> jax.Array:
    """Generalised advantage estimates over [T, ...] (Schulman et al. 2016); `values` has
    T + 1 entries, the last bootstraps."""
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


def negamax_gae(rewards: jax.Array, done: jax.Array, values: jax.Array, gamma: float,
                lambda_: float = 0.95) -> jax.Array:
    """GAE for a two-player zero-sum game whose players alternate strictly, one policy and one
    value function playing both sides, each step from the view of its mover: `rewards` [T,
    ...] the mover's reward, `done` [T, ...] whether the step ended a game, `values` [T + 1,
    ...] V(s_t) from the view of the player to move at s_t (the last bootstraps). The next
    position is the opponent's, so its value counts negated (negamax):

        delta_t = r_t - gamma * V(s_{t+1}) * (1 - done_t) - V(s_t)
        A_t = delta_t - gamma * lambda * (1 - done_t) * A_{t+1}

    i.e. `gae` with discounts -gamma * (1 - done). With lambda = 1, A_t + V(s_t) is each
    mover's own discounted return over its game's plies, the opponent's rewards negated: the
    per-player GAE (lambda 1, discount gamma^2 per own move) of the separated player
    sequences (tests/components/losses/test_negamax_gae.py compares them)."""
    require_same_shape("negamax_gae", rewards=rewards, done=done)
    return gae(rewards, -gamma * (1.0 - done.astype(rewards.dtype)), values, lambda_)


def discounted_returns(rewards: jax.Array, discounts: jax.Array,
                       bootstrap: jax.Array | float = 0.0) -> jax.Array:
    """The full discounted (Monte-Carlo) return of every step over [T, ...], bootstrapped
    from `bootstrap` after the last step."""
    require_same_shape("discounted_returns", rewards=rewards, discounts=discounts)

    def back(ret, step):
        reward, discount = step
        ret = reward + discount * ret
        return ret, ret

    init = jnp.broadcast_to(jnp.asarray(bootstrap, rewards.dtype), rewards.shape[1:])
    return jax.lax.scan(back, init, (rewards, discounts), reverse=True)[1]


def n_step_terms(rewards: jax.Array, discounts: jax.Array, n: int
                 ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The pieces of the n-step return G_t = reward_sum_t + discount_t * v(s after step
    last_t), truncated at the sequence's end (m = min(n, T - t) steps):
    reward_sum_t = r_t + d_t r_{t+1} + ... + d_t…d_{t+m-2} r_{t+m-1},
    discount_t = d_t…d_{t+m-1}, last_t = t + m - 1 (int32[T]).
    (Sutton & Barto 2018, §7.1; rlax.n_step_bootstrapped_returns for the whole return.)"""
    positive_int(n, "n-step returns (n_step_terms): n")
    require_same_shape("n_step_terms", rewards=rewards, discounts=discounts)
    t_len = rewards.shape[0]
    reward_sum = jnp.zeros_like(rewards)
    # accumulate k = 0..n-1 terms with running discount products
    scale = jnp.ones_like(rewards)
    index = jnp.arange(t_len)
    last = jnp.minimum(index + n, t_len) - 1  # the step whose next state bootstraps G_t
    for k in range(n):
        src = jnp.minimum(index + k, t_len - 1)
        valid = (index + k <= last).reshape((-1,) + (1,) * (rewards.ndim - 1))
        reward_sum = reward_sum + jnp.where(valid, scale * rewards[src], 0.0)
        scale = jnp.where(valid, scale * discounts[src], scale)
    return reward_sum, scale, last


def n_step_returns(rewards: jax.Array, discounts: jax.Array, bootstrap_values: jax.Array,
                   n: int) -> jax.Array:
    """n-step bootstrapped returns over [T, ...] (see the module docstring)."""
    require_same_shape("n_step_returns", rewards=rewards, discounts=discounts,
                       bootstrap_values=bootstrap_values)
    reward_sum, discount, last = n_step_terms(rewards, discounts, n)
    return reward_sum + discount * bootstrap_values[last]


def game_outcomes(rewards: jax.Array, terminated: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The outcome of every position of two-player games over [T, ...] from its mover's view,
    and whether it is known: `rewards` the mover's reward of each move (nonzero only at a
    game's end), `terminated` whether the move ended the game. The players alternate, so the
    outcome of a move that did not end the game is the negated outcome of the next (AlphaZero's
    value target z): `discounted_returns` with discounts -(1 - terminated). An outcome is
    known where a game's end follows within the sequence (`complete`, bool [T, ...]); where
    none does, it is 0 and not to be learnt from."""
    require_same_shape("game_outcomes", rewards=rewards, terminated=terminated)
    ended = terminated.astype(rewards.dtype)
    outcome = discounted_returns(rewards, -(1.0 - ended))
    # (lax's cumsum: jax2onnx, once imported for an export, replaces jnp.cumsum process-wide
    # with a wrapper that refuses a positional axis)
    complete = jax.lax.cumsum(ended, axis=0, reverse=True) > 0
    return outcome, complete
