"""Bad input to the MinAtar games is refused in one clear line, and the C++ never reads outside
the board: a physical state whose numbers are finite but out of range (a ball at x = 10^6, a
car of speed 10^300) is observed as empty planes and refused by the next step, before any
environment moves, on the host pool and the in-graph door, as the engine refuses every
invalid state; keyword arguments out of range or unknown name themselves."""

from __future__ import annotations

import numpy as np
import pytest

import components.envs as envs


def breakout_state(**changes: float) -> np.ndarray:
    """A Breakout physical state: previous action, then the words of breakout.h."""
    words = {"previous": 0, "ball_x": 0, "ball_y": 3, "dir": 2, "paddle": 4, "last_x": 0,
             "last_y": 3, "strike": 0, "bricks": 2**30 - 1}
    words.update(changes)
    return np.array(list(words.values()), np.float64)


@pytest.mark.parametrize(("change", "value"), [("ball_x", 1e6), ("ball_x", -1), ("dir", 4),
                                               ("bricks", 2.0**31), ("paddle", 0.5),
                                               ("previous", 6)])
def test_an_out_of_range_state_is_never_read_and_is_refused_by_the_step(change, value):
    pool = envs.make("MinAtar-Breakout-v0", 2, seed=0)
    pool.reset(seed=0)
    good = breakout_state()
    obs, _ = pool.reset(options={"state": np.stack([good, breakout_state(**{change: value})])})
    assert obs[0].sum() == 33 and obs[1].sum() == 0  # 30 bricks, ball, trail, paddle; empty
    kept = pool.records()
    with pytest.raises(ValueError, match="MinAtar-Breakout-v0 step: environment 1 (holds no "
                                         "state of MinAtar's Breakout|has a previous action)"):
        pool.step(np.array([0, 0]))
    np.testing.assert_array_equal(pool.records(), kept)  # neither environment moved
    obs, _ = pool.reset(options={"state": np.stack([good, good])})  # the pool still works
    assert obs.shape == (2, 10, 10, 4) and obs[..., 1].sum() == 2  # one ball each


def test_the_in_graph_door_refuses_the_same_state():
    door = envs.make_functional("MinAtar-Breakout-v0")
    state = door.state_from_physical(np.stack([breakout_state(), breakout_state(ball_x=1e6)]))
    with pytest.raises(ValueError, match="environment 1 holds no state of MinAtar's Breakout"):
        door.check_state(state)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sticky_action_prob": 1.5}, "sticky_action_prob must be in \\[0, 1\\], got 1.5"),
    ({"difficulty_ramping": "yes"}, "difficulty_ramping must be a bool"),
    ({"max_episode_steps": 0}, "max_episode_steps must be in \\[1, "),
    ({"frame_skip": 4}, "frame_skip is not an argument of this task"),
])
def test_keyword_arguments_are_checked(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        envs.spec("MinAtar-Asterix-v0", **kwargs)


def test_without_sticky_actions_each_action_is_taken():
    """sticky_action_prob=0: the paddle follows every action (1 left, 3 right)."""
    pool = envs.make("MinAtar-Breakout-v0", 1, seed=3, sticky_action_prob=0.0)
    pool.reset(seed=3)
    for action, paddle in ((1, 3), (1, 2), (3, 3), (0, 3)):
        pool.step(np.array([action]))
        assert pool.physical_state()[0, 4] == paddle


def test_a_ball_set_on_the_paddles_row_ends_the_game_on_the_board():
    """Issue 55, moderate 1: a state with the ball on the bottom row moving down was stepped
    off the board (y = 10, 11, ...) with empty planes and no end. It is a game already lost:
    the next step ends it, on the host pool as in the in-graph door."""
    pool = envs.make("MinAtar-Breakout-v0", 1, seed=0, sticky_action_prob=0.0)
    pool.reset(seed=0)
    lost = breakout_state(ball_x=0, ball_y=9, dir=2, paddle=7, last_x=0, last_y=8)
    obs, _ = pool.reset(options={"state": lost[None]})
    assert obs[0, 9, 0, 1]  # the ball on the board's bottom row
    _, _, terminated, _, info = pool.step(np.array([0]))
    assert terminated[0]
    door = envs.make_functional("MinAtar-Breakout-v0", sticky_action_prob=0.0)
    out = door.step(door.state_from_physical(lost[None]), np.zeros(1, np.int32))
    assert bool(np.asarray(out.terminated)[0])
