"""`EpisodeStatistics` against Gymnasium's own vector `RecordEpisodeStatistics` (same-step
auto-reset) over the same rewards and ends: each step's "episode_return" and "episode_length"
are Gymnasium's `info["episode"]["r"]` and `["l"]` where an episode ended, 0 elsewhere; the
returns stay the task's under a wrapper that scales rewards, and equal what a `Rollout`
reports; `finished_episodes` against a NumPy loop; the counts start again at `reset`."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.wrappers.vector import RecordEpisodeStatistics
from random_rollouts import ScriptedVectorEnv, rolled_out

from components.envs import Environment
from components.envs.wrappers import (
    EPISODE_LENGTH,
    EPISODE_RETURN,
    EpisodeStatistics,
    NormalizeReward,
    Running,
    finished_episodes,
)

N, STEPS = 4, 60


def gymnasiums(rewards, done):
    """Gymnasium's statistics of the scripted stream: [T, N] returns and lengths of the
    episodes ended at each step, 0 elsewhere."""
    rewards, done = np.asarray(rewards, np.float64), np.asarray(done)
    env = RecordEpisodeStatistics(ScriptedVectorEnv(
        np.zeros((len(rewards) + 1, N, 1), np.float32), rewards, done,
        gymnasium.vector.AutoresetMode.SAME_STEP))
    env.reset()
    returns, lengths = np.zeros(rewards.shape), np.zeros(rewards.shape, int)
    for t in range(len(rewards)):
        info = env.step(np.zeros(N, int))[-1]
        if "episode" in info:
            ended = info["_episode"]
            returns[t, ended] = info["episode"]["r"][ended]
            lengths[t, ended] = info["episode"]["l"][ended]
    return returns, lengths


def test_the_statistics_equal_gymnasiums_and_stay_the_tasks_under_scaled_rewards():
    _, raw = rolled_out(Environment("CartPole-v1", N), STEPS)
    assert raw["done"].sum() >= 4  # several episodes end (CartPole's random ones: ~20 steps)
    returns, lengths = gymnasiums(raw["reward"], raw["done"])
    _, seen = rolled_out(EpisodeStatistics(NormalizeReward(Environment("CartPole-v1", N),
                                                           gamma=0.9, clip=1.0)), STEPS)
    np.testing.assert_array_equal(seen["done"], raw["done"])  # the same actions, same episodes
    assert not np.allclose(seen["reward"], raw["reward"])  # the rewards the agent sees scaled
    np.testing.assert_allclose(seen["extras"][EPISODE_RETURN], returns, rtol=1e-6)
    np.testing.assert_array_equal(seen["extras"][EPISODE_LENGTH], lengths)
    assert seen["extras"][EPISODE_LENGTH].dtype == np.int32
    np.testing.assert_allclose(seen["extras"][EPISODE_RETURN], seen["returns"], rtol=1e-6)


def test_reset_starts_the_counts_again():
    """Each collection resets first: after the second, an episode under way counts the steps
    since its last end in that collection, or since the reset (10, not 20)."""
    test, _ = rolled_out(EpisodeStatistics(Environment("CartPole-v1", N)), 10)
    second = test.collect(np.asarray(jax.random.PRNGKey(5)))
    since_end = np.where(second["done"].any(0), np.argmax(second["done"][::-1], 0), 10)
    state = test.get_state("random_rollout/rollout/env")
    np.testing.assert_array_equal(state[EPISODE_LENGTH], since_end)
    assert (since_end == 10).any()  # an episode longer than a collection, counted from reset


def test_finished_episodes_equals_a_numpy_loop():
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(30, 3)).astype(np.float32)
    done = rng.random((30, 3)) < 0.2
    running = Running.zeros(3)
    ret, length = np.zeros(3), np.zeros(3, int)
    for reward, ended in zip(rewards, done, strict=True):
        running, finished = finished_episodes(running, jnp.asarray(reward), jnp.asarray(ended))
        ret, length = ret + reward, length + 1
        np.testing.assert_allclose(finished.returns, np.where(ended, ret, 0.0), rtol=1e-5)
        np.testing.assert_array_equal(finished.lengths, np.where(ended, length, 0))
        ret, length = np.where(ended, 0.0, ret), np.where(ended, 0, length)
    np.testing.assert_allclose(running.returns, ret, rtol=1e-5)
