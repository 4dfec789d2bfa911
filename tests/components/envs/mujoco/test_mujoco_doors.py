"""The doors onto the MuJoCo core agree: a rollout inside the compiled program (XLA FFI, the
state being MuJoCo's integration state as XLA buffers) leaves the bits a persistent `mjData`
per environment leaves in the host pool; registration, the `Environment` component, pickling
and Gymnasium's own checker."""

import pickle

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import components.envs as envs
from components.envs import MUJOCO_IDS, make, make_functional
from components.envs.engine.in_graph import state_of
from components.envs.engine.vector_env import extras_info
from components.envs.environment import Environment
from metagraph.spaces import PRNGKey
from metagraph.testing import BACKENDS, ComponentTest

T = 60


def actions_for(env, steps, num_envs, seed=0):
    low, high = env.single_action_space.low, env.single_action_space.high
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, (steps, num_envs, len(low))).astype(np.float32)


@pytest.mark.parametrize("env_id", MUJOCO_IDS)
def test_in_graph_rollout_equals_persistent_mjdata_bit_for_bit(env_id):
    n = 3
    host = make(env_id, n, seed=7, max_episode_steps=25)  # truncations auto-reset inside
    env = make_functional(env_id, max_episode_steps=25)
    actions = actions_for(host, T, n)

    obs0, _ = host.reset(seed=7)
    state, obs = env.reset(jax.random.PRNGKey(7), n)
    np.testing.assert_array_equal(np.asarray(obs), obs0.astype(np.float32))
    np.testing.assert_array_equal(env.records(state), host.records())

    @jax.jit
    def rollout(state, actions):
        def body(state, action):
            out = env.step(state, action, final_obs=True, extras=True)
            return out.state, (out.obs, out.reward, out.terminated, out.truncated,
                               out.final_obs, out.extras)
        return jax.lax.scan(body, state, actions)

    state, (obs, reward, terminated, truncated, final, extras) = rollout(state,
                                                                        jnp.asarray(actions))
    names = env.env_spec.extras_names
    assert names and set(extras) == set(names)
    for t in range(T):
        h_obs, h_reward, h_term, h_trunc, info = host.step(actions[t])
        terms = extras_info(names, np.stack([np.asarray(extras[n][t]) for n in names], axis=1))
        for name, value in terms.items():  # Gymnasium's info terms, by name, on both doors
            np.testing.assert_array_equal(value, info[name])
            np.testing.assert_array_equal(info.get("final_info", {}).get(name, value), value)
        np.testing.assert_array_equal(np.asarray(obs[t]), h_obs.astype(np.float32))
        np.testing.assert_array_equal(np.asarray(reward[t]), h_reward.astype(np.float32))
        np.testing.assert_array_equal(np.asarray(terminated[t]), h_term)
        np.testing.assert_array_equal(np.asarray(truncated[t]), h_trunc)
        h_final = h_obs
        if "final_obs" in info:  # the rows of ended episodes; zeros elsewhere (Gymnasium's)
            ended = info["_final_obs"][:, None]
            assert not np.where(ended, 0, info["final_obs"]).any()
            h_final = np.where(ended, info["final_obs"], h_obs)
        np.testing.assert_array_equal(np.asarray(final[t]), h_final.astype(np.float32))
    assert (np.asarray(truncated) | np.asarray(terminated)).any()  # an auto-reset inside
    np.testing.assert_array_equal(env.records(state), host.records())


def test_in_graph_state_round_trips_through_the_host_pool_and_threads_do_not_matter():
    env_id, n = "Hopper-v5", 8
    host = make(env_id, n, seed=1)
    host.reset(seed=1)
    for action in actions_for(host, 20, n):
        host.step(action)
    state = state_of(host.records())  # the host's records as in-graph state
    actions = jnp.asarray(actions_for(host, 5, n, seed=2))
    outcomes = []
    for threads in (1, 2):
        env = make_functional(env_id, num_threads=threads)
        s = jnp.asarray(state)
        for action in actions:
            s = env.step(s, action).state
        outcomes.append(env.records(s))
    for action in np.asarray(actions):
        host.step(action)
    np.testing.assert_array_equal(outcomes[0], host.records())
    np.testing.assert_array_equal(outcomes[1], host.records())


