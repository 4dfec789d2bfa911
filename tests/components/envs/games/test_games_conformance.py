"""Each board game passes the engine's conformance check (`components.envs.check`: host pool
equal to the in-graph door, thread counts, determinism, state round trips, pickling, bad actions
and forged states refused, auto-reset at the step limit) in tests/components/envs/
test_conformance.py, which checks every registered id; here: that the games are registered,
reach Gymnasium, and refuse keyword arguments."""

import gymnasium
import pytest

import components.envs as envs
from components.envs.games import GAME_IDS


def test_the_games_are_among_the_ids_the_conformance_test_checks():
    assert set(GAME_IDS) <= set(envs.env_ids())


def test_the_games_reach_gymnasium_and_take_no_keyword_arguments():
    env = gymnasium.make("metagraph/Othello-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8 * 8 * 2,)
    with pytest.raises(TypeError, match=r"^Hex-v0 takes no keyword arguments, got \['size'\]"):
        envs.spec("Hex-v0", size=9)
