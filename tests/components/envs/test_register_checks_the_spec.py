"""`envs.register` checks every spec its `make_spec` makes against the task it holds, before
any door uses it: a spec that contradicts its task (another id's spec, another action count,
Box actions for a discrete task, an observation space that is not the task's Box) is refused
naming what disagrees, and so is a `make_spec` that is not a function or returns no spec
(issue 35)."""

import gymnasium
import numpy as np
import pytest

import components.envs as envs


def cart(env_id):
    """A CartPole task object made for `env_id` (the classic-control module's class)."""
    return type(envs.spec("CartPole-v1").task)(env_id, {})


def spec_of(env_id, observation=None, action=None, limit=None, task=None):
    task = task or cart(env_id)
    return envs.EnvSpec(env_id, observation or gymnasium.spaces.Box(-np.inf, np.inf, (4,)),
                        action or gymnasium.spaces.Discrete(2), limit or int(task.max_steps),
                        task)


@pytest.mark.parametrize(("make_spec", "message"), [
    (lambda env_id, kwargs: envs.spec("CartPole-v1"),
     "its env_id is 'CartPole-v1', not 'Mine-v0'"),
    (lambda env_id, kwargs: spec_of(env_id, action=gymnasium.spaces.Discrete(5)),
     r"the action space is Discrete\(5\), the task's actions are Discrete\(2\)"),
    (lambda env_id, kwargs: spec_of(env_id, action=gymnasium.spaces.Box(-1, 1, (1,))),
     r"the action space is Box\(-1.0, 1.0, \(1,\), float32\), the task's actions are "
     r"Discrete\(2\)"),
    (lambda env_id, kwargs: spec_of(env_id, observation=gymnasium.spaces.Discrete(4)),
     r"the observation space is Discrete\(4\), the task's observations are a Box of shape "
     r"\(4,\)"),
    (lambda env_id, kwargs: spec_of(env_id, limit=7),
     "max_episode_steps is 7, the task's max_steps\\(\\) is 500"),
])
def test_a_spec_that_contradicts_its_task_is_refused_naming_what(make_spec, message):
    envs.register("Mine-v0", make_spec)
    for make in (lambda: envs.make("Mine-v0", 2), lambda: envs.make_functional("Mine-v0"),
                 lambda: gymnasium.make("metagraph/Mine-v0")):
        with pytest.raises(ValueError, match=r"register\('Mine-v0'\): make_spec returned a "
                                             r"spec that disagrees with its task: .*" + message):
            make()


def test_a_make_spec_that_is_no_function_or_makes_no_spec_is_refused():
    for bad in (None, 5):
        with pytest.raises(TypeError, match="make_spec must be a function"):
            envs.register("Mine-v0", bad)
    envs.register("Mine-v0", lambda env_id, kwargs: 5)
    with pytest.raises(TypeError, match=r"make_spec returned int, expected an EnvSpec"):
        envs.make("Mine-v0", 2)


def test_a_spec_that_agrees_with_its_task_steps():
    envs.register("Mine-v0", lambda env_id, kwargs: spec_of(env_id))
    pool = envs.make("Mine-v0", 2, seed=0)
    pool.reset(seed=0)
    assert pool.step(np.zeros(2, np.int32))[0].shape == (2, 4)


def test_the_librarys_own_ids_and_ids_gymnasium_refuses_are_not_registered():
    before = envs.spec("CartPole-v1")
    for built_in in ("CartPole-v1", "connect_four"):  # an id, an alias
        with pytest.raises(ValueError, match=f"'{built_in}' is one of the library's own "
                                             f"environments; register yours under another id"):
            envs.register(built_in, lambda env_id, kwargs: spec_of(env_id))
    with pytest.raises(ValueError, match="one of the library's own"):
        envs.register("Mine-v0", lambda env_id, kwargs: spec_of(env_id),
                      aliases=("CartPole-v1",))
    assert envs.spec("CartPole-v1") is before and envs.canonical_id("CartPole-v1") == \
        "CartPole-v1"
    # a name Gymnasium refuses is refused before anything is registered under it
    with pytest.raises(ValueError, match=r"register\('É v0'\): 'É v0' is no id Gymnasium "
                                         r"takes"):
        envs.register("É v0", lambda env_id, kwargs: spec_of(env_id))
    with pytest.raises(ValueError, match="unknown environment 'É v0'"):
        envs.make("É v0", 2)
