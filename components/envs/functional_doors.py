"""The in-graph doors: `make_functional(env_id, door=...)` gives pure `reset` / `step`
functions, usable under `jax.jit`, `lax.scan` and `jax.vmap`:

- door "native": the C++ task through the XLA FFI (`InGraphEnv`; CPU;
  vmap_method="broadcast_all": every leading dimension is just more environments);
- door "jax": the family's pure-JAX twin (classic control's `TwinFunctionalEnv`; the MuJoCo
  tasks' `MjxFunctionalEnv` on MJX, the extra `mjx`), for accelerators where a
  host round trip would dominate.

A rollout of T steps over N environments is one compiled program with no Python in the loop.

    env = make_functional("CartPole-v1")          # or door="jax"
    state, obs = env.reset(jax.random.PRNGKey(0), num_envs=16)
    out = env.step(state, actions)         # a StepResult: out.state, out.obs, out.reward, ...
    out = env.step(out.state, actions, final_obs=True, extras=True, legal_mask=True)

The state is opaque (a door's own pytree); read the physics with `physical_state(state)` and
start from exact physical states with `state_from_physical`.
"""

from __future__ import annotations

from typing import Any

from components.envs.engine import catalogue
from components.envs.engine.functional import FunctionalEnv
from components.envs.engine.in_graph import InGraphEnv
from components.envs.engine.threads import resolve_threads
from metagraph.checks import positive_int

IN_GRAPH_DOORS = ("native", "jax")


def make_functional(env_id: str, door: str = "native", num_threads: int | None = None,
                    **kwargs: Any) -> FunctionalEnv:
    """The functional interface of an environment.

    Args:
        env_id: a registered id (`components.envs.env_ids()`).
        door: "native" steps the C++ task through the XLA FFI (CPU); "jax" runs its pure-JAX
            twin (any device; MJX for the MuJoCo tasks), where the family has one.
        num_threads: C++ threads stepping inside the program (native door only; results do
            not depend on it); None: every core this process may run on. The twin has no
            threads: anything but None or 1 is refused.
        **kwargs: the environment's keyword arguments (a MuJoCo task's Gymnasium ones,
            `forward_reward_weight`, ..., `max_episode_steps`), on either door.

    Raises:
        ValueError: an unknown environment or door, a bad `num_threads`, or door "jax" for an
            environment without a twin.
        TypeError: keyword arguments the environment does not take; `backend=`, the old name
            of `door=`.
        ImportError: door "jax" of a MuJoCo task without MJX installed.
    """
    where = f"make_functional({env_id!r})"
    if "backend" in kwargs:
        raise TypeError(renamed_argument("make_functional", kwargs))
    if door not in IN_GRAPH_DOORS:
        raise ValueError(f"{where}: door must be one of {IN_GRAPH_DOORS}, got {door!r}")
    if num_threads is not None:
        positive_int(num_threads, f"{where}: num_threads")
    if door == "jax" and num_threads not in (None, 1):
        raise ValueError(f"make_functional({env_id!r}, door='jax'): the pure-JAX twin has no "
                         f"threads; num_threads must be 1, got {num_threads!r}")
    threads = resolve_threads(num_threads, None, where)
    spec = catalogue.spec(env_id, **kwargs)
    if spec.task is None:
        family = catalogue.family_of(env_id) or "its family"
        raise ValueError(f"{where}: {spec.env_id} steps in an engine of its own ({family}'s "
                         f"host pool), whose state cannot live in a program's state: no "
                         f"in-graph door; use door 'host' (components.envs.make for its pool)")
    if door == "native":
        return InGraphEnv(spec, threads)
    twin = catalogue.registration(env_id).twin
    if twin is None:
        raise ValueError(f"{where}: {spec.env_id} has no pure-JAX twin (door 'jax'); use "
                         f"door 'native'")
    return twin(spec)


def renamed_argument(where: str, arguments: dict[str, Any]) -> str:
    """The message for keyword arguments that are not taken (`backend=` now `door=`)."""
    if "backend" in arguments:
        return (f"{where}: `backend=` is now `door=` (the environment's door: native, jax, "
                f"host or gymnasium); got backend={arguments['backend']!r}")
    return f"{where}: unexpected keyword arguments {sorted(arguments)}"
