"""The Environment component: every door (native FFI, pure-JAX twin, host pool) under both
executors gives the trajectories of the door it wraps; wrong actions are SpaceErrors naming the
component; an environment composes with a policy into one graph."""

import jax
import numpy as np
import pytest
from toy_components import EnvironmentRoot

import components.envs as envs
import metagraph as mg
from components.envs import StepResult
from components.envs.engine.in_graph import target_names
from components.envs.environment import Environment
from metagraph.spaces import PRNGKey
from metagraph.testing import BACKENDS, ComponentTest

N, T, SEED = 4, 30, 5
ACTIONS = np.random.default_rng(0).integers(0, 2, (T, N)).astype(np.int32)


def component_rollout(door, executor):
    env = Environment("CartPole-v1", N, door=door)
    test = ComponentTest(env, {"key": PRNGKey(), "action": env.batch_action_space()},
                         backend=executor)
    observations = [test.test(("reset", np.asarray(jax.random.PRNGKey(SEED))))]
    for action in ACTIONS:
        out = test.test(("step", action))
        assert type(out) is StepResult and out.state is None and out.extras is None
        observations.append(out.obs)
    return np.stack(observations)


def reference_rollout(door):
    if door == "gymnasium":  # Gymnasium's own CartPole, vectorised, same seed
        import gymnasium
        from gymnasium.vector import AutoresetMode

        pool = gymnasium.make_vec("CartPole-v1", N, vectorization_mode="sync",
                                  vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
        observations = [pool.reset(seed=SEED)[0]]
        observations += [pool.step(action)[0] for action in ACTIONS]
        return np.stack(observations)
    if door in ("native", "host"):  # both are the pool's streams: seed SEED, index i
        pool = envs.make("CartPole-v1", N, seed=SEED)
        observations = [pool.reset(seed=SEED)[0]]
        observations += [pool.step(action)[0] for action in ACTIONS]
        return np.stack(observations)
    twin = envs.make_functional("CartPole-v1", door="jax")
    state, obs = twin.reset(jax.random.PRNGKey(SEED), N)
    observations = [obs]
    for action in ACTIONS:
        out = twin.step(state, action)
        state = out.state
        observations.append(out.obs)
    return np.stack([np.asarray(o) for o in observations])


@pytest.mark.parametrize("executor", BACKENDS)
@pytest.mark.parametrize("door", ["native", "jax", "host", "gymnasium"])
def test_every_door_under_every_executor_follows_its_reference(door, executor):
    np.testing.assert_allclose(component_rollout(door, executor), reference_rollout(door),
                               rtol=1e-6, atol=1e-7)


def test_wrong_actions_are_space_errors_naming_the_component():
    env = Environment("Pendulum-v1", N)
    with pytest.raises(mg.SpaceError, match=r"environment\.step") as error:
        mg.build(env, {"key": PRNGKey(), "action": mg.spaces.Box((N,))})
    assert "float32[4,1]" in str(error.value)
    with pytest.raises(ValueError, match="door must be one of"):
        Environment("Pendulum-v1", N, door="gpu")
    with pytest.raises(ValueError, match="num_envs"):
        Environment("Pendulum-v1", 0)


class RandomAgent(EnvironmentRoot):
    """A uniformly random policy acting in its environment: two components, one graph."""

    @mg.api
    def act_and_step(self, key):
        action = jax.random.randint(key, (self.env.num_envs,), 0, self.env.action_space.n)
        return self.env.step(action.astype(np.int32)).reward


def test_environment_composes_into_one_executable():
    from backends import xla

    graph = mg.build(RandomAgent(Environment("Acrobot-v1", N)), {"key": PRNGKey()})
    assert ("random_agent.act_and_step", "random_agent/env.step") in graph.nx.edges
    exe = xla.lower(graph)
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    rewards = [exe.act_and_step(np.asarray(jax.random.PRNGKey(i))) for i in range(5)]
    np.testing.assert_array_equal(np.stack(rewards), -1.0)
    step_target = target_names(envs.spec("Acrobot-v1").task)[1]
    assert step_target in exe.executables["act_and_step"].as_text()
