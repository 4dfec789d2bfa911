"""DQN on Atari: CleanRL's dqn_atari.py recipe shipped for every ale-py game (the family's
group of defaults), the Nature CNN over the stacked uint8 frames, which the replay keeps as
bytes (each frame once: the same run as with whole observations), a few iterations through
`train`, and `evaluate` scoring the raw game."""

import numpy as np
import pytest

pytest.importorskip("ale_py")

from components.agents import DQNAgent, DQNConfig  # noqa: E402
from components.networks import CNN  # noqa: E402
from components.replay import FrameStackReplay  # noqa: E402
from components.training import RunSpec, evaluate, train  # noqa: E402
from components.training.algorithms.iterative import DQN  # noqa: E402


def test_every_atari_game_takes_cleanrls_dqn_recipe():
    config = DQNConfig.for_env("ALE/Pong-v5")
    assert (config.num_envs, config.rollout, config.updates_per_iteration, config.batch_size,
            config.buffer_size, config.replay_frames) == (4, 1, 1, 32, 1_000_000, True)
    assert (config.learning_rate, config.max_grad_norm, config.td_loss, config.double,
            config.n_step, config.alpha) == (1e-4, 0.0, "squared", False, 1, 0.0)
    assert (config.target_every * 4, config.learning_starts, config.epsilon_end,
            config.epsilon_fraction) == (1000, 80_000, 0.01, 0.1)
    assert (config.cnn_channels, config.cnn_kernel, config.cnn_stride, config.cnn_padding,
            config.hidden) == ((32, 64, 64), (8, 4, 3), (4, 2, 1), "VALID", (512,))
    assert config.door == "host" and config.env_kwargs == {
        "episodic_life": True, "reward_clip": True, "repeat_action_probability": 0.0}


def test_the_q_network_is_the_nature_cnn_and_the_replay_keeps_each_frame_once():
    config = DQNConfig.for_env("Pong-v5", {"buffer_size": 64, "num_envs": 2})
    agent = DQNAgent("Pong-v5", config, 1000)
    q = agent.q_network
    assert isinstance(q, CNN) and q.channels_first and q.padding == "VALID"
    assert q.input_shape is None  # the frames as they come, channels first
    assert isinstance(agent.replay, FrameStackReplay)
    assert agent.replay.dtype == np.uint8 and agent.replay.frame_shape == (84, 84)
    assert (agent.replay.stack, agent.replay.steps) == (4, 32)
    assert agent.optimizer.max_grad_norm is None  # CleanRL's: unclipped
    whole = DQNAgent("Pong-v5", DQNConfig.for_env("Pong-v5", {
        "buffer_size": 64, "num_envs": 2, "replay_frames": False}), 1000)
    obs = whole.replay.record_space.spaces["obs"]
    assert obs.dtype == np.uint8 and obs.shape == (4, 84, 84)
    with pytest.raises(ValueError, match="replay_frames: expected false with alpha > 0"):
        DQNConfig.for_env("Pong-v5", {"alpha": 0.5})
    with pytest.raises(ValueError, match="replay_frames needs observations that stack frames"):
        DQNAgent("CartPole-v1", DQNConfig(replay_frames=True, alpha=0.0), 1000)


SMALL = {"num_envs": 2, "buffer_size": 64, "batch_size": 8, "learning_starts": 16,
         "hidden": [16], "cnn_channels": [4, 4, 4], "iterations_per_call": 8,
         "target_every": 4, "n_step": 3,
         "env_kwargs": {"img_height": 42, "img_width": 42, "max_episode_steps": 12}}


def test_a_few_iterations_on_pong_train_and_evaluate_on_the_raw_score(tmp_path):
    config = DQN().config("Pong-v5", SMALL)
    rows = train(RunSpec.make("Pong-v5", "dqn", config, steps=2 * 8 * 4), tmp_path / "whole",
                 progress=False)
    assert len(rows) == 32 and all(np.isfinite(row["loss"]) for row in rows[-8:])
    result = evaluate(tmp_path / "whole", episodes=2)
    assert result["episodes"] == 2 and np.isfinite(result["return_mean"])
    # the frames shared between transitions (FrameStackReplay): the same transitions, drawn
    # at the same indices, so the same run while the replay has not wrapped (episodes of 12
    # steps: resets inside it)
    shared = DQN().config("Pong-v5", {**SMALL, "replay_frames": True})
    again = train(RunSpec.make("Pong-v5", "dqn", shared, steps=2 * 8 * 4),
                  tmp_path / "shared", progress=False)
    assert [row["loss"] for row in again] == [row["loss"] for row in rows]
    assert [row.get("episode_return_mean") for row in again] == [
        row.get("episode_return_mean") for row in rows]
