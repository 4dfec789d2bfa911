"""PPO's CNN torso: MinAtar's shipped defaults (gymnax-blines' PPO settings with the MinAtar
paper's network), a few iterations on MinAtar-Breakout through `train` and `evaluate` as
`metagraph train MinAtar-Breakout-v0 --algo ppo` runs them, and clear errors where a CNN has
no planes to read."""

import pytest
from short_runs import ppo_trains_and_evaluates

from components.agents import PPOAgent, PPOConfig
from components.networks import CNN
from metagraph.spaces import Bool

SMALL = {"num_envs": 8, "num_steps": 16, "minibatches": 2, "epochs": 1, "hidden": [16],
         "cnn_channels": [4], "iterations_per_call": 2}


def test_shipped_defaults_are_gymnax_blines_settings_with_a_cnn():
    config = PPOConfig.for_env("MinAtar-Breakout-v0")
    gymnax_blines = {"num_envs": 64, "num_steps": 128, "epochs": 4, "minibatches": 8,
                     "learning_rate": 5e-4, "anneal_lr": False, "gamma": 0.999,
                     "entropy_coef": 0.02, "cnn_channels": (16,), "cnn_kernel": 3,
                     "cnn_stride": 1, "hidden": (128,),
                     "env_kwargs": {"minimal_action_set": True}}  # gymnax's action set
    assert {name: getattr(config, name) for name in gymnax_blines} == gymnax_blines
    assert PPOConfig.for_env("Breakout-MinAtar") == config  # gymnax's name
    users = PPOConfig.for_env("MinAtar-Breakout-v0", {"env_kwargs": {"sticky_action_prob": 0}})
    assert users.env_kwargs == {"minimal_action_set": True, "sticky_action_prob": 0}
    assert PPOConfig.for_env("MinAtar-Seaquest-v0").cnn_channels == (16,)
    assert PPOConfig().cnn_channels == ()  # an MLP elsewhere
    with pytest.raises(ValueError, match=r"PPOConfig.cnn_channels: expected empty \(no CNN\)"):
        PPOConfig(cnn_channels=(0,))
    with pytest.raises(ValueError, match=r"PPOConfig.value: expected one of \('separate', "):
        PPOConfig(value="none")


@pytest.mark.parametrize("value", ["separate", "shared"])
def test_the_policy_is_a_cnn_over_the_planes(value):
    config = PPOConfig.for_env("MinAtar-Breakout-v0", {**SMALL, "value": value})
    agent = PPOAgent("MinAtar-Breakout-v0", config)
    assert agent.rollout.env.action_space.n == 3  # no-op, left, right
    torso = agent.policy.torso
    assert isinstance(torso, CNN) and torso.input_shape is None  # the planes as they come
    assert agent.rollout.env.observation_space == Bool((10, 10, 4))
    assert (torso.channels, torso.kernel, torso.stride, torso.hidden) == ((4,), 3, 1, (16,))
    assert agent.policy.value_mode == value  # an MLP over the planes, or a head on the CNN


def test_a_few_iterations_on_breakout_train_and_evaluate(tmp_path):
    ppo_trains_and_evaluates("MinAtar-Breakout-v0", SMALL, 512, tmp_path, actions=3)


def test_a_cnn_without_planes_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cnn_channels needs images \[H, W, C\] or planes; "
                                         r"CartPole-v1's observations have shape \(4,\)"):
        PPOAgent("CartPole-v1", PPOConfig(cnn_channels=(4,)))
    with pytest.raises(ValueError, match="cnn_channels reads images; ConnectFour-v0's "
                                         "observations are Dict"):
        PPOAgent("ConnectFour-v0", PPOConfig.for_env("ConnectFour-v0", {"cnn_channels": [4]}))
