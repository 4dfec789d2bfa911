"""The normalisers against Gymnasium's own wrappers (the references CleanRL and
rl-baselines3-zoo use): `ObservationNormaliser` equals `gymnasium.wrappers.vector.
NormalizeObservation` (then clipped, as `TransformObservation(np.clip)`), `RewardNormaliser`
equals `gymnasium.wrappers.vector.NormalizeReward` (then clipped), step by step, alone and as
the environment wrappers `NormalizeObservation` and `NormalizeReward` (whose rollouts report
the task's returns); the running moments equal NumPy's mean and variance; bad arguments are
clear errors."""

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers.vector import NormalizeObservation as NormalizeObservation_
from gymnasium.wrappers.vector import NormalizeReward as NormalizeReward_
from random_rollouts import ScriptedVectorEnv, rolled_out

from components.envs import Environment
from components.envs.wrappers import NormalizeObservation, NormalizeReward
from components.preprocessing import (
    ObservationNormaliser,
    RewardNormaliser,
    init_moments,
    update_moments,
)
from metagraph.spaces import Bool, Box
from metagraph.testing import ComponentTest

N, DIM, T = 4, 3, 25


def test_running_moments_equal_numpy():
    rows = np.random.default_rng(0).normal(2.0, 3.0, (40, DIM)).astype(np.float32)
    moments = init_moments((DIM,), epsilon=0.0)
    moments = update_moments(update_moments(moments._replace(var=np.zeros(DIM, np.float32)),
                                            rows[:15]), rows[15:])
    np.testing.assert_allclose(moments.mean, rows.mean(0), rtol=1e-5)
    np.testing.assert_allclose(moments.var, rows.var(0), rtol=1e-4)
    assert float(moments.count) == 40
    with pytest.raises(ValueError, match=r"expected a batch \[n >= 1, \*\(3,\)\]"):
        update_moments(init_moments((DIM,)), rows[:, :2])


@pytest.mark.parametrize("clip", [None, 1.5])
def test_observation_normaliser_equals_gymnasium(clip):
    obs = np.random.default_rng(1).normal(5.0, 4.0, (T + 1, N, DIM)).astype(np.float32)
    reference = NormalizeObservation_(ScriptedVectorEnv(obs))
    test = ComponentTest(ObservationNormaliser(clip=clip), {"obs": Box((DIM,), batch=True)})
    expected = [reference.reset()[0]]
    expected += [reference.step(np.zeros(N, int))[0] for _ in range(T)]
    for t in range(T + 1):  # the wrapper updates with each batch, then normalises it
        test.test(("update", obs[t]))
        want = expected[t] if clip is None else np.clip(expected[t], -clip, clip)
        np.testing.assert_allclose(test.test(("forward", obs[t])), want, rtol=1e-4, atol=1e-5)
    state = test.get_state()
    np.testing.assert_allclose(state["mean"], reference.obs_rms.mean, rtol=1e-5)
    np.testing.assert_allclose(state["var"], reference.obs_rms.var, rtol=1e-4)


@pytest.mark.parametrize("clip", [None, 2.0])
def test_reward_normaliser_equals_gymnasium(clip):
    rng = np.random.default_rng(2)
    rewards = rng.normal(1.0, 3.0, (T, N)).astype(np.float32)
    terminated = rng.random((T, N)) < 0.15
    env = ScriptedVectorEnv(np.zeros((T + 1, N, 1), np.float32), rewards, terminated,
                            gymnasium.vector.AutoresetMode.SAME_STEP)
    reference = NormalizeReward_(env, gamma=0.9)
    reference.reset()
    expected = np.stack([reference.step(np.zeros(N, int))[1] for _ in range(T)])
    if clip is not None:
        expected = np.clip(expected, -clip, clip)
    test = ComponentTest(RewardNormaliser(gamma=0.9, clip=clip),
                         {"reward": Box((10, N)), "done": Bool((10, N))})
    got = np.concatenate([test.test(("scale", [rewards[:10], terminated[:10]])),
                          test.test(("scale", [rewards[10:20], terminated[10:20]]))])
    np.testing.assert_allclose(got, expected[:20], rtol=1e-4, atol=1e-6)
    state = test.get_state()  # the returns and moments carry over from one call to the next
    probe = ScriptedVectorEnv(np.zeros((21, N, 1), np.float32), rewards[:20], terminated[:20],
                              gymnasium.vector.AutoresetMode.SAME_STEP)
    after = NormalizeReward_(probe, gamma=0.9)
    after.reset()
    for _ in range(20):
        after.step(np.zeros(N, int))
    np.testing.assert_allclose(state["return"], after.accumulated_reward, rtol=1e-4)
    np.testing.assert_allclose(state["var"], after.return_rms.var, rtol=1e-4)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="clip must be a number > 0"):
        ObservationNormaliser(clip=0)
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\]"):
        RewardNormaliser(gamma=1.5)
    with pytest.raises(ValueError, match="epsilon must be a number >= 0"):
        RewardNormaliser(epsilon=-1.0)


