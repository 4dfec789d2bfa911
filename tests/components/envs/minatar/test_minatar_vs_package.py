"""Each MinAtar game against the `minatar` package's own (Young and Tian's code), in lockstep
from the same seeds (package_reference.py): several environments of a host pool, thousands of
random actions, sticky actions on, with and without difficulty ramping; every observation,
reward and termination equal, including the last observation of each episode and the first
of the next."""

from __future__ import annotations

import numpy as np
import pytest
from package_reference import PackageEnvironment

import components.envs as envs
from components.envs.minatar import TASKS

pytest.importorskip("minatar")

STEPS = {"MinAtar-Freeway-v0": 2600}  # the package's Freeway ends after 2501 steps
# random actions, but Freeway's chicken mostly going up (it crosses, and is rewarded)
WEIGHTS = {"MinAtar-Freeway-v0": [0.1, 0.1, 0.5, 0.1, 0.1, 0.1]}


@pytest.mark.parametrize("ramping", [True, False])
@pytest.mark.parametrize("env_id", list(TASKS))
def test_a_game_steps_as_the_packages_own(env_id, ramping):
    game = TASKS[env_id][1]
    n, seed, steps = 4, 11, STEPS.get(env_id, 1500)
    pool = envs.make(env_id, n, seed=seed, num_threads=2, difficulty_ramping=ramping,
                     max_episode_steps=steps + 1)  # episodes end by the game's own rules
    obs, _ = pool.reset(seed=seed)
    package = [PackageEnvironment(game, seed, i, difficulty_ramping=ramping) for i in range(n)]
    for i, reference in enumerate(package):
        np.testing.assert_array_equal(obs[i], reference.reset())
    actions = np.random.default_rng(5).choice(6, size=(steps, n), p=WEIGHTS.get(env_id))
    rewards, ends = 0.0, 0
    for t in range(steps):
        obs, reward, terminated, truncated, info = pool.step(actions[t])
        assert not truncated.any()
        for i, reference in enumerate(package):
            expected_obs, expected_reward, terminal = reference.step(actions[t, i])
            where = f"{env_id} environment {i}, step {t}"
            assert reward[i] == expected_reward, where
            assert terminated[i] == terminal, where
            last = info["final_obs"][i] if terminal else obs[i]
            np.testing.assert_array_equal(last, expected_obs, err_msg=where)
            if terminal:
                np.testing.assert_array_equal(obs[i], reference.reset(),
                                              err_msg=where + " (the next episode)")
                ends += 1
            rewards += expected_reward
    assert ends >= 1 and rewards > 0  # the comparison saw episodes end and rewards given


@pytest.mark.parametrize("env_id", list(TASKS))
def test_the_minimal_action_set_is_the_packages(env_id):
    """With minimal_action_set, action k is the package's minimal_action_set()[k] (gymnax's
    default action set): the same lockstep comparison, shorter, with those actions."""
    game = TASKS[env_id][1]
    n, seed, steps = 3, 7, 600
    pool = envs.make(env_id, n, seed=seed, minimal_action_set=True, sticky_action_prob=0.0,
                     max_episode_steps=steps + 1)
    package = [PackageEnvironment(game, seed, i, sticky_action_prob=0.0) for i in range(n)]
    minimal = package[0].env.minimal_action_set()
    assert pool.single_action_space.n == len(minimal) < 6 or game == "seaquest"
    obs, _ = pool.reset(seed=seed)
    for i, reference in enumerate(package):
        np.testing.assert_array_equal(obs[i], reference.reset())
    actions = np.random.default_rng(3).integers(0, len(minimal), (steps, n))
    for t in range(steps):
        obs, reward, terminated, _, info = pool.step(actions[t])
        for i, reference in enumerate(package):
            expected_obs, expected_reward, terminal = reference.step(minimal[actions[t, i]])
            where = f"{env_id} environment {i}, step {t}"
            assert (reward[i], terminated[i]) == (expected_reward, terminal), where
            last = info["final_obs"][i] if terminal else obs[i]
            np.testing.assert_array_equal(last, expected_obs, err_msg=where)
            if terminal:
                np.testing.assert_array_equal(obs[i], reference.reset(), err_msg=where)
