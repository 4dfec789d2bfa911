"""`ActionRepeat` against Gymnasium's own environments stepped k times with each action in a
loop written here (the rewards summed, stopping at the episode's end, as Atari's frame skip
loops do), from the same states (each step's, so that float32 rounding cannot drift): an
episode ending (CartPole) or cut (Pendulum's time limit) inside a repeat ends the step there
and its environment is not stepped further; on the host (`HostActionRepeat`, what an
evaluation steps) the same up to each episode's end; a run with `action_repeat` evaluates
with repeats; what it cannot do is refused by name."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from command_line import SHORT_PPO, evaluated_mean, metagraph
from random_rollouts import rolled_out

from components.envs import Environment, make
from components.envs.wrappers import (
    ActionRepeat,
    FlattenObservation,
    HostActionRepeat,
)
from components.training import load

N, K = 3, 3
STEPS = {"CartPole-v1": 40, "Pendulum-v1": 70}  # Pendulum: its 200th step inside a repeat


def physical(env_id: str, obs: np.ndarray) -> np.ndarray:
    """The state Gymnasium's environment holds behind an observation."""
    if env_id == "Pendulum-v1":
        return np.array([np.arctan2(obs[1], obs[0]), obs[2]])
    return np.asarray(obs, np.float64)


def started(env_id: str, obs: np.ndarray) -> gymnasium.Env:
    """Gymnasium's environment (with its time limit) reset, then put in `obs`'s state."""
    env = gymnasium.make(env_id)
    env.reset(seed=0)
    env.unwrapped.state = physical(env_id, obs)
    return env


def repeated(env: gymnasium.Env, action: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """`env` stepped up to K times with `action`: its last observation, the rewards' sum, and
    whether the episode ended."""
    total = 0.0
    for _ in range(K):
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        if terminated or truncated:
            return obs, total, True
    return obs, total, False


@pytest.mark.parametrize("env_id,door", [("CartPole-v1", "native"), ("Pendulum-v1", "native"),
                                         ("CartPole-v1", "jax")])
def test_the_repeats_equal_a_loop_over_gymnasiums_environment(env_id, door):
    steps = STEPS[env_id]
    _, seen = rolled_out(ActionRepeat(Environment(env_id, N, door=door), K), steps)
    assert seen["done"].sum() >= 2  # episodes end inside the rollout
    for n in range(N):
        env = started(env_id, seen["obs"][0, n])
        for t in range(steps):
            env.unwrapped.state = physical(env_id, seen["obs"][t, n])  # (no float drift)
            action = seen["actions"][t, n]
            obs, total, done = repeated(env, int(action) if action.ndim == 0 else action)
            where = f"{env_id}, environment {n}, step {t}"
            assert bool(seen["done"][t, n]) == done, where
            np.testing.assert_allclose(seen["final_obs"][t, n], obs, rtol=1e-4, atol=1e-4,
                                       err_msg=where)
            np.testing.assert_allclose(seen["reward"][t, n], total, rtol=1e-4, atol=1e-4,
                                       err_msg=where)
            if done:  # the successor's time limit counted from its start
                env = started(env_id, seen["obs"][0, n])


def test_the_host_repeats_alike_up_to_each_episodes_end():
    pool = make("CartPole-v1", N, seed=7)
    host = HostActionRepeat(pool, K)
    obs, _ = host.reset(seed=7)
    references = [started("CartPole-v1", first) for first in obs]
    running = np.ones(N, bool)
    rng = np.random.default_rng(0)
    while running.any():
        actions = rng.integers(0, 2, N)
        obs, reward, terminated, truncated, _ = host.step(actions)
        for n in np.flatnonzero(running):
            expected, total, done = repeated(references[n], int(actions[n]))
            assert bool(terminated[n] | truncated[n]) == done
            np.testing.assert_allclose(reward[n], total)
            if not done:  # (an ended episode's observation is its successor's first)
                np.testing.assert_allclose(obs[n], expected, rtol=1e-4, atol=1e-4)
        running &= ~(terminated | truncated)
    pool.close()


def test_what_it_cannot_do_is_refused_by_name():
    with pytest.raises(ValueError, match="ActionRepeat: repeats"):
        ActionRepeat(Environment("CartPole-v1", 2), 0)
    with pytest.raises(ValueError, match="the host door's pool steps all its environments"):
        ActionRepeat(Environment("CartPole-v1", 2, door="host"), 2)
    with pytest.raises(TypeError, match="ActionRepeat: env must be an Environment"):
        ActionRepeat(FlattenObservation(Environment("MinAtar-Breakout-v0", 2)), 2)
    with pytest.raises(ValueError, match="ActionRepeat: ConnectFour-v0 is a game"):
        ActionRepeat(Environment("ConnectFour-v0", 2), 2)
    with pytest.raises(TypeError, match=r"step_where: active must be bool \[2\]"):
        Environment("CartPole-v1", 2).step_where(np.zeros(2, int), np.ones(2, int))
    with pytest.raises(TypeError, match="step_where: the host door's pool"):
        Environment("CartPole-v1", 2, door="host").step_where(np.zeros(2, int),
                                                              np.ones(2, bool))


def test_a_run_with_repeats_evaluates_with_repeats(tmp_path):
    """`--set action_repeat=3`: `metagraph evaluate` scores the greedy policy taking each
    action 3 times: the mean of the loop above over Gymnasium's CartPole from the native
    pool's first states."""
    out = tmp_path / "run"
    metagraph(tmp_path, "train", "CartPole-v1", *SHORT_PPO, "--set", f"action_repeat={K}", "--out",
              str(out))
    agent = load(out)
    episodes = 4
    mean, _ = evaluated_mean(tmp_path, out, episodes)
    pool = make("CartPole-v1", episodes, seed=12345)
    starts = pool.reset(seed=12345)[0]
    pool.close()
    returns = []
    for first in starts:
        env, obs, total, done = started("CartPole-v1", first), first, 0.0, False
        while not done:
            obs, reward, done = repeated(env, int(agent.predict(obs)))
            total += reward
        returns.append(total)
    assert mean == pytest.approx(np.mean(returns), abs=1e-9), (mean, returns)
