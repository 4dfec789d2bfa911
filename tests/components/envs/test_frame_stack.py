"""`FrameStack` against Gymnasium's own `FrameStackObservation` (its default padding, "reset")
over the same episodes: each step's stacks and the ended episodes' last stacks, in graph and
on the host (`HostFrameStack`, what an evaluation keeps); an agent trained on stacks acts on
stacks, and `metagraph evaluate` keeps them (its score is that of a loop written here with
Gymnasium's wrapper); bad settings are refused by name."""

from __future__ import annotations

import functools

import gymnasium
import jax
import numpy as np
import pytest
from command_line import SHORT_PPO, evaluated_mean, metagraph
from gymnasium.wrappers import FrameStackObservation
from random_rollouts import ScriptedVectorEnv, rolled_out

from components.agents.parts import cnn_input_shape
from components.envs import Environment, make
from components.envs.wrappers import (
    ClipAction,
    EnvironmentWrapper,
    FlattenObservation,
    FrameStack,
    HostFrameStack,
    NormalizeObservation,
    host_environment,
    task_observation_space,
)
from components.training import load

N, STEPS, K = 3, 50, 3


class Replayed(gymnasium.Env):
    """One environment's episodes replayed: `reset` gives the next episode's first
    observation, `step` its next one (terminated at the episode's last; the last episode is
    under way)."""

    def __init__(self, episodes: list[list[np.ndarray]]):
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, episodes[0][0].shape,
                                                      np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.episodes, self.episode, self.t = episodes, -1, 0

    def reset(self, *, seed=None, options=None):
        self.episode, self.t = self.episode + 1, 0
        return self.episodes[self.episode][0], {}

    def step(self, action):
        self.t += 1
        observations = self.episodes[self.episode]
        ended = self.t == len(observations) - 1 and self.episode < len(self.episodes) - 1
        return observations[self.t], 0.0, ended, False, {}


def episodes_of(raw: dict, n: int) -> list[list[np.ndarray]]:
    """Environment `n`'s episodes in a raw rollout: each its observations in order."""
    episodes, current = [], [raw["obs"][0, n]]
    for t in range(STEPS):
        current.append(raw["final_obs"][t, n])
        if raw["done"][t, n]:
            episodes.append(current)
            current = [raw["obs"][t + 1, n] if t + 1 < STEPS else raw["last_obs"][n]]
    return [*episodes, current]


def gymnasiums(raw: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gymnasium's stacks of environment `n`: before each step and after it (the final)."""
    env = FrameStackObservation(Replayed(episodes_of(raw, n)), K)
    before, after = [], []
    obs, _ = env.reset()
    for t in range(STEPS):
        before.append(obs)
        obs, _, terminated, _, _ = env.step(0)
        after.append(obs)
        assert terminated == raw["done"][t, n]
        if terminated:
            obs, _ = env.reset()
    return np.stack(before), np.stack(after)


class StartedAt(gymnasium.Wrapper):
    """Gymnasium's CartPole reset to a given state (the native pool's first)."""

    def __init__(self, env: gymnasium.Env, start: np.ndarray):
        super().__init__(env)
        self.start = start

    def reset(self, **kwargs):
        self.env.reset(**kwargs)
        self.env.unwrapped.state = np.asarray(self.start, np.float64)
        return np.asarray(self.start, np.float32), {}


@pytest.fixture(scope="module")
def streams():
    _, raw = rolled_out(Environment("CartPole-v1", N), STEPS)
    _, seen = rolled_out(FrameStack(Environment("CartPole-v1", N), K), STEPS)
    return raw, seen


def test_the_stacks_equal_gymnasiums_frame_stack_observation(streams):
    raw, seen = streams
    assert raw["done"].sum() >= 4  # episodes end and start again inside the rollout
    np.testing.assert_array_equal(seen["done"], raw["done"])  # the same actions, episodes
    assert seen["obs"].shape == (STEPS, N, K, 4) and seen["obs"].dtype == np.float32
    for n in range(N):
        before, after = gymnasiums(raw, n)
        np.testing.assert_array_equal(seen["obs"][:, n], before)
        np.testing.assert_array_equal(seen["final_obs"][:, n], after)


def test_the_host_keeps_the_same_stacks(streams):
    """`HostFrameStack` over the same observations and ends (a same-step auto-reset vector
    env replaying them) gives the stacks the wrapper gave in graph."""
    raw, seen = streams
    shown = np.concatenate([raw["obs"], raw["last_obs"][None]])
    host = HostFrameStack(ScriptedVectorEnv(shown, None, raw["done"],
                                            gymnasium.vector.AutoresetMode.SAME_STEP), K)
    obs, _ = host.reset()
    for t in range(STEPS):
        np.testing.assert_array_equal(obs, seen["obs"][t])
        obs = host.step(np.zeros(N, int))[0]
    np.testing.assert_array_equal(obs, seen["last_obs"])  # (the stacks after the last step)


def test_an_agent_acts_on_stacks_and_the_acting_path_keeps_them():
    env = FlattenObservation(FrameStack(Environment("CartPole-v1", 2), K))
    assert env.observation_space.shape == (K * 4,)
    assert task_observation_space(env).shape == (K, 4)  # the acting APIs take stacks
    pool = make("CartPole-v1", 2, seed=0)
    stacked = host_environment(env, pool)
    obs, _ = stacked.reset(seed=0)
    assert obs.shape == (2, K, 4)
    under = FrameStack(NormalizeObservation(Environment("CartPole-v1", 2)), K)
    with pytest.raises(ValueError, match="NormalizeObservation changes the observations "
                                         "under FrameStack"):
        host_environment(under, pool)
    clipped = FrameStack(ClipAction(Environment("Pendulum-v1", 2)), K)  # actions: no matter
    assert host_environment(clipped, pool) is not pool
    pool.close()


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="FrameStack: num_stack"):
        FrameStack(Environment("CartPole-v1", 2), 0)
    with pytest.raises(ValueError, match="FrameStack: a game's observations"):
        FrameStack(Environment("ConnectFour-v0", 2), 2)


