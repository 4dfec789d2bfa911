"""The evaluation of a game agent against OpenSpiel's bots (`game_evaluation.py`): the Wilson
interval against its published values, the harness's bookkeeping (half the games as first
player, every move applied to OpenSpiel's game too and checked), and its refusals (an
opponent spec it does not know, `mcts:0`, an illegal move of the agent)."""

import jax
import numpy as np
import pytest

from components.training.games.game_evaluation import GameSyncError, play_games
from components.training.games.intervals import wilson_interval
from components.training.games.opponents import Opponent, OpponentError, parse_opponent

pytest.importorskip("pyspiel")


@pytest.mark.parametrize("successes,trials,low,high", [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I
    # (method 3, Wilson score without continuity correction)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_newcombes_table(successes, trials, low, high):
    got = wilson_interval(successes, trials)
    np.testing.assert_allclose(got, (low, high), atol=1e-4)


def test_wilson_interval_refuses_impossible_counts():
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(5, 4)


@pytest.mark.parametrize("spec,expected", [("random", Opponent("random")),
                                           ("mcts:1000", Opponent("mcts", 1000)),
                                           ("run:runs/c4", Opponent("run", run="runs/c4"))])
def test_opponent_specs(spec, expected):
    assert parse_opponent(spec) == expected
    assert parse_opponent(spec).spec == spec


@pytest.mark.parametrize("spec,words", [("mcts:0", "int in [1, 1,000,000]"),
                                        ("mcts:-3", "int in [1,"), ("mcts:ten", "int in [1,"),
                                        ("mcts:2147483647", "int in [1,"),
                                        ("mcts: 5", "digits alone"), ("mcts:５", "digits"),
                                        ("mcts", "unknown"),
                                        ("run:", "unknown"),
                                        ("alphabeta:3", "unknown"), ("", "unknown")])
def test_bad_opponent_specs_name_the_option(spec, words):
    with pytest.raises(OpponentError, match="--opponent") as info:
        parse_opponent(spec)
    assert words in str(info.value)


def random_player(seed):
    """A `GamePlayer` of uniformly random legal moves (of every game in the batch)."""
    rng = np.random.default_rng(seed)

    def play(state, key):
        mask = np.asarray(state.legal_action_mask)
        return np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)

    return play


@pytest.mark.parametrize("env_id", ["ConnectFour-v0", "Othello-v0", "Hex-v0"])
def test_random_against_random_stays_in_sync_with_openspiel(env_id):
    """Both sides random: every move is checked against OpenSpiel's game (GameSyncError
    otherwise), each game counted once, half as first player."""
    result = play_games(random_player(0), env_id, Opponent("random"), 6, seed=3)
    assert result["games"] == 6
    assert result["wins"] + result["draws"] + result["losses"] == 6
    assert sum(result["as_first"]) == sum(result["as_second"]) == 3
    low, high = result["win_rate_95"]
    assert low <= result["win_rate"] <= high


def test_mcts_beats_a_random_player_at_connect_four():
    """OpenSpiel's MCTS with 50 simulations is far stronger than random moves."""
    result = play_games(random_player(1), "ConnectFour-v0", Opponent("mcts", 50), 4)
    assert result["losses"] >= 3


def test_an_illegal_move_of_the_agent_is_named():
    def corner(state, key):  # Othello's a1: illegal in the first position
        return np.zeros(np.asarray(state.current_player).shape, np.int32)

    with pytest.raises(GameSyncError, match=r"game 0: the agent chose the illegal move 0 "
                                            r"after moves \[\]"):
        play_games(corner, "Othello-v0", Opponent("random"), 2, seed=0)


def test_the_player_gets_a_key_and_the_whole_batch():
    seen = []

    def player(state, key):
        seen.append((np.asarray(state.observation).shape, np.asarray(key).shape))
        return random_player(2)(state, key)

    play_games(player, "ConnectFour-v0", Opponent("random"), 4)
    assert seen[0] == ((4, 6, 7, 2), jax.random.PRNGKey(0).shape)


def test_another_agent_as_opponent_plays_the_other_side():
    """`opponent_player`: the rival's moves come from it (OpenSpiel still checks each)."""
    calls = []

    def rival(state, key):
        calls.append(1)
        return random_player(4)(state, key)

    result = play_games(random_player(3), "Hex-v0", Opponent("run", run="x"), 4,
                        opponent_player=rival)
    assert calls and result["opponent"] == "run:x"
    assert result["wins"] + result["draws"] + result["losses"] == 4


def test_each_side_s_moves_and_thinking_time_are_counted():
    """Both sides' moves are counted (alternating turns: about as many each), and a player
    that sleeps 20 ms a call shows at least that per move, more than MCTS-5's."""
    import time

    def slow(state, key):
        time.sleep(0.02)
        return random_player(4)(state, key)

    result = play_games(slow, "ConnectFour-v0", Opponent("mcts", 5), 2, seed=5)
    assert result["agent_moves"] > 0 and result["opponent_moves"] > 0
    assert abs(result["agent_moves"] - result["opponent_moves"]) <= 2  # alternating turns
    assert result["agent_seconds_per_move"] >= 0.02
    assert 0 < result["opponent_seconds_per_move"] < result["agent_seconds_per_move"]
