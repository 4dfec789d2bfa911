"""A MuJoCo task's Gymnasium keyword arguments reach the environment through every door
(`Environment(..., **kwargs)`, `components.envs.make`, `make_functional`) and change what it
computes as Gymnasium's do; environments without keyword arguments (classic control) refuse
them by name, and unknown ones are refused listing the accepted ones."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs import Environment

N = 3


@pytest.mark.parametrize("door", ["native", "host"])
def test_environment_passes_keyword_arguments_to_its_door(door):
    env = Environment("HalfCheetah-v5", N, door=door, forward_reward_weight=2.0,
                      max_episode_steps=7)
    assert dict(env.env_spec.kwargs) == {"forward_reward_weight": 2.0, "max_episode_steps": 7}
    assert env.env_spec.max_episode_steps == 7


def test_environment_passes_keyword_arguments_to_gymnasium():
    env = Environment("HalfCheetah-v5", 2, door="gymnasium", forward_reward_weight=2.0)
    reference = env.functional.pool.envs[0].unwrapped
    assert reference._forward_reward_weight == 2.0


def test_make_and_make_functional_pass_keyword_arguments():
    pool = envs.make("Hopper-v5", 2, healthy_reward=0.5)
    assert dict(pool.env_spec.kwargs) == {"healthy_reward": 0.5}
    functional = envs.make_functional("Hopper-v5", healthy_reward=0.5)
    assert functional.env_spec is pool.env_spec or functional.env_spec == pool.env_spec


def test_keyword_arguments_change_the_reward_as_gymnasium_defines_it():
    # HalfCheetah: forward_reward_weight * x_velocity - ctrl_cost_weight * |a|^2; from the same
    # state, doubling the first weight (without a control cost) doubles the reward
    rewards = {}
    for weight in (1.0, 2.0):
        env = envs.make_functional("HalfCheetah-v5", forward_reward_weight=weight,
                                   ctrl_cost_weight=0.0)
        state, _ = env.reset(jax.random.PRNGKey(3), N)
        action = jnp.full((N, 6), 0.5, jnp.float32)
        rewards[weight] = np.asarray(jax.jit(env.step)(state, action).reward)
    np.testing.assert_allclose(rewards[2.0], 2 * rewards[1.0], rtol=1e-6)
    assert np.abs(rewards[1.0]).min() > 1e-3


REFUSED = [  # (env_id, keyword arguments, the refusal)
    ("CartPole-v1", {"forward_reward_weight": 2.0},
     r"CartPole-v1 takes no keyword arguments .*got \['forward_reward_weight'\]"),
    ("Hopper-v5", {"ctrl_weight": 0.5},
     r"Hopper-v5: unexpected keyword arguments \['ctrl_weight'\]; accepted: "
     r".*'ctrl_cost_weight'"),
]


@pytest.mark.parametrize("door", ["native", "jax", "host"])
@pytest.mark.parametrize(("env_id", "kwargs", "refusal"), REFUSED)
def test_keyword_arguments_a_task_does_not_take_are_refused_on_every_door(
        door, env_id, kwargs, refusal):
    with pytest.raises(TypeError, match=refusal):
        Environment(env_id, N, door=door, **kwargs)


def test_make_and_make_functional_refuse_them_for_classic_control():
    with pytest.raises(TypeError, match="Pendulum-v1 takes no keyword arguments"):
        envs.make("Pendulum-v1", 2, g=9.81)
    for door in ("native", "jax"):
        with pytest.raises(TypeError, match="Pendulum-v1 takes no keyword arguments"):
            envs.make_functional("Pendulum-v1", door=door, g=9.81)


def test_the_gymnasium_door_refuses_what_gymnasium_refuses():
    with pytest.raises(TypeError, match="ctrl_weight"):
        Environment("Hopper-v5", 2, door="gymnasium", ctrl_weight=0.5)


def test_backend_is_still_refused_naming_door():
    with pytest.raises(TypeError, match=r"`backend=` is now `door=`"):
        Environment("HalfCheetah-v5", N, backend="host", forward_reward_weight=2.0)
    assert gymnasium.make("metagraph/Walker2d-v5", healthy_reward=0.25).unwrapped \
        .env_spec.kwargs == (("healthy_reward", 0.25),)
