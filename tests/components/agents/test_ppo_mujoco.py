"""PPO's continuous-control settings: the MuJoCo tasks' shipped defaults (and CartPole's
untouched), a few iterations on HalfCheetah-v5 through `train` and `evaluate` as
`metagraph train HalfCheetah-v5 --algo ppo` runs them, and clear errors for settings that
cannot hold together."""

import json

import numpy as np
import pytest

from components.agents import PPOAgent, PPOConfig
from components.envs import Environment
from components.envs.wrappers import ClipAction, NormalizeObservation, NormalizeReward
from components.losses import bootstrap_truncated
from components.preprocessing import ObservationNormaliser, RewardNormaliser
from components.training import RunSpec, evaluate, train
from components.training.algorithms.iterative import PPO

SMALL = {"num_steps": 64, "minibatches": 2, "epochs": 2, "hidden": [16, 16],
         "iterations_per_call": 2}


def test_shipped_defaults():
    config = PPOConfig.for_env("Hopper-v5")  # the MuJoCo group: CleanRL's settings
    assert (config.num_envs, config.num_steps, config.epochs, config.minibatches) == \
        (1, 2048, 10, 32)
    assert (config.learning_rate, config.gae_lambda, config.clip, config.entropy_coef,
            config.max_grad_norm, config.hidden) == (3e-4, 0.95, 0.2, 0.0, 0.5, (64, 64))
    assert config.normalise_observations and config.normalise_rewards and config.clip_actions
    assert config.log_std == "parameter" and config.orthogonal_init
    assert PPOConfig.for_env("metagraph/Hopper-v5") == config
    cheetah = PPOConfig.for_env("HalfCheetah-v5")  # its own table over the group's
    assert (cheetah.num_steps, cheetah.epochs, cheetah.hidden, cheetah.activation) == \
        (512, 20, (256, 256), "relu")
    assert cheetah.bootstrap_truncated and cheetah.normalise_observations
    assert PPOConfig.for_env("CartPole-v1") == PPOConfig()  # classic control unchanged
    assert PPO().config("HalfCheetah-v5", {"num_steps": 512}).num_steps == 512
    with pytest.raises(ValueError, match="PPOConfig.log_std: expected one of"):
        PPOConfig.for_env("Hopper-v5", {"log_std": "fixed"})


def test_a_few_iterations_on_half_cheetah_train_and_evaluate(tmp_path):
    config = PPO().config("HalfCheetah-v5", SMALL)
    rows = train(RunSpec.make("HalfCheetah-v5", "ppo", config, steps=256), tmp_path, progress=False)
    assert len(rows) == 4 and all(np.isfinite(row["loss"]) for row in rows)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["config"]["normalise_observations"] and saved["env_id"] == "HalfCheetah-v5"
    result = evaluate(tmp_path, episodes=2)
    assert result["episodes"] == 2 and np.isfinite(result["return_mean"])


def test_the_agent_has_its_parts():
    """The environment wrapped as PureJaxRL wraps it: actions clipped, then observations
    normalised, then rewards scaled (outermost); no preprocessor of the agent's own."""
    agent = PPOAgent("HalfCheetah-v5", PPOConfig.for_env("HalfCheetah-v5", SMALL))
    assert agent.preprocessor is None
    rewards = agent.rollout.env
    assert isinstance(rewards, NormalizeReward) and rewards.reward_normaliser.gamma == 0.98
    observations = rewards.env
    assert isinstance(observations, NormalizeObservation)
    assert isinstance(observations.observation_normaliser, ObservationNormaliser)
    assert agent.observation_normaliser is observations.observation_normaliser
    clip = observations.env
    assert isinstance(clip, ClipAction) and isinstance(clip.env, Environment)
    np.testing.assert_array_equal(clip.low, -np.ones(6))
    np.testing.assert_array_equal(clip.high, np.ones(6))
    with pytest.warns(DeprecationWarning, match="action_bounds is deprecated"):
        low, high = agent.action_bounds  # the old spelling, one release
    np.testing.assert_array_equal(low, clip.low)
    with pytest.warns(DeprecationWarning, match="reward_normaliser is deprecated"):
        assert isinstance(agent.reward_normaliser, RewardNormaliser)


def test_settings_that_cannot_hold_together_are_clear_errors():
    with pytest.raises(ValueError, match=r"NormalizeObservation: the observations must be a "
                                         r"float Box .*, got Dict\(legal=bool\[7\]"):
        PPOAgent("ConnectFour-v0", PPOConfig(normalise_observations=True))
    with pytest.raises(ValueError, match="ClipAction: the action space must be a Box with "
                                         "finite bounds, got Discrete"):
        PPOAgent("CartPole-v1", PPOConfig(clip_actions=True))


def test_bootstrap_truncated_equals_stable_baselines3s_rule():
    # SB3's collect_rollouts: rewards[idx] += gamma * terminal_value where the episode was
    # truncated (TimeLimit.truncated); here final_value is 0 where it was not
    rng = np.random.default_rng(0)
    reward = rng.normal(size=(5, 3)).astype(np.float32)
    truncated = rng.random((5, 3)) < 0.3
    terminal_value = rng.normal(size=(5, 3)).astype(np.float32)
    expected = reward.copy()
    for t, i in zip(*np.nonzero(truncated), strict=True):
        expected[t, i] += 0.98 * terminal_value[t, i]
    got = bootstrap_truncated(reward, np.where(truncated, terminal_value, 0.0), 0.98)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="must have one shape"):
        bootstrap_truncated(reward, terminal_value[0], 0.98)


def test_bootstrapped_iterations_on_hopper(tmp_path):
    # the rollout that records V(final observation) runs and learns (its arithmetic is
    # bootstrap_truncated's, tested above)
    config = PPO().config("Hopper-v5", {**SMALL, "bootstrap_truncated": True})
    rows = train(RunSpec.make("Hopper-v5", "ppo", config, steps=256), tmp_path, progress=False)
    assert len(rows) == 4 and all(np.isfinite(row["loss"]) for row in rows)
