"""`Environment`: an environment as a node of the meta-graph.

The same two APIs whichever door steps it:

- `reset(key) -> obs` starts every environment (environment i from the stream of the key's
  seed and i);
- `step(action) -> StepResult` with same-step auto-reset: `obs`, `reward`, `terminated`,
  `truncated` and `final_obs`, the last observation of the step (before any auto-reset); its
  `state` is None (the environments' state is the component's).

Doors (`door=`), all behind the same functional interface (`self.functional`); an agent steps
any of them the same way, by calling `step` inside `mg.scan`, so its rollout is one compiled
loop and `environment.step` is a node of its graph:

- "native": the C++ core through the XLA FFI; the environments' state is component state, so
  policy and environment lower into one executable; `num_threads` C++ threads step inside it;
- "jax": the pure-JAX twin, same, on any device (MJX for the MuJoCo tasks:
  `pip install -e ".[mjx]"`);
- "host": the threaded native pool (`components.envs.make`, `num_threads` C++ threads),
  reached from the program through ordered `io_callback`s; its state lives in the pool;
- "gymnasium": any Gymnasium environment id (`gymnasium.make_vec`, same-step auto-reset),
  the adapter for environments without a native core, also through `io_callback`s.

The native and host doors draw the same initial states from the same key. Actions outside the
action space (a discrete action outside [0, n), a NaN or infinite continuous one) are refused
with the same message on every door (`engine/actions.py`), as a runtime check
(`metagraph.runtime_checks`): the environments do not move (the host pool is not stepped), the
door never sees the bad actions, and the executor raises `mg.RuntimeCheckError` after the call
with its state intact, instead of the call failing inside XLA after its state was donated.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.vector import AutoresetMode

import metagraph as mg
from components.envs.engine.actions import actions_ok, legal_ok, step_error, traced_actions
from components.envs.engine.catalogue import spec
from components.envs.engine.host_door import HostDoor, spec_of_gymnasium
from components.envs.engine.make import make
from components.envs.engine.step_result import StepResult
from components.envs.engine.threads import resolve_threads
from components.envs.functional_doors import make_functional, renamed_argument
from components.envs.wrappers.wrapper import batched
from metagraph import runtime_checks
from metagraph.checks import positive_int
from metagraph.spaces import Bool, Box, Dict, Discrete, Record, Space

DOORS = ("native", "jax", "host", "gymnasium")
THREADED_DOORS = ("native", "host")
POOL_DOORS = ("host", "gymnasium")  # the environments' state lives in a pool, not the graph's


def observation_vectors(observations: Any) -> np.ndarray:
    """Observations of a batch of environments [n, *shape], as a host pool or Gymnasium gives
    them (any dtype: MinAtar's bool planes), as the `Environment` component gives them to
    agents: float32 vectors [n, d] (uint8 frames, Atari's, stay uint8). Raises ValueError
    for a scalar (no batch axis) and TypeError for observations that are not numbers."""
    obs = np.asarray(observations)
    if obs.ndim < 1:
        raise ValueError(f"observation_vectors: expected observations [n, ...], got a scalar "
                         f"of shape {obs.shape}")
    if obs.dtype.kind not in "biuf":
        raise TypeError(f"observation_vectors: expected numbers or bools, got dtype "
                        f"{obs.dtype}")
    dtype = np.uint8 if obs.dtype == np.uint8 else np.float32  # (Atari's frames stay bytes)
    return obs.reshape(len(obs), -1).astype(dtype, copy=False)


def task_space(env_spec: Any) -> Box | Bool:
    """One observation of a task as a metagraph space: its own shape, in the dtype a program
    holds it (`EnvSpec.graph_observation_dtype`): `Bool` for bool planes, a `Box` of uint8
    frames or of float32 (with the task's bounds) otherwise."""
    gym_space = env_spec.observation_space
    shape = tuple(int(d) for d in gym_space.shape)
    dtype = env_spec.graph_observation_dtype
    if dtype == np.bool_:
        return Bool(shape)
    return Box(shape, dtype, gym_space.low, gym_space.high)


class Environment(mg.Component):
    """`num_envs` copies of an environment as a component (see the module docstring).

    Args:
        env_id: a native environment id (classic control, or a MuJoCo task of
            `components.envs.MUJOCO_IDS`), or any Gymnasium id with `door="gymnasium"`.
        num_envs: how many environments `reset` and `step` drive at once.
        door: "native" (default), "jax", "host" or "gymnasium".
        num_threads: C++ threads stepping the environments (native and host doors; results do
            not depend on it); None: every core this process may run on, capped at
            `num_envs`. The jax and gymnasium doors have no threads: anything but None or 1
            is refused.
        **kwargs: the environment's keyword arguments: a MuJoCo task's Gymnasium keyword
            arguments (`forward_reward_weight`, `ctrl_cost_weight`, `reset_noise_scale`, ...,
            `max_episode_steps`) on every door; with door "gymnasium", whatever
            `gymnasium.make_vec` passes to the environment. Classic control takes none.

    Raises:
        ValueError: an unknown id or door, a bad `num_envs` or `num_threads`.
        TypeError: keyword arguments the environment does not take; `backend=`, the old name
            of `door=`.
    """

    def __init__(self, env_id: str, num_envs: int, door: str = "native",
                 num_threads: int | None = None, name: str | None = None, **kwargs: Any):
        super().__init__(name)
        where = f"Environment({env_id!r})"
        if "backend" in kwargs:
            raise TypeError(renamed_argument(where, kwargs))
        if door not in DOORS:
            raise ValueError(f"{where}: door must be one of {DOORS}, got {door!r}")
        positive_int(num_envs, f"{where}: num_envs")
        if num_threads is not None:
            positive_int(num_threads, f"{where}: num_threads")
        if num_threads not in (None, 1) and door not in THREADED_DOORS:
            raise ValueError(f"{where}: the {door} door has no threads; num_threads must be 1 "
                             f"(threads step the native and host doors), got {num_threads}")
        if door in THREADED_DOORS:
            num_threads = resolve_threads(num_threads, num_envs, where)
        self.num_envs = num_envs
        self.door = door
        if door == "gymnasium":
            pool = gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync",
                                      vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
                                      **kwargs)
            self.env_spec = spec_of_gymnasium(env_id, pool)
            self.functional = HostDoor(self.env_spec, pool)
        elif door == "host":
            pool = make(env_id, num_envs, seed=0, num_threads=num_threads, **kwargs)
            # (a family's own engine may give any Gymnasium vector env: the spec is the id's)
            self.env_spec = getattr(pool, "env_spec", None) or spec(env_id, **kwargs)
            self.functional = HostDoor(self.env_spec, pool)
        else:
            self.functional = make_functional(env_id, door, num_threads if door == "native"
                                              else None, **kwargs)
            self.env_spec = self.functional.env_spec
        task = self.env_spec.task
        # a task whose legal actions depend on its state (a game): their mask is kept as state
        self.legal_actions = bool(self.env_spec.discrete and task is not None
                                  and task.has_legal)

    # ---- spaces ------------------------------------------------------------------------------
    @property
    def observation_space(self) -> Box | Bool | Dict:
        """One environment's observation space as the task gives it: its shape (MinAtar's
        planes [10, 10, C], Atari's stacked frames [4, 84, 84]) and its dtype inside a program
        (`EnvSpec.graph_observation_dtype`: `Bool` for bool planes, uint8 frames as uint8,
        float32 otherwise). A network that reads vectors gets them from a wrapper whose space
        says so (`components.envs.wrappers.FlattenObservation`). A task with legal actions (a
        game) is observed with them, by name: `Dict(obs=<that space>,
        legal=Bool((num_actions,)))`, what a `MaskedPolicy` reads."""
        observed = task_space(self.env_spec)
        if self.legal_actions:
            return Dict(obs=observed, legal=Bool((int(self.env_spec.action_space.n),)))
        return observed

    def _batched(self, space: Space) -> Space:
        """`space` with a leading axis of `num_envs` (`wrappers.wrapper.batched`)."""
        return batched(space, self.num_envs)

    def _shaped(self, obs: jax.Array) -> jax.Array:
        """The doors' observations [n, *shape] in the dtype the space says."""
        return obs.astype(self.env_spec.graph_observation_dtype)

    @property
    def action_space(self) -> Space:
        """One environment's action space (Discrete, or a Box that the dynamics clip to)."""
        gym_space = self.env_spec.action_space
        if self.env_spec.discrete:
            return Discrete(int(gym_space.n))
        return Box(gym_space.shape, np.float32, gym_space.low, gym_space.high)

    def batch_action_space(self) -> Space:
        """The space of one `step`'s actions: all `num_envs` environments at once."""
        single = self.action_space
        if isinstance(single, Discrete):
            return Discrete(single.n, shape=(self.num_envs,))
        return Box((self.num_envs, *single.shape), np.float32, single.low, single.high)

    def _step_space(self) -> Record:
        n, obs = self.num_envs, self._batched(self.observation_space)
        legal = Bool((n, self.action_space.n)) if self.legal_actions else None
        names = self.env_spec.extras_names
        extras = Dict({name: Box((n,)) for name in names}) if names else None
        return Record(StepResult, obs=obs, reward=Box((n,)), terminated=Bool((n,)),
                      truncated=Bool((n,)), final_obs=obs, extras=extras, legal_mask=legal)

    # ---- APIs --------------------------------------------------------------------------------
    @mg.api(outputs=lambda self: self._batched(self.observation_space))
    def reset(self, key):
        """Reset all `num_envs` environments with `key`; returns their observations (a
        game's with their legal moves, {"obs", "legal"})."""
        self._env_state()
        env_state, obs = self.functional.reset(key, self.num_envs)
        self.set_state("env_state", env_state)
        legal = None
        if self.legal_actions:
            self._legal()
            legal = self.functional.legal_mask(env_state)
            self.set_state("legal", legal)
        return self._observe(obs, legal)

    @mg.api(inputs={"action": lambda self: self.batch_action_space()},
            outputs=lambda self: self._step_space())
    def step(self, action):
        """Step every environment with `action` (auto-reset on done): a `StepResult` with
        `obs`, `reward`, `terminated`, `truncated` and `final_obs` (observations
        [num_envs, *shape] as `observation_space` says, a game's as {"obs", "legal"}; `state`
        None: it is the component's); for a task with extra outputs `extras` by name (a
        game's "player_to_move", "reward_player_<i>", ...), and for a task with legal actions
        (a game) `legal_mask`, the next states' legal actions. Actions outside the action
        space, and a game's illegal moves, are refused after the call
        (`mg.RuntimeCheckError`, the engine's message) and move no environment."""
        return self._stepped(action, None)

    @property
    def steps_some(self) -> bool:
        """Whether `step_where` can step some of the environments (an in-graph door's state
        is the program's; a pool's doors step all at once)."""
        return self.door not in POOL_DOORS

    def step_where(self, action: Any, active: jax.Array) -> StepResult:
        """Inside an API (a method, not an API: what `ActionRepeat` steps with): `step` of the
        environments where `active` (bool [num_envs]), the others' state as it was (their
        outputs are the step's and mean nothing). Only an in-graph door (native, jax) can step
        some of its environments; the host and gymnasium doors' pools step all at once (a
        TypeError)."""
        if not self.steps_some:
            raise TypeError(f"{self.name}.step_where: the {self.door} door's pool steps all "
                            f"its environments at once; stepping some needs door 'native' or "
                            f"'jax'")
        if jnp.shape(active) != (self.num_envs,) or jnp.result_type(active) != jnp.bool_:
            raise TypeError(f"{self.name}.step_where: active must be bool [{self.num_envs}] "
                            f"(one per environment), got {jnp.result_type(active)}"
                            f"{list(jnp.shape(active))}")
        return self._stepped(action, active)

    def _stepped(self, action: Any, active: jax.Array | None) -> StepResult:
        """`step` (see it) of every environment, or of those where `active`."""
        state = self._env_state()
        action = traced_actions(self.env_spec, action, (self.num_envs,),
                                f"{self.name}.step")
        ok = actions_ok(self.env_spec, action)
        checked = (action,)
        if self.legal_actions:
            legal = self._legal()
            ok = ok & legal_ok(action, legal)
            checked = (action, legal)
        # no host callback per step: the first refusal is reported after the call
        runtime_checks.require_once(self, ok, functools.partial(step_error, self.env_spec),
                                    *checked)
        step = functools.partial(self.functional.step, final_obs=True,
                                 extras=bool(self.env_spec.extras_names),
                                 legal_mask=self.legal_actions)
        if self.door in POOL_DOORS:  # the pool is not stepped at all
            out = jax.lax.cond(ok, step, self._refused_step, state, action)
        else:  # in-graph (also under vmap): good actions in, the old state kept
            good = jnp.where(ok, action, self._first_legal(action))
            out = step(state, good)
            if active is None:
                kept = jax.tree.map(lambda new, old: jnp.where(ok, new, old), out.state, state)
            else:
                kept = self.functional.kept(ok & active, out.state, state)
            out = out._replace(state=kept)
        self.set_state("env_state", out.state)
        if self.legal_actions:
            moved = ok if active is None else (ok & active)[:, None]
            self.set_state("legal", jnp.where(moved, out.legal_mask, legal))
        final_legal = None  # an ended episode's last state has no move
        if out.legal_mask is not None:
            done = out.terminated | out.truncated
            final_legal = out.legal_mask & ~done[:, None]
        return out._replace(state=None, obs=self._observe(out.obs, out.legal_mask),
                            final_obs=self._observe(out.final_obs, final_legal))

    def _observe(self, obs: jax.Array, legal: jax.Array | None) -> Any:
        """What the component gives of the doors' observations [n, *shape] and, for a task
        with legal actions, their states' legal masks: the observations in the space's dtype,
        or {"obs": those, "legal": the masks}."""
        if legal is None:
            return self._shaped(obs)
        return {"obs": self._shaped(obs), "legal": legal}

    def _first_legal(self, action: jax.Array) -> jax.Array:
        """Actions stepped in place of refused ones (their result is dropped): each
        environment's first legal action, 0 for a task without legal actions."""
        if not self.legal_actions:
            return jnp.zeros_like(action)
        return jnp.argmax(self._legal(), -1).astype(action.dtype)

    def _legal(self) -> jax.Array:
        """The legal actions of the environments' states (a task with legal actions), kept
        beside them: created with them, then what reset and each step report."""
        return self.get_state("legal", lambda key: self.functional.legal_mask(
            self._env_state()))

    def _refused_step(self, state: Any, action: jax.Array) -> StepResult:
        """What a refused step of a host door gives: the state as it was, zero outputs."""
        obs = jnp.zeros((self.num_envs, *self.env_spec.observation_space.shape),
                        self.env_spec.graph_observation_dtype)
        done = jnp.zeros((self.num_envs,), bool)
        row = jnp.zeros((self.num_envs,), jnp.float32)
        names = self.env_spec.extras_names
        return StepResult(state, obs, row, done, done, obs,
                          {name: row for name in names} if names else None,
                          self._legal() if self.legal_actions else None)

    # ---- in-graph state ----------------------------------------------------------------------
    def check_state(self, state: dict[str, Any]) -> None:
        """The native door's environments' state set from outside a call (a checkpoint, a
        `set_state`) must be one reset and step could produce: a forged one is refused here,
        naming the environment, instead of failing inside the compiled step after the
        executor's state was donated."""
        if self.door == "native" and "env_state" in state:
            self.functional.check_state(state["env_state"])

    def env_state(self) -> Any:
        """The environments' in-graph state now (inside an API; a method, not an API): on the
        native door what a search steps from (`components.search.GameSearch`: uint32[W,
        num_envs, 2] for a game), on the "jax" door the twin's; None on the host and
        Gymnasium doors, whose state lives in their pool."""
        return None if self.door in POOL_DOORS else self._env_state()

    def _env_state(self) -> Any:
        """The environments' state: created at build from the component's own key."""
        return self.get_state("env_state",
                              lambda key: self.functional.reset(key, self.num_envs)[0])
