"""The games as PettingZoo AEC environments (`pettingzoo_env.GameEnv`): PettingZoo's own
`api_test` passes for each; Connect Four plays as PettingZoo's `connect_four_v3` does (the same
observations for both agents, action masks, rewards and terminations at every step of random
games; once a game is over it lists no legal action, as OpenSpiel); an illegal action raises
the engine's error with nothing changed."""

import numpy as np
import pytest

from components.envs.games import GAME_IDS

pettingzoo = pytest.importorskip("pettingzoo")
from pettingzoo.classic import connect_four_v3  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from components.envs.games.pettingzoo_env import GameEnv  # noqa: E402


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_pettingzoo_api_test_passes(env_id):
    api_test(GameEnv(env_id), num_cycles=200)


def test_connect_four_plays_as_pettingzoo_connect_four_v3():
    ours, theirs = GameEnv("ConnectFour-v0"), connect_four_v3.env()
    rng = np.random.default_rng(0)
    for game in range(100):
        ours.reset(seed=game)
        theirs.reset(seed=game)
        for agent in theirs.agent_iter():
            assert ours.agent_selection == agent
            for name in theirs.possible_agents:
                expected, got = theirs.observe(name), ours.observe(name)
                np.testing.assert_array_equal(got["observation"], expected["observation"])
                if not theirs.terminations.get(name, True):
                    # (at the end connect_four_v3 still lists the columns with room; OpenSpiel
                    # and these games list no legal action)
                    np.testing.assert_array_equal(got["action_mask"], expected["action_mask"])
            _, reward, terminated, truncated, _ = theirs.last()
            assert ours.last()[1:4] == (reward, terminated, truncated)
            assert ours.terminations == theirs.terminations
            action = None
            if not (terminated or truncated):
                action = int(rng.choice(np.flatnonzero(theirs.observe(agent)["action_mask"])))
            theirs.step(action)
            ours.step(action)
        assert ours.agents == theirs.agents == []


def test_an_illegal_action_raises_and_changes_nothing():
    env = GameEnv("ConnectFour-v0", render_mode="ansi")
    env.reset()
    for _ in range(6):
        env.step(3)  # fills column 3
    before = env.render(), env.observe("player_0")["observation"].copy(), env.agent_selection
    with pytest.raises(ValueError, match=r"^ConnectFour-v0: action 3 at index 0 is not legal "
                                         r"in its state$"):
        env.step(3)
    with pytest.raises(ValueError, match="ConnectFour-v0: action 9 at index 0 is outside"):
        env.step(9)
    with pytest.raises(ValueError, match="player_0 is to move"):
        env.step(None)
    assert env.render() == before[0] and env.agent_selection == before[2]
    np.testing.assert_array_equal(env.observe("player_0")["observation"], before[1])


def test_stepping_without_a_game_says_to_reset():
    """Before `reset`, and once both agents have left a finished game, the door says what to
    do (it gave an AttributeError and a KeyError)."""
    env = GameEnv("connect_four")
    for call in (lambda: env.step(0), lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"GameEnv\(ConnectFour-v0\)\.(step|observe): "
                                               r"no game yet; call reset\(\) first"):
            call()
    env.reset(seed=0)
    while env.agents:
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated
                 else int(np.flatnonzero(observation["action_mask"])[0]))
    with pytest.raises(RuntimeError, match="the game is over and both agents have left; call "
                                           "reset"):
        env.step(0)
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1"]
