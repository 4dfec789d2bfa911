"""Bad input gets a clear exception naming what was expected, never a crash."""

import gymnasium
import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import components.envs as envs


@pytest.fixture(scope="module")
def cartpole():
    return envs.make("CartPole-v1", 4, seed=0)


@pytest.fixture(scope="module")
def pendulum():
    return envs.make("Pendulum-v1", 4, seed=0)


def test_discrete_actions(cartpole):
    with pytest.raises(ValueError,
                       match=r"CartPole-v1: expected actions of shape \(4,\), got \(3,\)"):
        cartpole.step(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match=r"action 2 at index \d is outside \[0, 2\)"):
        cartpole.step(np.array([0, 1, 2, 0], np.int32))
    with pytest.raises(TypeError, match="discrete actions must be integers"):
        cartpole.step(np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="numeric array"):
        cartpole.step(["left"] * 4)


def test_continuous_actions(pendulum):
    with pytest.raises(ValueError, match=r"action at index 1 is not finite \(NaN or inf\)"):
        pendulum.step(np.array([[0.0], [np.nan], [0.0], [0.0]], np.float32))
    with pytest.raises(ValueError, match=r"expected actions of shape \(4, 1\)"):
        pendulum.step(np.zeros(4, np.float32))
    obs, reward, *_ = pendulum.step(np.full((4, 1), 100.0, np.float32))  # clipped, as Gymnasium
    assert np.isfinite(obs).all() and np.isfinite(reward).all()


def test_bad_env_id_seed_sizes_and_closed_pool():
    with pytest.raises(ValueError, match="unknown environment 'Nope-v0'"):
        envs.make("Nope-v0")
    with pytest.raises(TypeError, match="seed must be an int or None, got str"):
        envs.make("CartPole-v1", 2, seed="7")
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        envs.make("CartPole-v1", 0)
    with pytest.raises(ValueError, match="options\\['state'\\] must have shape"):
        envs.make("CartPole-v1", 2).reset(options={"state": np.zeros(3)})
    with pytest.raises(ValueError, match="must be finite"):
        envs.make("CartPole-v1", 1).reset(options={"state": [np.nan, 0, 0, 0]})
    env = envs.make("CartPole-v1", 2)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(2, np.int32))
    with pytest.raises(gymnasium.error.Error):
        gymnasium.make("metagraph/Nope-v0")


def test_in_graph_bad_actions():
    env = envs.make_functional("Acrobot-v1")
    state, _ = env.reset(jax.random.PRNGKey(0), 2)
    with pytest.raises(TypeError, match=r"expected actions int32\[2\], got float32\[2\]"):
        env.step(state, jnp.zeros(2, jnp.float32))
    with pytest.raises(Exception, match=r"Acrobot-v1: action 7 at index 1 is outside \[0, 3\)"):
        jax.block_until_ready(jax.jit(env.step)(state, jnp.array([0, 7], jnp.int32)))


@pytest.mark.parametrize("num_threads", [1, 2])
def test_in_graph_state_not_from_reset_is_refused(num_threads):
    env = envs.make_functional("CartPole-v1", num_threads=num_threads)
    n = 2048  # large enough for the C++ threads to split it
    state = env.state_from_physical(np.zeros((n, 4)))
    # rows of 8-byte words (theta is row 2); state_from_physical itself refuses NaN
    state.view(np.float64)[2, 1500] = np.nan
    with pytest.raises(Exception, match="CartPole-v1 step: environment 1500 has a non-finite"):
        jax.block_until_ready(env.step(state, jnp.zeros(n, jnp.int32)))
    state.view(np.float64)[2, 1500] = 0.0
    state.view(np.float64)[1, 7] = np.inf
    with pytest.raises(Exception, match="CartPole-v1 step: environment 7 has a non-finite"):
        jax.block_until_ready(env.step(state, jnp.zeros(n, jnp.int32)))
    with pytest.raises(ValueError, match="num_threads must be a positive int"):
        envs.make_functional("CartPole-v1", num_threads=0)


DOCUMENTED = (ValueError, TypeError)


@settings(max_examples=150, deadline=None)
@given(env_id=st.sampled_from(envs.ENV_IDS),
       actions=hnp.arrays(dtype=st.sampled_from([np.int8, np.int32, np.int64, np.uint16,
                                                 np.float16, np.float32, np.float64, np.bool_]),
                          shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)))
