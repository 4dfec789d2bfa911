"""OpenSpiel's names of the games (`connect_four`, `othello`, `hex`) are taken wherever a game
id is, on every door, and make the same environment as the id (issue 35)."""

import gymnasium
import jax
import numpy as np
import pytest

import components.envs as envs
from components.envs.games import OPENSPIEL_NAMES
from components.envs.games.self_play import SelfPlay


@pytest.mark.parametrize(("env_id", "name"), sorted(OPENSPIEL_NAMES.items()))
def test_openspiels_name_makes_the_game_on_every_door(env_id, name):
    assert envs.canonical_id(name) == env_id == envs.canonical_id(f"metagraph/{name}")
    ours, theirs = envs.make(name, 2, seed=3), envs.make(env_id, 2, seed=3)
    assert ours.env_spec is theirs.env_spec
    np.testing.assert_array_equal(ours.reset(seed=3)[0], theirs.reset(seed=3)[0])
    assert envs.make_functional(name).env_spec is envs.make_functional(env_id).env_spec
    assert SelfPlay(name, num_threads=1) == SelfPlay(env_id, num_threads=1)
    single = gymnasium.make(f"metagraph/{name}")
    assert single.unwrapped.env_spec.env_id == env_id
    state = SelfPlay(name, num_threads=1).init(jax.random.PRNGKey(0), 2)
    assert state.legal_action_mask.shape == (2, theirs.single_action_space.n)


def test_the_pettingzoo_door_takes_openspiels_name():
    pytest.importorskip("pettingzoo")
    from components.envs.games.pettingzoo_env import GameEnv

    assert GameEnv("connect_four").env_id == "ConnectFour-v0"
