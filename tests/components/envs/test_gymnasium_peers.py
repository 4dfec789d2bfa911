"""Gymnasium's own expectations of its environments, asked of ours: pickling (its
`test_pickle_env`), the vector env's `np_random_seed` and same-step `final_info` keys as
`gymnasium.vector.SyncVectorEnv` sets them."""

import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import components.envs as envs


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_pickle_env(env_id):
    # Gymnasium's tests/envs/test_envs.py::test_pickle_env, on metagraph/<id>
    env = gymnasium.make(f"metagraph/{env_id}")
    action = env.action_space.sample()
    env_reset = env.reset(seed=123)
    env_step = env.step(action)
    pickled_env = pickle.loads(pickle.dumps(env))
    pickle_reset = pickled_env.reset(seed=123)
    pickle_step = pickled_env.step(action)
    assert data_equivalence(env_reset, pickle_reset)
    assert data_equivalence(env_step, pickle_step)
    env.close()
    pickled_env.close()


def test_a_pickled_vector_env_goes_on_where_the_original_is():
    env = envs.make("Acrobot-v1", 3, seed=5)
    actions = np.array([0, 1, 2], np.int32)
    for _ in range(7):
        env.step(actions)
    copy = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(copy.elapsed_steps(), [7, 7, 7])
    for _ in range(600):  # through the time limit: the copy's random streams restart alike
        a, b = env.step(actions), copy.step(actions)
        assert data_equivalence(a, b, exact=True)
    env.close()
    copy.close()
    with pytest.raises(RuntimeError, match="closed"):  # a closed pool stays closed
        pickle.loads(pickle.dumps(copy)).step(actions)


def test_np_random_seed_is_the_reset_seed():
    env = envs.make("CartPole-v1", 3)
    env.reset(seed=42)
    reference = gymnasium.vector.VectorEnv()
    reference.reset(seed=42)
    assert env.np_random_seed == reference.np_random_seed == 42
    assert env.np_random.integers(2**62) == reference.np_random.integers(2**62)


def done_infos(env, actions):
    """The info of the first step where an episode ended."""
    env.reset(seed=0)
    for _ in range(600):
        _, _, terminated, truncated, info = env.step(actions)
        if (terminated | truncated).any():
            return info, terminated | truncated
    raise AssertionError("no episode ended")


def test_same_step_autoreset_sets_the_keys_sync_vector_env_sets():
    actions = np.array([0, 1, 1], np.int32)
    ours, done = done_infos(envs.make("CartPole-v1", 3), actions)
    sync = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3,
                         autoreset_mode=AutoresetMode.SAME_STEP)
    theirs, their_done = done_infos(sync, actions)
    assert sorted(ours) == sorted(theirs) == ["_final_info", "_final_obs", "final_info",
                                              "final_obs"]
    assert ours["final_info"] == theirs["final_info"] == {}
    np.testing.assert_array_equal(ours["_final_info"], done)
    np.testing.assert_array_equal(theirs["_final_info"], their_done)
    assert ours["_final_info"].dtype == theirs["_final_info"].dtype == np.bool_
