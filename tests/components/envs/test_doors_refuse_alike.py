"""Every door refuses the same bad input the same way: an action outside the action space
fails the step with the native core's message on the native, pure-JAX and host doors;
`num_threads` is passed to the doors that have threads and refused clearly elsewhere; the old
argument name `backend=` is refused naming `door=`; the FFI targets are registered explicitly
and idempotently."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_components import Stepper

import components.envs as envs
import metagraph as mg
from backends import xla
from components.envs import Environment
from components.envs.engine.in_graph import register_ffi_targets
from metagraph.spaces import Box, PRNGKey

N = 4
BAD = {  # env id -> (bad actions, the native core's message)
    "CartPole-v1": (np.array([0, 1, 7, 0], np.int32),
                    "CartPole-v1: action 7 at index 2 is outside [0, 2)"),
    "Acrobot-v1": (np.array([0, -1, 2, 0], np.int32),
                   "Acrobot-v1: action -1 at index 1 is outside [0, 3)"),
    "Pendulum-v1": (np.array([[0.0], [0.0], [0.0], [np.nan]], np.float32),
                    "Pendulum-v1: action at index 3 is not finite (NaN or inf)"),
    "MountainCarContinuous-v0": (np.array([[np.inf], [0.0], [0.0], [0.0]], np.float32),
                                 "MountainCarContinuous-v0: action at index 0 is not finite "
                                 "(NaN or inf)"),
}


@pytest.mark.parametrize("env_id", sorted(BAD))
@pytest.mark.parametrize("door", ["native", "jax"])
def test_in_graph_doors_fail_the_call_with_the_native_message(env_id, door):
    actions, message = BAD[env_id]
    env = envs.make_functional(env_id, door=door)
    state, _ = env.reset(jax.random.PRNGKey(0), N)
    with pytest.raises(Exception, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        jax.block_until_ready(jax.jit(env.step)(state, jnp.asarray(actions)))
    good = np.zeros_like(actions)
    assert np.isfinite(np.asarray(jax.jit(env.step)(state, jnp.asarray(good)).obs)).all()


@pytest.mark.parametrize("env_id", sorted(BAD))
@pytest.mark.parametrize("door", ["native", "jax"])
def test_an_eager_step_refuses_with_the_host_pools_valueerror(env_id, door):
    """Called eagerly, both in-graph doors raise what the host pool raises: a ValueError with
    the engine's message alone (JAX's own types for it differ between its first eager call and
    the next, and a twin's callback error carries a traceback)."""
    actions, message = BAD[env_id]
    pool = envs.make(env_id, N, seed=0)
    pool.reset(seed=0)
    with pytest.raises(ValueError) as host:
        pool.step(actions)
    assert str(host.value) == message
    env = envs.make_functional(env_id, door=door)
    state, _ = env.reset(jax.random.PRNGKey(0), N)
    for _ in range(2):  # JAX's first eager call, then its fast path
        with pytest.raises(ValueError) as refused:
            jax.block_until_ready(env.step(state, jnp.asarray(actions)))
        assert str(refused.value) == message


def test_twin_under_vmap_steps_good_actions_and_refuses_bad_ones():
    twin = envs.make_functional("CartPole-v1", door="jax")
    states, _ = jax.vmap(lambda k: twin.reset(k, N))(jax.random.split(jax.random.PRNGKey(0), 3))
    actions = jnp.zeros((3, N), jnp.int32)
    assert jax.vmap(twin.step)(states, actions).obs.shape == (3, N, 4)
    with pytest.raises(Exception, match=r"CartPole-v1: action 5 at index 1 is outside \[0, 2\)"):
        jax.block_until_ready(jax.vmap(twin.step)(states, actions.at[2, 1].set(5)))



@pytest.mark.parametrize("door", ["native", "jax", "host"])
def test_environment_component_refuses_alike_on_every_door(door):
    env = Environment("Pendulum-v1", N, door=door)
    exe = xla.lower(mg.build(Stepper(env), {"key": PRNGKey(), "action": Box((N, 1))}))
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    assert exe.act(np.zeros((N, 1), np.float32)).shape == (N, 3)
    with pytest.raises(Exception, match=r"Pendulum-v1: action at index 3 is not finite"):
        exe.act(BAD["Pendulum-v1"][0])


def test_num_threads_reaches_the_threaded_doors_and_is_refused_elsewhere():
    assert Environment("CartPole-v1", N, num_threads=4).functional.num_threads == 4
    assert Environment("CartPole-v1", N, door="host", num_threads=2).functional.pool \
        .num_threads == 2
    for door in ("jax", "gymnasium"):
        with pytest.raises(ValueError, match=f"the {door} door has no threads"):
            Environment("CartPole-v1", N, door=door, num_threads=4)
    for door in ("native", "jax", "host", "gymnasium"):
        with pytest.raises(ValueError, match="num_threads must be a positive int, got -5"):
            Environment("CartPole-v1", N, door=door, num_threads=-5)
    with pytest.raises(ValueError, match="the pure-JAX twin has no threads"):
        envs.make_functional("CartPole-v1", door="jax", num_threads=2)
    with pytest.raises(ValueError, match="num_threads must be a positive int"):
        envs.make_functional("CartPole-v1", door="jax", num_threads=-5)


def test_the_old_name_backend_is_refused_naming_door():
    with pytest.raises(TypeError, match=r"`backend=` is now `door=`"):
        Environment("CartPole-v1", N, backend="host")
    with pytest.raises(TypeError, match=r"`backend=` is now `door=`"):
        envs.make_functional("CartPole-v1", backend="jax")


def test_ffi_targets_are_registered_explicitly_and_idempotently():
    task = envs.spec("MountainCar-v0").task
    names = register_ffi_targets(task)
    assert register_ffi_targets(task) == names  # a second call does nothing
    env = envs.make_functional("MountainCar-v0")  # the native door registers them itself
    state, obs = jax.jit(lambda k: env.reset(k, 2))(jax.random.PRNGKey(0))
    assert obs.shape == (2, 2)


def test_families_import_the_engine_and_the_engine_no_family():
    import ast
    from pathlib import Path

    folder = Path(envs.__file__).parent

    def imported(path):
        tree = ast.parse((folder / path).read_text())
        return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    for path in (folder / "engine").glob("*.py"):
        assert not {m for m in imported(path) if m.startswith("components.envs.")
                    and not m.startswith("components.envs.engine")}, path
    assert "components.envs.engine.functional" in imported("classic_control/twin.py")
    assert "components.envs.engine.in_graph" not in imported("classic_control/twin.py")