def test_a_cnn_agent_reads_stacks_of_images(tmp_path):
    """PPO's CNN over MinAtar's planes stacked twice ([2, 10, 10, 4] bool) folds the stack
    into its channels: it trains, and evaluates on stacks kept on the host."""
    assert cnn_input_shape("PPOAgent", "MinAtar-Breakout-v0",
                           FrameStack(Environment("MinAtar-Breakout-v0", 2), 2)) is None
    out = tmp_path / "run"
    metagraph(tmp_path, "train", "MinAtar-Breakout-v0", *SHORT_PPO, "--set", "frame_stack=2",
              "--set", "cnn_channels=[4]", "--out", str(out))
    assert load(out).observation_shape == (2, 10, 10, 4)
    assert np.isfinite(evaluated_mean(tmp_path, out, 2)[0])


def test_a_run_trained_on_stacks_evaluates_on_stacks(tmp_path):
    """`--set frame_stack=3`: the agent's acting API takes [3, 4] stacks, `predict` takes
    them, and `metagraph evaluate` scores the greedy policy on stacks kept on the host: the
    same mean as a loop over Gymnasium's `FrameStackObservation` around Gymnasium's CartPole
    started in the native pool's states."""
    out = tmp_path / "run"
    metagraph(tmp_path, "train", "CartPole-v1", *SHORT_PPO, "--set", f"frame_stack={K}", "--out",
              str(out))
    agent = load(out)
    assert agent.observation_shape == (K, 4)
    with pytest.raises(ValueError, match=r"predict takes an observation of shape \(3, 4\)"):
        agent.predict(np.zeros(4, np.float32))
    episodes = 4
    mean, _ = evaluated_mean(tmp_path, out, episodes)
    pool = make("CartPole-v1", episodes, seed=12345)
    starts = pool.reset(seed=12345)[0]
    returns = []
    for n in range(episodes):
        single = FrameStackObservation(StartedAt(gymnasium.make("CartPole-v1"), starts[n]), K)
        obs, _ = single.reset(seed=0)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = single.step(int(agent.predict(obs)))
            total, done = total + reward, terminated or truncated
        returns.append(total)
    pool.close()
    assert mean == pytest.approx(np.mean(returns), abs=1e-9), (mean, returns)
    assert jax.tree.leaves(agent.state)  # (the run loaded whole)


class Doubled(EnvironmentWrapper):
    """A user's wrapper that acting repeats on the host (its own `host_wrapper`)."""

    def observation(self, obs):
        return obs * 2.0

    def host_wrapper(self):
        return functools.partial(gymnasium.wrappers.vector.TransformObservation,
                                 func=lambda obs: obs * 2.0)


def test_a_users_wrapper_with_a_host_wrapper_is_repeated_on_the_host():
    env = Doubled(Environment("CartPole-v1", 2))
    assert task_observation_space(env) == env.observation_space  # what acting takes
    pool = gymnasium.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    own = gymnasium.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    hosted = host_environment(env, pool)
    np.testing.assert_array_equal(hosted.reset(seed=3)[0], 2.0 * own.reset(seed=3)[0])
    pool.close()
    own.close()
