"""PPO on Atari: CleanRL's ppo_atari_envpool recipe shipped for every ale-py game (the family's
group of defaults), the Nature CNN over the stacked frames channels first, a few iterations
through `train`, and `evaluate` scoring the raw game (no clipping, no episodic life)."""

import numpy as np
import pytest

pytest.importorskip("ale_py")

from short_runs import ppo_trains_and_evaluates  # noqa: E402

from components.agents import PPOAgent, PPOConfig  # noqa: E402
from components.envs.engine.catalogue import scored_kwargs  # noqa: E402
from components.networks import CNN  # noqa: E402

SMALL = {"num_envs": 2, "num_steps": 16, "minibatches": 1, "epochs": 1, "hidden": [16],
         "cnn_channels": [4, 4, 4], "iterations_per_call": 2,
         "env_kwargs": {"img_height": 42, "img_width": 42, "max_episode_steps": 60}}
IMPROVES_AFTER = 245_760  # steps (240 iterations of 8 x 128), about 1M frames: greedy 9.0 ±
# 1.0 over the 8 episodes against random's 1.375 when measured (2026-11-29, 2 cores, 21 min)


def test_every_atari_game_takes_cleanrls_recipe():
    config = PPOConfig.for_env("ALE/Pong-v5")
    assert (config.num_envs, config.num_steps, config.epochs, config.minibatches) == \
        (8, 128, 4, 4)
    assert (config.learning_rate, config.anneal_lr, config.clip, config.entropy_coef) == \
        (2.5e-4, True, 0.1, 0.01)
    assert (config.cnn_channels, config.cnn_kernel, config.cnn_stride, config.cnn_padding,
            config.hidden, config.value) == \
        ((32, 64, 64), (8, 4, 3), (4, 2, 1), "VALID", (512,), "shared")
    assert config.door == "host"
    assert config.env_kwargs == {"episodic_life": True, "reward_clip": True,
                                 "repeat_action_probability": 0.0}
    assert PPOConfig.for_env("MsPacman-v5") == PPOConfig.for_env("ALE/MsPacman-v5")
    # evaluation plays the game as it is scored, whatever the run trained with
    assert scored_kwargs("Pong-v5", config.env_kwargs) == {
        "episodic_life": False, "reward_clip": False, "repeat_action_probability": 0.0}
    assert scored_kwargs("CartPole-v1", {"a": 1}) == {"a": 1}
    with pytest.raises(ValueError, match="cnn_kernel: expected a positive int, or a list"):
        PPOConfig(cnn_kernel=(8, 0))
    with pytest.raises(ValueError, match="cnn_padding: expected 'SAME' or 'VALID'"):
        PPOConfig(cnn_padding="valid")


def test_the_policy_is_the_nature_cnn_over_channels_first_frames():
    agent = PPOAgent("Pong-v5", PPOConfig.for_env("Pong-v5", {"num_envs": 2}))
    torso = agent.policy.torso
    assert isinstance(torso, CNN) and torso.channels_first
    assert (torso.input_shape, torso.kernels, torso.strides, torso.padding) == \
        (None, (8, 4, 3), (4, 2, 1), "VALID")
    space = agent.rollout.env.observation_space
    assert space.dtype == np.uint8 and space.shape == (4, 84, 84)  # frames stay bytes


def test_a_few_iterations_on_breakout_train_and_evaluate_on_the_raw_score(tmp_path):
    ppo_trains_and_evaluates("Breakout-v5", SMALL, 128, tmp_path, actions=4)
    # a video shows the frames the agent sees (ale-py's state cannot be set in a renderer)
    from PIL import Image

    from components.training import load
    from components.training.evaluation.video import frames, record_video

    agent = load(tmp_path)
    seen = frames(agent.predict, "Breakout-v5", "host", height=84,
                  env_kwargs={"img_height": 42, "img_width": 42, "max_episode_steps": 60})
    assert len(seen) == 60 and seen[0].shape == (84, 84, 3)  # 42 x 42 frames, doubled
    path = record_video(agent, tmp_path / "breakout.gif", height=84)
    with Image.open(path) as video:
        assert video.size == (84, 84)


def random_returns(env_id: str, episodes: int, seed: int) -> np.ndarray:
    """The raw score of `episodes` episodes of uniformly random actions, the game played as
    `evaluate` plays it (`scored_kwargs` over the recipe's keyword arguments)."""
    from components.envs import make

    kwargs = scored_kwargs(env_id, PPOConfig.for_env(env_id).env_kwargs)
    env = make(env_id, episodes, seed=seed, **kwargs)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns, running = np.zeros(episodes), np.ones(episodes, bool)
    while running.any():
        _, reward, terminated, truncated, _ = env.step(
            rng.integers(0, env.single_action_space.n, episodes))
        returns += reward * running
        running &= ~(terminated | truncated)
    env.close()
    return returns


@pytest.mark.slow  # IMPROVES_AFTER steps: about 21 minutes on 2 cores
def test_ppo_improves_on_random_at_breakout(tmp_path):
    """CleanRL's recipe as shipped, a short run: its greedy policy scores more than random
    play on the raw game (5 lives, unclipped), the same seeds."""
    from components.training import RunSpec, evaluate, train
    from components.training.algorithms.iterative import PPO

    config = PPO().config("Breakout-v5", {})
    train(RunSpec.make("Breakout-v5", "ppo", config, steps=IMPROVES_AFTER), tmp_path,
          progress=False)
    trained = evaluate(tmp_path, episodes=8, seed=1)["return_mean"]
    random = random_returns("Breakout-v5", 8, seed=1).mean()
    assert trained >= 2 * random + 2, (trained, random)
