"""q(p) of self-play games (`quality.game_outcome`, `quality.quick_outcome`) against outcomes
written out by hand for games played to their end."""

import jax
import numpy as np
import pytest

from components.reweighting import quality


def test_game_outcome_is_the_result_for_each_side():
    # 3 games of up to 6 plies: won by its last mover at ply 4 (player 0), at ply 5
    # (player 1), and a draw ending at ply 6; then the next game (masked out) began
    rewards = np.array([[0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]],
                       np.float32)
    mask = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]], np.float32)
    movers = np.broadcast_to(np.arange(6) % 2, (3, 6))  # the players alternate
    for side, expected in ((0, [1, -1, 0]), (1, [-1, 1, 0])):
        got = jax.jit(quality.game_outcome)(rewards, mask, np.full(3, side), movers)
        np.testing.assert_array_equal(got, expected)
        with pytest.warns(DeprecationWarning, match="takes ply t as player t % 2's"):
            old = quality.game_outcome(rewards, mask, np.full(3, side))
        np.testing.assert_array_equal(old, expected)


def test_a_reward_after_the_game_does_not_count():
    rewards = np.array([[0, 1, -1]], np.float32)  # the next game's ply 2 is masked
    mask = np.array([[1, 1, 0]], np.float32)
    movers = np.array([[0, 1, 0]])
    np.testing.assert_array_equal(quality.game_outcome(rewards, mask, np.array([1]), movers),
                                  [1])


def test_quick_outcome_ranks_wins_by_speed_and_losses_by_length():
    outcome = np.array([1.0, 1.0, -1.0, -1.0, 0.0])
    plies = np.array([7.0, 21.0, 8.0, 40.0, 42.0])
    got = np.asarray(quality.quick_outcome(outcome, plies, 42))
    np.testing.assert_allclose(got, [1 + 0.5 * 35 / 42, 1 + 0.5 * 21 / 42,
                                     -(1 + 0.5 * 34 / 42), -(1 + 0.5 * 2 / 42), 0.0],
                               rtol=1e-6)
    assert got[0] > got[1] > got[4] > got[3] > got[2]