def test_vmap_is_more_environments():
    env = make_functional("HalfCheetah-v5")
    keys = jnp.stack([jax.random.PRNGKey(3), jax.random.PRNGKey(4)])
    state, obs = jax.vmap(lambda k: env.reset(k, 2))(keys)
    assert state.shape[0] == 2 and state.shape[2] == 2 and obs.shape == (2, 2, 17)
    action = jnp.zeros((2, 2, 6), jnp.float32)
    batched = jax.vmap(env.step)(state, action)
    single, _ = env.reset(jax.random.PRNGKey(4), 2)
    alone = env.step(single, action[1])
    np.testing.assert_array_equal(np.asarray(batched.obs[1]), np.asarray(alone.obs))
    np.testing.assert_array_equal(env.records(batched.state[1]), env.records(alone.state))


def test_physical_state_and_state_from_physical():
    env = make_functional("Walker2d-v5")
    host = make("Walker2d-v5", 2, seed=0)
    host.reset(seed=5)
    state = env.state_from_physical(host.physical_state(), elapsed_steps=3)
    np.testing.assert_array_equal(env.physical_state(state), host.physical_state())
    np.testing.assert_array_equal(env.elapsed_steps(state), [3, 3])


@pytest.mark.parametrize("env_id", MUJOCO_IDS)
def test_gymnasium_make_and_check_env(env_id):
    env = gymnasium.make(f"metagraph/{env_id}")
    check_env(env.unwrapped, skip_render_check=True)
    reference = gymnasium.make(env_id)
    action = reference.action_space.sample()
    env.reset(seed=0)
    reference.reset(seed=0)
    info, their_info = env.step(action)[4], reference.step(action)[4]
    assert info.keys() == their_info.keys()  # Gymnasium's info terms, by name
    assert all(np.shape(info[name]) == np.shape(their_info[name]) for name in info)
    assert env.observation_space == reference.observation_space
    assert env.action_space == reference.action_space
    assert env.spec.max_episode_steps == reference.spec.max_episode_steps


def test_make_vec_and_keyword_arguments():
    vec = gymnasium.make_vec("metagraph/Hopper-v5", 4, vectorization_mode="vector_entry_point",
                             ctrl_cost_weight=0.5)
    assert isinstance(vec, envs.VectorEnv) and vec.num_envs == 4
    assert dict(vec.env_spec.kwargs)["ctrl_cost_weight"] == 0.5
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        make("Hopper-v5", 1, ctrl_weight=0.5)


def test_vector_env_pickles_with_its_state():
    env = make("Ant-v5", 3, seed=2, num_threads=2)
    env.reset(seed=2)
    actions = actions_for(env, 10, 3)
    for action in actions[:5]:
        env.step(action)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.num_threads == 2
    np.testing.assert_array_equal(copy.records(), env.records())
    for action in actions[5:]:
        a = env.step(action)
        b = copy.step(action)
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x, y)


def test_single_env_pickles():
    env = gymnasium.make("metagraph/HalfCheetah-v5")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    copy = pickle.loads(pickle.dumps(env))
    action = np.full(6, 0.3, np.float32)
    np.testing.assert_array_equal(copy.step(action)[0], env.step(action)[0])


@pytest.mark.parametrize("executor", BACKENDS)
@pytest.mark.parametrize("door", ["native", "host"])
def test_environment_component_follows_the_host_pool(door, executor):
    n, steps = 2, 8
    component = Environment("Hopper-v5", n, door=door)
    assert component.action_space.shape == (3,)
    test = ComponentTest(component, {"key": PRNGKey(), "action": component.batch_action_space()},
                         backend=executor)
    host = make("Hopper-v5", n, seed=5)
    obs, _ = host.reset(seed=5)
    got = test.test(("reset", np.asarray(jax.random.PRNGKey(5))))
    np.testing.assert_array_equal(np.asarray(got), obs.astype(np.float32))
    for action in actions_for(host, steps, n):
        out = test.test(("step", action))
        obs, reward, terminated, truncated, _ = host.step(action)
        np.testing.assert_array_equal(out.obs, obs.astype(np.float32))
        np.testing.assert_array_equal(out.reward, reward.astype(np.float32))
        np.testing.assert_array_equal(out.terminated, terminated)
