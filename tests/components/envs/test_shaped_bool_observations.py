"""A user's task with shaped, bool observations (tasks/dots.h: `obs_shape()` and `using
Observation = bool`), built and registered from outside the package: every door gives
bool[n, 3, 4, 2], equal to planes drawn here from the physical state with NumPy; the
conformance check passes; the `Environment` component gives them in that shape and dtype,
and its `FlattenObservation` wrapper the same elements as float32 vectors (what an MLP reads,
and what `observation_vectors` makes of a host pool's); a registration that misstates the
planes is refused."""

from pathlib import Path

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs import Environment
from components.envs.wrappers import FlattenObservation
from metagraph.spaces import Bool, Box, PRNGKey
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


def test_the_environment_keeps_the_planes_and_flatten_gives_vectors(dots):
    env = Environment(dots, 3)
    assert env.observation_space == Bool(SHAPE)
    flat = FlattenObservation(Environment(dots, 3))
    assert flat.observation_space == Box((24,), np.float32, 0.0, 1.0)
    assert flat.unwrapped is flat.env and flat.num_envs == 3 and flat.env_spec is not None
    spaces = {"key": PRNGKey(), "action": env.batch_action_space()}
    shaped, vectors = ComponentTest(env, spaces), ComponentTest(flat, spaces)
    key = np.asarray(jax.random.PRNGKey(0))
    planes, obs = shaped.test(("reset", key)), vectors.test(("reset", key))
    assert planes.dtype == np.bool_ and planes.shape == (3, *SHAPE)
    assert obs.dtype == np.float32 and obs.shape == (3, 24)
    np.testing.assert_array_equal(obs, planes.reshape(3, -1))
    for action in np.random.default_rng(1).integers(0, 2, (12, 3)).astype(np.int32):
        out, flat_out = shaped.test(("step", action)), vectors.test(("step", action))
        for field in ("obs", "final_obs"):
            np.testing.assert_array_equal(getattr(flat_out, field),
                                          getattr(out, field).reshape(3, -1))
        np.testing.assert_array_equal(flat_out.reward, out.reward)
    host = envs.make(dots, 3, seed=0)
    host_obs = host.reset(seed=0)[0]
    vectors = envs.observation_vectors(host_obs)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 24)
    np.testing.assert_array_equal(vectors, host_obs.reshape(3, -1))


def test_a_registration_that_misstates_the_planes_is_refused(dots):
    with pytest.raises(ValueError, match=r"the task's observations are a Box of shape "
                                         r"\(3, 4, 2\), bool"):
        envs.spec("FlatDots-v0")


def test_observation_vectors_refuses_what_is_no_batch_of_observations():
    with pytest.raises(ValueError, match=r"expected observations \[n, ...\], got a scalar"):
        envs.observation_vectors(np.float32(1))
    with pytest.raises(TypeError, match="expected numbers or bools, got dtype <U1"):
        envs.observation_vectors(np.array(["a"]))
