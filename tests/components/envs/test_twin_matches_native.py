"""The pure-JAX twin steps like the C++ core: from the same physical states and elapsed steps
with the same actions, observation, final observation, reward, terminated and truncated agree to
float32 precision; it auto-resets into the reset distribution, and runs under scan and vmap."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_dynamics_vs_gymnasium import random_states_and_actions

import components.envs as envs

N = 2000
# float32 arithmetic against the core's float64: Acrobot's RK4 at its top speeds (28 rad/s)
# loses a few more digits than the others
TOLERANCE = {"Acrobot-v1": {"rtol": 1e-3, "atol": 1e-4}}


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_one_step_from_the_same_states_agrees_with_the_native_core(env_id):
    rng = np.random.default_rng(7)
    states, actions = random_states_and_actions(env_id, rng)
    spec = envs.spec(env_id)
    # a quarter of the environments are on the last step of their episode: truncation
    elapsed = np.where(rng.random(N) < 0.25, spec.max_episode_steps - 1,
                       rng.integers(0, spec.max_episode_steps - 1, N))
    results = {}
    for door in ("native", "jax"):
        env = envs.make_functional(env_id, door=door)
        state = env.state_from_physical(states, seed=1, elapsed_steps=elapsed)
        out = jax.jit(functools.partial(env.step, final_obs=True))(state, jnp.asarray(actions))
        results[door] = [np.asarray(x) for x in (out.obs, out.reward, out.terminated,
                                                 out.truncated, out.final_obs)]
        results[door].append(env.elapsed_steps(out.state))
    (obs, reward, term, trunc, final, steps) = results["native"]
    (t_obs, t_reward, t_term, t_trunc, t_final, t_steps) = results["jax"]
    np.testing.assert_array_equal(t_term, term)
    np.testing.assert_array_equal(t_trunc, trunc)
    assert trunc.sum() > 0
    np.testing.assert_array_equal(t_steps, steps)
    tolerance = TOLERANCE.get(env_id, {"rtol": 1e-4, "atol": 1e-5})
    np.testing.assert_allclose(t_final, final, **tolerance)
    np.testing.assert_allclose(t_reward, reward, **tolerance)
    running = ~(term | trunc)
    np.testing.assert_allclose(t_obs[running], obs[running], **tolerance)
    # finished environments restart inside the observation space (a new random start)
    low, high = spec.observation_space.low, spec.observation_space.high
    assert ((t_obs[~running] >= low) & (t_obs[~running] <= high)).all()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_twin_rolls_out_under_scan_and_vmap_deterministically(env_id):
    env = envs.make_functional(env_id, door="jax")
    spec = envs.spec(env_id)
    num_envs, steps = 8, 520  # through Pendulum's and CartPole's time limit

    @jax.jit
    def rollout(key):
        state, obs = env.reset(key, num_envs)
        if spec.discrete:
            actions = jax.random.randint(key, (steps, num_envs), 0, 2, jnp.int32)
        else:
            actions = jax.random.uniform(key, (steps, num_envs, 1), jnp.float32, -2, 2)

        def body(state, action):
            out = env.step(state, action)
            return out.state, (out.obs, out.reward, out.terminated | out.truncated)

        return jax.lax.scan(body, state, actions)[1]

    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    batched = jax.vmap(rollout)(keys)
    again = rollout(keys[1])
    for x, y in zip(again, batched, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y)[1])
    obs, reward, done = (np.asarray(x) for x in again)
    assert done.any(axis=0).all()  # every environment finished at least one episode
    assert not np.array_equal(obs[:, 0], obs[:, 1])  # environments have their own streams
    assert not np.array_equal(np.asarray(batched[0][0]), np.asarray(batched[0][1]))


def test_unknown_door_and_foreign_state_are_clear_errors():
    with pytest.raises(ValueError, match="door must be one of"):
        envs.make_functional("CartPole-v1", door="torch")
    twin = envs.make_functional("CartPole-v1", door="jax")
    native_state, _ = envs.make_functional("CartPole-v1").reset(jax.random.PRNGKey(0), 2)
    with pytest.raises(TypeError, match="TwinState"):
        twin.step(native_state, jnp.zeros(2, jnp.int32))
    state, _ = twin.reset(jax.random.PRNGKey(0), 2)
    with pytest.raises(TypeError, match=r"int32\[2\]"):
        twin.step(state, jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="elapsed_steps"):
        twin.state_from_physical(np.zeros(4), elapsed_steps=500)
