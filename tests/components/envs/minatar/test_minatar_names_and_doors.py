"""The MinAtar games by every name and door a user reaches them through: gymnax's names as
aliases, Gymnasium's `make` and `make_vec` under the `metagraph/` namespace with keyword
arguments, and the planes' shape."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import components.envs as envs
from components.envs.minatar import MINATAR_IDS, TASKS, observation_shape

CHANNELS = {"MinAtar-Breakout-v0": 4, "MinAtar-Asterix-v0": 4, "MinAtar-Freeway-v0": 7,
            "MinAtar-Seaquest-v0": 10, "MinAtar-SpaceInvaders-v0": 6}  # the package's


@pytest.mark.parametrize("env_id", MINATAR_IDS)
def test_names_spaces_and_planes(env_id):
    game = env_id.removeprefix("MinAtar-").removesuffix("-v0")
    assert envs.canonical_id(f"{game}-MinAtar") == env_id  # gymnax's name
    made = envs.spec(env_id)
    assert observation_shape(env_id) == (10, 10, CHANNELS[env_id])
    assert made.observation_space == gymnasium.spaces.Box(0, 1, (10, 10, CHANNELS[env_id]),
                                                          np.bool_)
    assert made.action_space == gymnasium.spaces.Discrete(6)
    assert made.max_episode_steps == (2500 if game == "Freeway" else 1000)


def test_observation_shape_is_refused_where_there_are_no_planes():
    with pytest.raises(ValueError, match="CartPole-v1: its observation is no planes"):
        observation_shape("CartPole-v1")
    with pytest.raises(ValueError, match="unknown environment 'Pong-MinAtar'"):
        observation_shape("Pong-MinAtar")


def test_gymnasium_makes_them_with_their_arguments():
    env = gymnasium.make("metagraph/Breakout-MinAtar", sticky_action_prob=0.0)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (10, 10, 4) and obs.dtype == np.bool_ and obs.any()
    env.step(1)
    vector = gymnasium.make_vec("metagraph/MinAtar-Seaquest-v0", 3,
                                difficulty_ramping=False)
    obs, _ = vector.reset(seed=2)
    obs, reward, terminated, truncated, _ = vector.step(np.array([5, 5, 5]))
    assert obs.shape == (3, 10, 10, 10) and obs.dtype == np.bool_ and reward.shape == (3,)


def test_a_spec_that_misstates_the_planes_is_refused():
    """A registration whose observation space is not the task's (flat float32 for MinAtar's
    bool planes) is refused when the spec is made, naming what the task gives."""
    cls, _ = TASKS["MinAtar-Breakout-v0"]

    def make_spec(env_id, kwargs):
        return envs.EnvSpec(env_id, gymnasium.spaces.Box(0, 1, (400,), np.float32),
                            gymnasium.spaces.Discrete(6), 1000, cls(env_id, kwargs))

    envs.register("FlatBreakout-v0", make_spec)
    with pytest.raises(ValueError, match=r"the task's observations are a Box of shape "
                                         r"\(10, 10, 4\), bool"):
        envs.spec("FlatBreakout-v0")
