"""`negamax_gae` (one value function for both players of a zero-sum game, each
step from its mover's view) against references written apart from it: the recursion in
NumPy, and, with lambda = 1, rlax's lambda-returns of each player's own moves, separated from
the interleaved sequence (each own move's reward: its own, minus gamma times the opponent's
next one; discount gamma^2 per own move)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax

from components.losses import negamax_gae


def random_games(rng, steps=40, n=3):
    """Interleaved plies of n games with auto-reset: rewards of the mover (nonzero only where a
    game ends), done flags, values [T + 1, n]."""
    done = rng.random((steps, n)) < 0.15
    rewards = np.where(done, rng.choice([-1.0, 0.0, 1.0], (steps, n)), 0.0)
    values = rng.uniform(-1, 1, (steps + 1, n))
    return rewards.astype(np.float32), done, values.astype(np.float32)


def recursion(rewards, done, values, gamma, lam, again=None):
    """The docstring's lines, step by step backwards (`again`: the mover moves again)."""
    again = np.zeros(done.shape, bool) if again is None else again
    advantages = np.zeros_like(rewards)
    next_advantage = np.zeros(rewards.shape[1], np.float32)
    for t in reversed(range(len(rewards))):
        sign = (1.0 - done[t]) * np.where(again[t], 1.0, -1.0)
        delta = rewards[t] + gamma * sign * values[t + 1] - values[t]
        next_advantage = delta + gamma * lam * sign * next_advantage
        advantages[t] = next_advantage
    return advantages


def alternating(done):
    return np.zeros(done.shape, bool)


@pytest.mark.parametrize("gamma,lam", [(1.0, 0.95), (0.99, 0.9), (0.9, 0.0)])
def test_negamax_gae_is_the_recursion(gamma, lam):
    rewards, done, values = random_games(np.random.default_rng(0))
    got = jax.jit(negamax_gae, static_argnums=(3, 4))(rewards, done, values, gamma, lam,
                                                      alternating(done))
    np.testing.assert_allclose(got, recursion(rewards, done, values, gamma, lam), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("gamma,lam", [(1.0, 0.95), (0.9, 0.5)])
def test_where_the_mover_moves_again_its_next_value_counts_as_it_is(gamma, lam):
    rng = np.random.default_rng(4)
    rewards, done, values = random_games(rng)
    again = (rng.random(done.shape) < 0.3) & ~done
    got = negamax_gae(rewards, done, values, gamma, lam, moves_again=again)
    np.testing.assert_allclose(got, recursion(rewards, done, values, gamma, lam, again),
                               rtol=1e-5, atol=1e-5)


def test_without_moves_again_the_players_alternate_and_it_warns():
    rewards, done, values = random_games(np.random.default_rng(5))
    with pytest.warns(DeprecationWarning, match="negamax_gae without moves_again"):
        got = negamax_gae(rewards, done, values, 0.99, 0.95)
    np.testing.assert_allclose(got, recursion(rewards, done, values, 0.99, 0.95), rtol=1e-5,
                               atol=1e-5)


def per_player_advantages(rewards, done, values, gamma):
    """One column's plies separated into each player's own moves, game by game. An own move
    t's reward is r_t - gamma * r_{t+1} (the opponent's reply counts negated), its discount
    gamma^2 to the player's next state s_{t+2}, 0 when the game ends at t or at the reply; a
    sequence cut after ply t bootstraps with -gamma * V(s_{t+1}) (the opponent's view).
    Returns from rlax's lambda-returns (lambda 1), advantages G - V."""
    steps = len(rewards)
    out = np.full(steps, np.nan, np.float32)
    ends = [t + 1 for t in range(steps) if done[t]]
    starts = [0, *ends]
    for start, end in zip(starts, [*ends, steps], strict=True):
        for parity in (0, 1):
            own = list(range(start + parity, end, 2))
            if not own:
                continue
            r, d, v = [], [], []
            for t in own:
                if done[t]:
                    r.append(rewards[t]), d.append(0.0), v.append(0.0)
                elif t + 1 == steps:  # cut after this ply
                    r.append(rewards[t] - gamma * values[t + 1]), d.append(0.0), v.append(0.0)
                elif done[t + 1]:
                    r.append(rewards[t] - gamma * rewards[t + 1]), d.append(0.0), v.append(0.0)
                else:
                    r.append(rewards[t] - gamma * rewards[t + 1]), d.append(gamma * gamma)
                    v.append(values[t + 2])
            returns = rlax.lambda_returns(jnp.asarray(r, jnp.float32),
                                          jnp.asarray(d, jnp.float32),
                                          jnp.asarray(v, jnp.float32), 1.0)
            out[own] = np.asarray(returns) - values[own]
    return out


@pytest.mark.parametrize("gamma", [1.0, 0.95])
def test_with_lambda_one_each_player_gets_its_own_return(gamma):
    """lambda = 1: the negamax advantage of each ply is the per-player advantage of the
    mover's own moves, separated from the interleaved sequence (rlax on each player)."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        rewards, done, values = random_games(rng, steps=30, n=1)
        got = np.asarray(negamax_gae(rewards, done, values, gamma, 1.0,
                                     alternating(done)))[:, 0]
        want = per_player_advantages(rewards[:, 0], done[:, 0], values[:, 0], gamma)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_won_game_undiscounted_gives_each_mover_its_outcome():
    """gamma = lambda = 1, one game of 5 plies won by its last mover (player 0): A + V is
    +1 on player 0's plies and -1 on player 1's."""
    rewards = np.array([0, 0, 0, 0, 1], np.float32)[:, None]
    done = np.array([0, 0, 0, 0, 1], bool)[:, None]
    values = np.random.default_rng(2).uniform(-1, 1, (6, 1)).astype(np.float32)
    advantage = np.asarray(negamax_gae(rewards, done, values, 1.0, 1.0, alternating(done)))
    np.testing.assert_allclose((advantage + values[:-1])[:, 0], [1, -1, 1, -1, 1], atol=1e-6)


def test_negamax_gae_under_vmap():
    rewards, done, values = random_games(np.random.default_rng(3))
    batched = jax.vmap(lambda r, d, v: negamax_gae(r, d, v, 0.99, 0.95, d & False), in_axes=1,
                       out_axes=1)(rewards, done, values)
    np.testing.assert_allclose(batched, recursion(rewards, done, values, 0.99, 0.95),
                               rtol=1e-5, atol=1e-5)
