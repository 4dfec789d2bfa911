"""The in-graph doors: `make_functional(env_id, door=...)` gives pure `reset` / `step`
functions, usable under `jax.jit`, `lax.scan` and `jax.vmap`:

- door "native": the C++ core through the XLA FFI (`NativeFunctionalEnv`; CPU;
  vmap_method="broadcast_all": every leading dimension is just more environments);
- door "jax": the pure-JAX twin (`TwinFunctionalEnv`; for the MuJoCo tasks `MjxFunctionalEnv`
  on MJX, the extra `metagraph-rl[mjx]`), for accelerators where a host round trip would
  dominate.

A rollout of T steps over N environments is one compiled program with no Python in the loop.

    env = make_functional("CartPole-v1")          # or door="jax"
    state, obs = env.reset(jax.random.PRNGKey(0), num_envs=16)
    state, obs, reward, terminated, truncated = env.step(state, actions)

The state is opaque (a door's own pytree); read the physics with `physical_state(state)` and
start from exact physical states with `state_from_physical`.
"""

from __future__ import annotations

from typing import Any

from components.envs.catalogue import refuse_keyword_arguments
from components.envs.functional_env import FunctionalEnv
from components.envs.mujoco.tasks import is_mujoco
from components.envs.native_functional import NativeFunctionalEnv
from components.envs.specs import spec
from components.envs.twin_env import TwinFunctionalEnv
from metagraph.checks import positive_int

IN_GRAPH_DOORS = ("native", "jax")


def make_functional(env_id: str, door: str = "native", num_threads: int = 1,
                    **kwargs: Any) -> FunctionalEnv:
    """The functional interface of an environment.

    Args:
        env_id: a native environment id (`components.envs.ENV_IDS`, or a MuJoCo task of
            `components.envs.MUJOCO_IDS`).
        door: "native" steps the C++ core through the XLA FFI (CPU); "jax" runs its pure-JAX
            twin (any device; MJX for the MuJoCo tasks).
        num_threads: C++ threads stepping inside the program (native door only; the results do
            not depend on it). The twin has no threads: anything but 1 is refused.
        **kwargs: a MuJoCo task's Gymnasium keyword arguments (`forward_reward_weight`,
            `ctrl_cost_weight`, `reset_noise_scale`, ..., `max_episode_steps`), on either door;
            classic control takes none.

    Raises:
        ValueError: an unknown environment or door, or a bad `num_threads`.
        TypeError: keyword arguments the environment does not take; `backend=`, the old name
            of `door=`.
        ImportError: door "jax" of a MuJoCo task without MJX installed.
    """
    where = f"make_functional({env_id!r})"
    if "backend" in kwargs:
        raise TypeError(renamed_argument("make_functional", kwargs))
    if door not in IN_GRAPH_DOORS:
        raise ValueError(f"{where}: door must be one of {IN_GRAPH_DOORS}, got {door!r}")
    positive_int(num_threads, f"{where}: num_threads")
    if door == "jax" and num_threads != 1:
        raise ValueError(f"make_functional({env_id!r}, door='jax'): the pure-JAX twin has no "
                         f"threads; num_threads must be 1, got {num_threads!r}")
    if is_mujoco(env_id):
        if door == "native":
            from components.envs.mujoco.functional import make_mujoco_functional

            return make_mujoco_functional(env_id, num_threads, **kwargs)
        from components.envs.mujoco.mjx_env import make_mjx_functional

        return make_mjx_functional(env_id, **kwargs)
    refuse_keyword_arguments(env_id, kwargs)
    if door == "native":
        return NativeFunctionalEnv(spec(env_id), num_threads)
    return TwinFunctionalEnv(spec(env_id))


def renamed_argument(where: str, arguments: dict[str, Any]) -> str:
    """The message for keyword arguments that are not taken (`backend=` now `door=`)."""
    if "backend" in arguments:
        return (f"{where}: `backend=` is now `door=` (the environment's door: native, jax, "
                f"host or gymnasium); got backend={arguments['backend']!r}")
    return f"{where}: unexpected keyword arguments {sorted(arguments)}"
