"""A user's task with shaped, bool observations (tasks/dots.h: `obs_shape()` and `using
Observation = bool`), built and registered from outside the package: every door gives
bool[n, 3, 4, 2], equal to planes drawn here from the physical state with NumPy; the
conformance check passes; the `Environment` component gives agents float32 vectors; a
registration that misstates the planes is refused."""

from pathlib import Path

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs import Environment
from metagraph.spaces import PRNGKey
from metagraph.testing import ComponentTest

SHAPE = (3, 4, 2)


@pytest.fixture(scope="module")
def dots():
    module = envs.build_extension(Path(__file__).parent / "tasks" / "dots.h", "dots::Dots")

    def make_spec(env_id, kwargs):
        task = module.Dots(env_id, kwargs)
        return envs.EnvSpec(env_id, gymnasium.spaces.Box(0, 1, tuple(task.obs_shape), np.bool_),
                            gymnasium.spaces.Discrete(2), int(task.max_steps), task)

    def flat_spec(env_id, kwargs):
        task = module.Dots(env_id, kwargs)
        return envs.EnvSpec(env_id, gymnasium.spaces.Box(0, 1, (24,), np.float32),
                            gymnasium.spaces.Discrete(2), int(task.max_steps), task)

    envs.register("Dots-v0", make_spec)
    envs.register("FlatDots-v0", flat_spec)
    return "Dots-v0"


def planes(physics):
    """The expected observations of physical states [n, 13], drawn with NumPy."""
    n = len(physics)
    dot = np.zeros((n, 12), bool)
    dot[np.arange(n), physics[:, 0].astype(int)] = True
    return np.stack([dot, physics[:, 1:] == 1], -1).reshape(n, *SHAPE)


def test_every_door_gives_the_shaped_bool_planes(dots):
    pool = envs.make(dots, 5, seed=1)
    obs, _ = pool.reset(seed=1)
    assert obs.dtype == np.bool_ and obs.shape == (5, *SHAPE)
    np.testing.assert_array_equal(obs, planes(pool.physical_state()))
    actions = np.random.default_rng(0).integers(0, 2, (30, 5))
    for a in actions:
        obs, *_ = pool.step(a)
        np.testing.assert_array_equal(obs, planes(pool.physical_state()))
    door = envs.make_functional(dots)
    state, first = door.reset(jax.random.PRNGKey(1), 5)
    assert first.dtype == jnp.bool_ and first.shape == (5, *SHAPE)
    out = jax.jit(door.step)(state, jnp.ones(5, jnp.int32))
    np.testing.assert_array_equal(out.obs, planes(door.physical_state(out.state)))
    assert set(envs.check(dots).values()) == {"ok"}


def test_the_environment_component_gives_agents_float32_vectors(dots):
    env = Environment(dots, 3)
    assert env.observation_space.shape == (24,)
    test = ComponentTest(env, {"key": PRNGKey(), "action": env.batch_action_space()})
    obs = test.test(("reset", np.asarray(jax.random.PRNGKey(0))))
    assert obs.dtype == np.float32 and obs.shape == (3, 24) and set(np.unique(obs)) <= {0, 1}
    host = envs.make(dots, 3, seed=0)
    vectors = envs.observation_vectors(host.reset(seed=0)[0])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 24)


def test_a_registration_that_misstates_the_planes_is_refused(dots):
    with pytest.raises(ValueError, match=r"the task's observations are a Box of shape "
                                         r"\(3, 4, 2\), bool"):
        envs.spec("FlatDots-v0")


def test_observation_vectors_refuses_what_is_no_batch_of_observations():
    with pytest.raises(ValueError, match=r"expected observations \[n, ...\], got a scalar"):
        envs.observation_vectors(np.float32(1))
    with pytest.raises(TypeError, match="expected numbers or bools, got dtype <U1"):
        envs.observation_vectors(np.array(["a"]))
