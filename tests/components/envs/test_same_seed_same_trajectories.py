"""One seed, one trajectory: host loop with 1 and 2 threads and the in-graph rollout agree bit
for bit; different environment indices get different streams; vmap means more environments."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs

N, T, SEED = 32, 600, 5  # 600 > 500 steps: crosses CartPole's truncation and auto-resets


def actions_for(env_id, rng):
    spec = envs.spec(env_id)
    if spec.discrete:
        return rng.integers(0, spec.action_space.n, (T, N)).astype(np.int32)
    return rng.uniform(-1, 1, (T, N, 1)).astype(np.float32)


def host_rollout(env_id, actions, num_threads):
    env = envs.make(env_id, actions.shape[1], seed=SEED, num_threads=num_threads)
    obs, _ = env.reset(seed=SEED)
    trajectory = [obs]
    for a in actions:
        obs, *_ = env.step(a)
        trajectory.append(obs)
    return np.stack(trajectory)


@pytest.fixture(scope="module")
def cartpole_rollout():
    env = envs.make_functional("CartPole-v1")

    @jax.jit
    def rollout(key, actions):
        state, obs = env.reset(key, N)

        def body(state, action):
            out = env.step(state, action)
            return out.state, (out.obs, out.terminated, out.truncated)

        _, (observations, terminated, truncated) = jax.lax.scan(body, state, actions)
        return jnp.concatenate([obs[None], observations]), terminated, truncated

    return rollout


def test_host_loop_threads_and_in_graph_agree(cartpole_rollout):
    actions = actions_for("CartPole-v1", np.random.default_rng(0))
    one = host_rollout("CartPole-v1", actions, 1)
    two = host_rollout("CartPole-v1", actions, 2)
    np.testing.assert_array_equal(one, two)
    in_graph, terminated, truncated = cartpole_rollout(jax.random.PRNGKey(SEED), actions)
    np.testing.assert_array_equal(np.asarray(in_graph), one)
    assert terminated.any()  # episodes ended and restarted along the way


@pytest.mark.parametrize("env_id", ["Acrobot-v1", "Pendulum-v1"])
def test_threads_agree_for_other_envs(env_id):
    """Enough environments (1100) for the C++ threads to split the batch, host and in-graph."""
    rng = np.random.default_rng(1)
    actions = np.concatenate([actions_for(env_id, rng)[:40] for _ in range(35)], axis=1)[:, :1100]
    one = host_rollout(env_id, actions, 1)
    np.testing.assert_array_equal(host_rollout(env_id, actions, 2), one)
    env = envs.make_functional(env_id, num_threads=2)

    def body(state, action):
        out = env.step(state, action)
        return out.state, out.obs

    @jax.jit
    def in_graph(key, actions):
        state, obs = env.reset(key, actions.shape[1])
        return jnp.concatenate([obs[None], jax.lax.scan(body, state, actions)[1]])

    np.testing.assert_array_equal(np.asarray(in_graph(jax.random.PRNGKey(SEED), actions)), one)


def test_environment_indices_have_different_streams():
    obs, _ = envs.make("CartPole-v1", 64, seed=0).reset(seed=0)
    assert len(np.unique(obs[:, 0])) == 64
    again, _ = envs.make("CartPole-v1", 64, seed=0).reset(seed=0)
    np.testing.assert_array_equal(obs, again)
    other, _ = envs.make("CartPole-v1", 64, seed=0).reset(seed=1)
    assert not np.allclose(obs, other)


def test_vmap_over_keys_is_more_environments():
    env = envs.make_functional("Pendulum-v1")
    keys = jnp.stack([jax.random.PRNGKey(s) for s in (3, 4)])
    state, obs = jax.vmap(lambda k: env.reset(k, 5))(keys)
    assert state.shape == (2, 4, 5, 2) and obs.shape == (2, 5, 3)  # 4 rows of 5 words
    _, single = env.reset(jax.random.PRNGKey(4), 5)
    np.testing.assert_array_equal(obs[1], single)
    actions = jnp.zeros((2, 5, 1), jnp.float32)
    out = jax.vmap(env.step)(state, actions)
    assert out.obs.shape == (2, 5, 3) and out.reward.shape == (2, 5)


def test_functional_state_round_trips_physics():
    env = envs.make_functional("CartPole-v1")
    physics = np.array([[0.1, 0.2, 0.03, -0.4], [0.0, 0.0, 0.0, 0.0]])
    state = env.state_from_physical(physics)
    np.testing.assert_array_equal(env.physical_state(state), physics)
    host = envs.make("CartPole-v1", 2)
    host.reset(options={"state": physics})
    expected, *_ = host.step(np.array([1, 0], np.int32))
    out = jax.jit(env.step)(state, jnp.array([1, 0], jnp.int32))
    np.testing.assert_array_equal(out.obs, expected)
