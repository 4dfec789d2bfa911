"""Bad input never reaches MuJoCo: actions of the wrong shape or dtype, NaN or inf are clear
errors on every door before any environment moves; a simulation that goes unstable (MuJoCo's
warnings, NaN in qacc) is an error naming the environment, not a silent reset; a state that
did not come from reset or step is refused."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.envs import make, make_functional


@pytest.fixture(autouse=True)
def _mujoco_log_in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warnings to MUJOCO_LOG.TXT here


@pytest.mark.parametrize(("actions", "error", "match"), [
    (np.zeros((2, 5), np.float32), ValueError, r"expected actions of shape \(2, 6\)"),
    (np.zeros((6,), np.float32), ValueError, "shape"),
    (np.zeros((2, 6), np.int64), TypeError, "floating point"),
    (np.array([["a"] * 6] * 2), TypeError, "numeric"),
    (np.full((2, 6), np.nan, np.float32), ValueError, "not finite|finite"),
    (np.full((2, 6), np.inf, np.float64), ValueError, "finite"),
])
def test_host_pool_refuses_bad_actions_before_stepping(actions, error, match):
    env = make("HalfCheetah-v5", 2, seed=0)
    env.reset(seed=0)
    before = env.records()
    with pytest.raises(error, match=match):
        env.step(actions)
    np.testing.assert_array_equal(env.records(), before)


def test_nan_in_one_environment_names_it():
    env = make("Ant-v5", 3, seed=0)
    actions = np.zeros((3, 8), np.float32)
    actions[2, 4] = np.nan
    with pytest.raises(ValueError, match="Ant-v5: action at index 2 is not finite"):
        env.step(actions)


def test_single_env_refuses_bad_actions():
    env = gymnasium.make("metagraph/Hopper-v5")
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(np.array([0.0, np.nan, 0.0], np.float32))
    with pytest.raises(ValueError):
        env.step(np.zeros(4, np.float32))


def test_in_graph_door_refuses_bad_actions():
    env = make_functional("Walker2d-v5")
    state, _ = env.reset(jax.random.PRNGKey(0), 2)
    with pytest.raises(TypeError, match=r"expected actions float32\[2, 6\]"):
        env.step(state, jnp.zeros((2, 5), jnp.float32))
    with pytest.raises(TypeError, match="float32"):
        env.step(state, jnp.zeros((2, 6), jnp.int32))
    bad = jnp.zeros((2, 6), jnp.float32).at[1, 0].set(jnp.inf)
    with pytest.raises(Exception, match="Walker2d-v5: action at index 1 is not finite"):
        jax.block_until_ready(env.step(state, bad))


def test_unstable_simulation_is_an_error_not_a_silent_reset():
    env = make("Hopper-v5", 3, seed=0)
    qpos, qvel = np.split(env.physical_state(), [env.env_spec.info["nq"]], axis=1)
    qvel[1] = 1e8  # the constraint solver's accelerations blow up
    env.reset(options={"qpos": qpos, "qvel": qvel})
    with pytest.raises(RuntimeError, match="Hopper-v5: environment 1 became unstable"):
        env.step(np.zeros((3, 3), np.float32))


def test_unstable_simulation_fails_the_compiled_step():
    env = make_functional("Hopper-v5")
    host = make("Hopper-v5", 2, seed=0)
    qpos, qvel = np.split(host.physical_state(), [host.env_spec.info["nq"]], axis=1)
    qvel[0] = 1e12
    state = env.state_from_physical(np.concatenate([qpos, qvel], axis=1))
    with pytest.raises(Exception, match="environment 0 became unstable"):
        jax.block_until_ready(env.step(jnp.asarray(state), jnp.zeros((2, 3), jnp.float32)))


def test_non_finite_reset_state_is_refused():
    env = make("Hopper-v5", 1, seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.reset(options={"qpos": np.full(6, np.nan), "qvel": np.zeros(6)})
    with pytest.raises(ValueError, match=r"qvel.*shape"):
        env.reset(options={"qpos": np.zeros(6), "qvel": np.zeros(5)})


def test_in_graph_door_refuses_a_state_not_from_reset_or_step():
    env = make_functional("HalfCheetah-v5")
    state, _ = env.reset(jax.random.PRNGKey(0), 2)
    words = np.asarray(state).copy()
    words[3, 1] = [0xFFFFFFFF, 0xFFFFFFFF]  # a NaN in environment 1's qpos
    with pytest.raises(Exception, match="environment 1 has a non-finite or invalid state"):
        jax.block_until_ready(env.step(jnp.asarray(words), jnp.zeros((2, 6), jnp.float32)))
    with pytest.raises(TypeError, match="state must come from reset"):
        env.step(jnp.zeros((7, 2, 2), jnp.uint32), jnp.zeros((2, 6), jnp.float32))
    records = env.records(state).copy()
    records[0, -1] = 5000  # a step count past the limit
    pool = make("HalfCheetah-v5", 2)
    with pytest.raises(ValueError, match="did not come from reset or step"):
        pool.set_records(records)


def test_unknown_keyword_arguments_and_bad_values():
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        make("Ant-v5", 1, render_mode="human")
    with pytest.raises(TypeError, match="healthy_z_range must be a pair"):
        make("Hopper-v5", 1, healthy_z_range=0.5)
    with pytest.raises(ValueError, match="no body named"):
        make("Ant-v5", 1, main_body="tail")
    with pytest.raises(ValueError, match=r"frame_skip must be in \[1, 1000000\]"):
        make("Walker2d-v5", 1, frame_skip=0)
