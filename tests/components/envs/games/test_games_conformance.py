"""Each board game passes the engine's conformance check (`components.envs.check`): host pool
equal to the in-graph door, thread counts, determinism, state round trips, pickling, bad actions
and forged states refused, auto-reset at the step limit."""

import pytest

import components.envs as envs
from components.envs.games import GAME_IDS


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_game_conforms(env_id):
    assert set(envs.check(env_id).values()) == {"ok"}


def test_the_games_are_registered_with_gymnasium_and_take_no_keyword_arguments():
    import gymnasium

    assert set(GAME_IDS) <= set(envs.env_ids())
    env = gymnasium.make("metagraph/Othello-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8 * 8 * 2,)
    with pytest.raises(TypeError, match=r"^Hex-v0 takes no keyword arguments, got \['size'\]"):
        envs.spec("Hex-v0", size=9)