# ---- the same as wrappers of an environment (components.envs.wrappers) -----------------------

@pytest.mark.parametrize("clip", [None, 1.5])
def test_the_observation_wrapper_equals_gymnasium(clip):
    """`NormalizeObservation` over Pendulum gives what Gymnasium's vector wrapper gives for the
    same observations (each reset's and step's added to the moments, then normalised), and
    `observation` normalises other observations without counting them."""
    _, raw = rolled_out(Environment("Pendulum-v1", N), T)
    test, seen = rolled_out(NormalizeObservation(Environment("Pendulum-v1", N), clip=clip), T)
    stream = np.concatenate([raw["obs"], raw["last_obs"][None]])
    reference = NormalizeObservation_(ScriptedVectorEnv(stream))
    expected = [reference.reset()[0]]
    expected += [reference.step(np.zeros(N, int))[0] for _ in range(T)]
    expected = np.stack(expected if clip is None else np.clip(expected, -clip, clip))
    np.testing.assert_allclose(seen["obs"], expected[:T], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(seen["last_obs"], expected[T], rtol=1e-4, atol=1e-5)
    state = test.get_state("random_rollout/rollout/env/observation_normaliser")
    np.testing.assert_allclose(state["mean"], reference.obs_rms.mean, rtol=1e-5)
    assert float(state["count"]) == pytest.approx((T + 1) * N + 1e-4)


def test_the_reward_wrapper_equals_gymnasium_and_the_returns_stay_the_tasks():
    """`NormalizeReward` over CartPole scales the rewards as Gymnasium's vector wrapper does
    (same-step auto-reset, `done` its `terminated`), and the episode returns a rollout reports
    are the task's: those of the same actions without the wrapper."""
    steps = 60
    _, raw = rolled_out(Environment("CartPole-v1", N), steps)
    _, scaled = rolled_out(NormalizeReward(Environment("CartPole-v1", N), gamma=0.9, clip=2.0),
                           steps)
    assert raw["done"].any()
    env = ScriptedVectorEnv(np.zeros((steps + 1, N, 1), np.float32), raw["reward"], raw["done"],
                            gymnasium.vector.AutoresetMode.SAME_STEP)
    reference = NormalizeReward_(env, gamma=0.9)
    reference.reset()
    expected = np.stack([reference.step(np.zeros(N, int))[1] for _ in range(steps)])
    np.testing.assert_allclose(scaled["reward"], np.clip(expected, -2.0, 2.0), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_array_equal(scaled["done"], raw["done"])
    np.testing.assert_array_equal(scaled["returns"], raw["returns"])


def test_the_wrappers_refuse_what_they_cannot_normalise():
    with pytest.raises(ValueError, match=r"NormalizeObservation: the observations must be a "
                                         r"float Box .*, got bool\[10,10,4\]"):
        NormalizeObservation(Environment("MinAtar-Breakout-v0", 2))
    with pytest.raises(ValueError, match=r"RewardNormaliser: gamma must be a number in "):
        NormalizeReward(Environment("CartPole-v1", 2), gamma=2.0)