def test_random_actions_only_raise_documented_errors(env_id, actions):
    env = envs.make(env_id, 3, seed=0)
    try:
        obs, reward, terminated, truncated, _ = env.step(actions)
    except DOCUMENTED:
        return
    assert obs.shape == (3, env.single_observation_space.shape[0])
    assert np.isfinite(obs).all() and np.isfinite(reward).all()


@settings(max_examples=60, deadline=None)
@given(env_id=st.sampled_from(envs.ENV_IDS),
       state=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=5),
                        elements=st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_random_reset_states_only_raise_documented_errors(env_id, state):
    env = envs.make(env_id, 2, seed=0)
    try:
        env.reset(options={"state": state})
    except DOCUMENTED:
        return
    spec = envs.spec(env_id)
    actions = (np.zeros(2, np.int32) if spec.discrete else np.zeros((2, 1), np.float32))
    obs, *_ = env.step(actions)
    assert obs.shape[0] == 2


def test_gymnasium_env_checks_an_action_before_casting_it():
    env = gymnasium.make("metagraph/CartPole-v1")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"CartPole-v1: action 4294967296 at index 0 is "
                                         r"outside \[0, 2\)"):
        env.step(2**32)  # was stepped as action 0
    with pytest.raises(ValueError, match=r"outside \[0, 2\)"):
        env.step(np.int64(-2**32 + 1))


def misaligned(values, dtype):
    """`values` as a C-contiguous array of `dtype` whose data is not aligned to its size."""
    dtype = np.dtype(dtype)
    raw = np.zeros(len(values) * dtype.itemsize + 1, np.uint8)[1:].view(dtype)
    raw[:] = values
    assert raw.flags.c_contiguous and not raw.flags.aligned
    return raw


def test_misaligned_actions_are_copied_by_the_vector_env_and_named_by_the_pool():
    actions = [0, 1, 1, 0]
    env, reference = envs.make("CartPole-v1", 4, seed=1), envs.make("CartPole-v1", 4, seed=1)
    np.testing.assert_array_equal(env.step(misaligned(actions, np.int32))[0],
                                  reference.step(np.array(actions, np.int32))[0])
    task = envs.spec("CartPole-v1").task
    pool = task.Pool(task, 4, 1)
    with pytest.raises(TypeError, match=r"CartPole-v1: actions must be aligned to 4 bytes "
                                        r"\(int32\); this array's data is not"):
        pool.step(misaligned(actions, np.int32))
    with pytest.raises(TypeError, match="must be in the machine's byte order"):
        pool.step(np.array(actions, np.dtype(np.int32).newbyteorder()))
    with pytest.raises(TypeError, match="physical states must be aligned to 8 bytes"):
        pool.reset_to(misaligned(np.zeros(16), np.float64))


@pytest.mark.parametrize("door", ["native", "jax"])
def test_state_from_physical_needs_an_environment(door):
    env = envs.make_functional("CartPole-v1", door)
    with pytest.raises(ValueError, match=r"CartPole-v1: a physical state needs at least one "
                                         r"environment, got 0 \(shape \(0, 4\)\)"):
        env.state_from_physical(np.zeros((0, 4)))


def test_huge_finite_state_is_refused_by_the_host_pool_as_in_graph():
    huge = np.array([0.0, 0.0, 1e300, 1e300])  # finite; the physics overflows on the first step
    actions = np.zeros(1, np.int32)
    message = r"Acrobot-v1 step: environment 0 has a non-finite or invalid state"
    host = envs.make("Acrobot-v1", 1)
    host.reset(options={"state": huge})
    host.step(actions)
    with pytest.raises(ValueError, match=message):
        host.step(actions)  # was NaN observations for 500 steps
    in_graph = envs.make_functional("Acrobot-v1")
    state = in_graph.step(in_graph.state_from_physical(huge), jnp.asarray(actions))[0]
    with pytest.raises(Exception, match=message):
        jax.block_until_ready(in_graph.step(state, jnp.asarray(actions)))


@pytest.mark.parametrize("count", [np.iinfo(np.int64).max, -1, 500])
def test_in_graph_forged_step_count_is_refused(count):
    env = envs.make_functional("CartPole-v1")
    state = env.state_from_physical(np.zeros((3, 4)))
    state.view(np.int64)[5, 1] = count  # row 5: steps in the episode (rows of 8-byte words)
    with pytest.raises(Exception, match=rf"CartPole-v1 step: environment 1 has step count "
                                        rf"{count} outside \[0, 500\)"):
        jax.block_until_ready(env.step(state, jnp.zeros(3, jnp.int32)))
