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
- `game_outcomes(rewards, terminated, moves_again)`: each position's outcome for its mover in
  two-player zero-sum games (AlphaZero's value target), and whether its game ended within the
  sequence.
- `turn_discounts(done, moves_again)`: what the next position's value counts for the mover of
  a two-player zero-sum game: +1 where the same player moves again, -1 where the opponent
  moves, 0 where the game ended.

`discounts` are γ·(1 - terminated) per step. Whose move it is comes from the task (a
`Trajectory`'s `moves_again`), never from the step's parity.
"""

from __future__ import annotations

import warnings

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


def turn_discounts(done: jax.Array, moves_again: jax.Array | None,
                   where: str = "turn_discounts") -> jax.Array:
    """The sign the next position's value takes for the mover of each step of a two-player
    zero-sum game, float32 [T, ...]: +1 where `moves_again` (the player who moved is the
    player to move next, as the task reports it), -1 where the opponent moves next, 0 where
    the step ended the game (`done`). `moves_again=None` assumes the players alternate
    strictly (-1 at every step), with a DeprecationWarning naming `where`: pass it
    (`Trajectory.moves_again`); it becomes required in the next release."""
    if moves_again is None:
        warnings.warn(f"{where} without moves_again assumes the players alternate strictly; "
                      f"pass moves_again (Trajectory.moves_again: the mover is the player "
                      f"to move next) so that a game where a player moves again is learnt "
                      f"right. It becomes required in the next release.",
                      DeprecationWarning, stacklevel=3)
        moves_again = jnp.zeros(done.shape, bool)
    require_same_shape(where, done=done, moves_again=moves_again)
    if moves_again.dtype != jnp.bool_:
        raise TypeError(f"{where}: moves_again must be bool (whether the mover moves again), "
                        f"got {moves_again.dtype}")
    sign = jnp.where(moves_again, 1.0, -1.0)
    return jnp.where(done.astype(bool), 0.0, sign).astype(jnp.float32)


def negamax_gae(rewards: jax.Array, done: jax.Array, values: jax.Array, gamma: float,
                lambda_: float = 0.95, moves_again: jax.Array | None = None) -> jax.Array:
    """GAE for a two-player zero-sum game, one policy and one value function playing both
    sides, each step from the view of its mover: `rewards` [T, ...] the mover's reward,
    `done` [T, ...] whether the step ended a game, `values` [T + 1, ...] V(s_t) from the view
    of the player to move at s_t (the last bootstraps), `moves_again` [T, ...] bool whether
    the mover of step t is the player to move at s_{t+1} (a capture that earns another move;
    the task says so: `Trajectory.moves_again`). The next position's value counts negated
    where the opponent moves there (negamax) and as it is where the same player moves again:

        delta_t = r_t + gamma * sign_t * V(s_{t+1}) - V(s_t)
        A_t = delta_t + gamma * lambda * sign_t * A_{t+1}

    with sign_t = `turn_discounts(done, moves_again)` (+1, -1, 0 at a game's end): `gae` with
    discounts gamma * sign. With lambda = 1, A_t + V(s_t) is each mover's own discounted
    return over its game's plies, the opponent's rewards negated: the per-player GAE of the
    separated player sequences (tests/components/losses/test_negamax_gae.py compares them).
    Without `moves_again` the players are taken to alternate strictly (a DeprecationWarning)."""
    require_same_shape("negamax_gae", rewards=rewards, done=done)
    signs = turn_discounts(done, moves_again, "negamax_gae")
    return gae(rewards, gamma * signs.astype(rewards.dtype), values, lambda_)


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


def n_step_terms(rewards: jax.Array, discounts: jax.Array, n: int,
                 stops: jax.Array | None = None) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The pieces of the n-step return G_t = reward_sum_t + discount_t * v(s after step
    last_t), truncated at the sequence's end (m = min(n, T - t) steps):
    reward_sum_t = r_t + d_t r_{t+1} + ... + d_t…d_{t+m-2} r_{t+m-1},
    discount_t = d_t…d_{t+m-1}, last_t = t + m - 1 (int32[T]).
    (Sutton & Barto 2018, §7.1; rlax.n_step_bootstrapped_returns for the whole return.)

    With `stops` (bool [T, ...], an episode ended at this step, by its end or by a time
    limit), a window also ends at its first stop: last_t is that step, and the bootstrap is
    its next state with the discounts as they are, so a step cut by a time limit (discount
    gamma) bootstraps from its final observation instead of counting as terminal (discount
    0), as Stable-Baselines3's and CleanRL's replays do (Pardo et al. 2018, "Time Limits in
    Reinforcement Learning"). Without `stops`, an episode's end must be in `discounts`."""
    positive_int(n, "n-step returns (n_step_terms): n")
    require_same_shape("n_step_terms", rewards=rewards, discounts=discounts)
    if stops is not None:
        require_same_shape("n_step_terms", rewards=rewards, stops=stops)
    t_len = rewards.shape[0]
    lead = (-1,) + (1,) * (rewards.ndim - 1)
    reward_sum = jnp.zeros_like(rewards)
    # accumulate k = 0..n-1 terms with running discount products
    scale = jnp.ones_like(rewards)
    index = jnp.arange(t_len)
    last = jnp.broadcast_to(index.reshape(lead), rewards.shape)
    running = jnp.ones(rewards.shape, bool)  # the window has not met a stop yet
    for k in range(n):
        src = jnp.minimum(index + k, t_len - 1)
        valid = (index + k < t_len).reshape(lead) & running
        reward_sum = reward_sum + jnp.where(valid, scale * rewards[src], 0.0)
        scale = jnp.where(valid, scale * discounts[src], scale)
        last = jnp.where(valid, src.reshape(lead), last)
        if stops is not None:
            running = running & ~stops[src].astype(bool)
    if stops is None:  # every window of a column ends at the same step: one index per row
        last = jnp.minimum(index + n, t_len) - 1
    return reward_sum, scale, last.astype(jnp.int32)


def n_step_returns(rewards: jax.Array, discounts: jax.Array, bootstrap_values: jax.Array,
                   n: int) -> jax.Array:
    """n-step bootstrapped returns over [T, ...] (see the module docstring)."""
    require_same_shape("n_step_returns", rewards=rewards, discounts=discounts,
                       bootstrap_values=bootstrap_values)
    reward_sum, discount, last = n_step_terms(rewards, discounts, n)
    return reward_sum + discount * bootstrap_values[last]


def game_outcomes(rewards: jax.Array, terminated: jax.Array,
                  moves_again: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
    """The outcome of every position of two-player zero-sum games over [T, ...] from its
    mover's view, and whether it is known: `rewards` the mover's reward of each move,
    `terminated` whether the move ended the game, `moves_again` bool whether the mover of
    each move is the player to move after it (the task says so: `Trajectory.moves_again`).
    A move's outcome is its reward plus the next position's outcome, as it is where the same
    player moves again and negated where the opponent moves (AlphaZero's value target z):
    `discounted_returns` with discounts `turn_discounts(terminated, moves_again)`. An outcome
    is known where a game's end follows within the sequence (`complete`, bool [T, ...]);
    where none does, it is 0 and not to be learnt from. Without `moves_again` the players
    are taken to alternate strictly (a DeprecationWarning)."""
    require_same_shape("game_outcomes", rewards=rewards, terminated=terminated)
    ended = terminated.astype(rewards.dtype)
    signs = turn_discounts(terminated, moves_again, "game_outcomes")
    outcome = discounted_returns(rewards, signs.astype(rewards.dtype))
    # (lax's cumsum: jax2onnx, once imported for an export, replaces jnp.cumsum process-wide
    # with a wrapper that refuses a positional axis)
    complete = jax.lax.cumsum(ended, axis=0, reverse=True) > 0
    return outcome, complete
