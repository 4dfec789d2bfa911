"""DQN end to end, kept small: it trains, keeps its replay and target network in its state,
evaluates, and refuses continuous actions and bad configs."""

import dataclasses

import numpy as np
import pytest

from backends import xla
from components.agents import DQNConfig
from components.training import RunSpec, evaluate, train
from components.training.algorithms import DQN
from metagraph.spaces import Bool

SMALL = DQNConfig(num_envs=2, rollout=4, n_step=2, buffer_size=256, batch_size=8,
                  updates_per_iteration=2, target_every=4, hidden=(8,), iterations_per_call=4)


def test_dqn_trains_and_keeps_replay_and_target(tmp_path):
    metrics = train(RunSpec.make("CartPole-v1", "dqn", SMALL, seed=0, steps=128), tmp_path,
                    progress=False)
    assert len(metrics) == 16 and metrics[-1]["env_steps"] == 128
    assert all(np.isfinite(m["loss"]) for m in metrics)
    exe = xla.lower(DQN().build("CartPole-v1", SMALL, 128, 1))
    exe.load_checkpoint(tmp_path / "checkpoint.npz")
    assert int(np.asarray(exe.get_state("dqn_agent/replay")["size"])) == 128
    state = exe.get_state("dqn_agent")
    assert int(state["iteration"]) == 16  # the target was copied at iterations 4, 8, 12, 16
    online = exe.get_state("dqn_agent/q_network")["params"]
    for a, b in zip(np.asarray(state["target_params"]["mlp/~/linear_0"]["w"]).ravel(),
                    np.asarray(online["mlp/~/linear_0"]["w"]).ravel(), strict=True):
        assert a == b
    assert evaluate(tmp_path, episodes=2)["episodes"] == 2


def test_dqn_refuses_continuous_actions_and_bad_configs():
    with pytest.raises(ValueError, match="DQN needs discrete actions"):
        DQN().build("Pendulum-v1", SMALL, 100, 1)
    with pytest.raises(ValueError, match="epsilon_fraction"):
        DQNConfig(epsilon_fraction=0.0)


def test_several_seeds_train_at_once(tmp_path):
    """`--seeds 2`: the replay's empty check under vmap refused every sample before."""
    metrics = train(RunSpec.make("CartPole-v1", "dqn", SMALL, seed=0, seeds=2, steps=64),
                    tmp_path, progress=False)
    assert metrics[-1]["env_steps"] == 64 and np.isfinite(metrics[-1]["loss"])


def test_cartpole_takes_the_reference_recipe():
    """CleanRL's and PureJaxRL's dqn.py settings (configs/dqn.toml), a truncation
    bootstrapped; another environment keeps DQNConfig's own defaults."""
    recipe = DQNConfig.for_env("CartPole-v1")
    assert (recipe.num_envs, recipe.buffer_size, recipe.batch_size, recipe.learning_rate,
            recipe.target_every * recipe.num_envs * recipe.rollout, recipe.hidden,
            recipe.td_loss, recipe.alpha, recipe.bootstrap_truncated) == \
        (10, 10_000, 128, 2.5e-4, 500, (120, 84), "squared", 0.0, True)
    assert DQNConfig.for_env("Acrobot-v1") == DQNConfig()
    assert DQNConfig.for_env("CartPole-v1", {"num_envs": 4}).num_envs == 4


def test_minatar_takes_the_recipe_with_the_minatar_network(tmp_path):
    """MinAtar's shipped defaults: the CartPole recipe with the MinAtar paper's network, a
    Q-network of one convolution over the planes; a few iterations on Breakout train and
    evaluate; a CNN over observations without planes is a clear error."""
    from components.agents import DQNAgent
    from components.networks import CNN

    recipe = DQNConfig.for_env("MinAtar-Breakout-v0")
    assert (recipe.num_envs, recipe.buffer_size, recipe.batch_size, recipe.learning_rate,
            recipe.target_every * recipe.num_envs, recipe.cnn_channels, recipe.hidden,
            recipe.env_kwargs) == (10, 100_000, 128, 2.5e-4, 1000, (16,), (128,),
                                   {"minimal_action_set": True})
    assert DQNConfig.for_env("Asterix-MinAtar") == DQNConfig.for_env("MinAtar-Asterix-v0")
    small = DQNConfig.for_env("MinAtar-Breakout-v0", {
        "buffer_size": 256, "batch_size": 8, "hidden": [8], "cnn_channels": [2],
        "learning_starts": 0, "iterations_per_call": 4, "num_envs": 2})
    agent = DQNAgent("MinAtar-Breakout-v0", small)
    q = agent.q_network
    assert isinstance(q, CNN) and (q.input_shape, q.outputs) == (None, 3)  # planes as they are
    assert agent.replay.record_space.spaces["obs"] == Bool((10, 10, 4), batch=True)  # bytes
    metrics = train(RunSpec.make("MinAtar-Breakout-v0", "dqn", small, steps=16), tmp_path,
                    progress=False)
    assert len(metrics) == 8 and all(np.isfinite(m["loss"]) for m in metrics)
    assert evaluate(tmp_path, episodes=2)["episodes"] == 2
    with pytest.raises(ValueError, match=r"DQNAgent: cnn_channels needs images \[H, W, C\] "
                                         r"or planes; CartPole-v1's observations"):
        DQNAgent("CartPole-v1", dataclasses.replace(SMALL, cnn_channels=(4,)))


def test_a_truncated_step_bootstraps_from_its_final_observation():
    """Transitions of 2 steps from a hand-made trajectory of 4 steps in 2 environments:
    environment 0 truncated at step 1, environment 1 terminated at step 2. A window ending
    at the truncation bootstraps from its final observation with gamma^k; at the
    termination with 0; elsewhere from the observation n steps on."""
    from components.agents import DQNAgent
    from components.agents.rollout import Trajectory

    config = dataclasses.replace(SMALL, n_step=2, gamma=0.5, bootstrap_truncated=True)
    agent = DQNAgent("CartPole-v1", config)
    obs = np.arange(4 * 2 * 4, dtype=np.float32).reshape(4, 2, 4)  # distinct observations
    final = obs + 100.0  # what each step reached (before an auto-reset)
    truncated = np.zeros((4, 2), bool)
    terminated = np.zeros((4, 2), bool)
    truncated[1, 0] = terminated[2, 1] = True
    rewards = np.ones((4, 2), np.float32)
    trajectory = Trajectory(obs, np.zeros((4, 2), np.int32), rewards, terminated, truncated,
                            final, (), np.zeros((4, 2)), final[-1])
    records = agent._transitions(trajectory)
    got = {name: np.asarray(value).reshape(4, 2, *np.shape(value)[1:])
           for name, value in records.items()}
    # environment 0: steps 0-1 end at the truncation (step 1), then 2-3
    np.testing.assert_allclose(got["reward"][:, 0], [1.5, 1.0, 1.5, 1.0])
    np.testing.assert_allclose(got["discount"][:, 0], [0.25, 0.5, 0.25, 0.5])
    np.testing.assert_array_equal(got["next_obs"][:, 0], final[[1, 1, 3, 3], 0])
    # environment 1: steps 0-2 end at the termination (step 2)
    np.testing.assert_allclose(got["reward"][:, 1], [1.5, 1.5, 1.0, 1.0])
    np.testing.assert_allclose(got["discount"][:, 1], [0.25, 0.0, 0.0, 0.5])
    np.testing.assert_array_equal(got["next_obs"][[0, 3], 1], final[[1, 3], 1])
