"""Bad input found by trying (2026-11-24, the environment engine issue), each refused with one
message naming the argument or the environment, nothing moved: MuJoCo's keyword arguments at
the edges of their types, records of the wrong layout, actions beyond float32, one dtype rule
on every door, absurd thread counts. (The MJX door's forged states and unstable steps found
then are tested in mujoco/test_mjx_twin_vs_native.py, on the step it compiles there.)"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs


@pytest.mark.parametrize(("name", "value", "error", "message"), [
    ("frame_skip", 2**31, ValueError, r"frame_skip must be in \[1, 1000000\]"),
    ("max_episode_steps", 2**63, ValueError, r"max_episode_steps must be in \[1, 2147483647\]"),
    ("main_body", 2**40, ValueError, r"main_body must be in \[0, 1000000\]"),
    ("xml_file", 5, TypeError, "xml_file must be a path"),
    ("healthy_reward", 10**400, ValueError, "healthy_reward is out of range for a float64"),
    ("reset_noise_scale", math.inf, ValueError, "reset_noise_scale must be finite"),
    ("healthy_z_range", (1.0, 0.5), ValueError, "low <= high"),
])
def test_mujoco_arguments_at_the_edges_are_named(name, value, error, message):
    env_id = "Ant-v5" if name == "main_body" else "Hopper-v5"
    with pytest.raises(error, match=rf"{env_id}: {message}" if error is ValueError
                       and name != "healthy_z_range" else message):
        envs.make(env_id, 1, **{name: value})


def test_numpy_scalars_are_taken_as_their_values():
    ours = envs.make("Hopper-v5", 2, seed=0, ctrl_cost_weight=np.float32(0.5),
                     frame_skip=np.int64(4), terminate_when_unhealthy=np.bool_(True))
    plain = envs.make("Hopper-v5", 2, seed=0, ctrl_cost_weight=float(np.float32(0.5)),
                      frame_skip=4, terminate_when_unhealthy=True)
    action = np.full((2, 3), 0.5, np.float32)
    np.testing.assert_array_equal(ours.step(action)[1], plain.step(action)[1])


def test_set_records_takes_exactly_the_records_layout():
    pool = envs.make("HalfCheetah-v5", 3, seed=0)
    records = pool.records()
    with pytest.raises(TypeError, match=r"records must be uint64\[3, \d+\]"):
        pool.set_records(np.ascontiguousarray(records.T))  # same word count, transposed
    with pytest.raises(TypeError, match="records must be uint64"):
        pool.set_records(records.astype(np.float32))
    np.testing.assert_array_equal(pool.records(), records)


def test_an_action_beyond_float32_is_named_not_reported_as_inf():
    pool = envs.make("Pendulum-v1", 2, seed=0)
    with pytest.raises(ValueError, match=r"action at index 1 is 1e\+308, outside float32's "
                                         r"range"):
        pool.step(np.array([[0.0], [1e308]]))


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
def test_one_dtype_rule_on_every_door(dtype):
    actions = np.array([[0.5], [-1.25]], np.float32)
    pool = envs.make("Pendulum-v1", 2, seed=0)
    pool.reset(seed=0)
    host = pool.step(np.asarray(jnp.asarray(actions, dtype)))[1]
    door = envs.make_functional("Pendulum-v1")
    state, _ = door.reset(jax.random.PRNGKey(0), 2)
    in_graph = door.step(state, jnp.asarray(actions, dtype)).reward
    np.testing.assert_array_equal(host, np.asarray(in_graph))


def test_absurd_thread_counts_are_refused_before_any_thread_starts():
    with pytest.raises(ValueError, match="num_threads must be at most 1024"):
        envs.make("CartPole-v1", 4, num_threads=10**6)
    with pytest.raises(ValueError, match="num_threads must be at most 1024"):
        envs.make_functional("CartPole-v1", num_threads=10**6)


def test_default_threads_use_the_available_cores_capped_at_the_environments():
    import os

    cores = len(os.sched_getaffinity(0))
    assert envs.make("CartPole-v1", 1).num_threads == 1
    assert envs.make("CartPole-v1", 4096).num_threads == min(cores, 4096)
    assert envs.make_functional("CartPole-v1").num_threads == cores


@pytest.mark.parametrize(("old", "new"), [("NativeVectorEnv", "VectorEnv"), ("NativeEnv", "Env"),
                                          ("native_id", "canonical_id"),
                                          ("MujocoVectorEnv", "VectorEnv")])
def test_old_spellings_are_refused_naming_the_new_ones(old, new):
    with pytest.raises(AttributeError, match=rf"components.envs.{old} is now "
                                             rf"components.envs.{new}"):
        getattr(envs, old)
