"""The functional interface over a host pool: `reset` / `step` reach a `gymnasium.vector.VectorEnv`
(the engine's threaded pool, or any Gymnasium environment vectorised with same-step auto-reset)
through ordered `io_callback`s, so an agent's fused rollout (`lax.scan`) runs unchanged with
the environment stepping on the host while the compiled program runs the network.

The "state" is a placeholder (uint32[N, 1]); the real state lives in the pool. The engine's
own pool gives what its in-graph door gives (the task's extras by name, legal masks); a
Gymnasium environment gives the five arrays and final observations. No vmap, and one program
at a time per pool. While a graph's state is being created, nothing reaches the pool
(placeholder outputs).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from components.envs.engine.actions import action_error
from components.envs.engine.functional import FunctionalEnv
from components.envs.engine.spec import EnvSpec
from components.envs.engine.step_result import StepResult
from metagraph import context


def seed_of(key: Any) -> int:
    """The 64-bit seed a raw key `PRNGKey(s)` carries (s, for s < 2**64)."""
    words = np.asarray(key, np.uint32)
    return (int(words[0]) << 32) | int(words[1])


def spec_of_gymnasium(env_id: str, pool: gymnasium.vector.VectorEnv) -> EnvSpec:
    """An EnvSpec for a Gymnasium environment (Box observations, Discrete or Box actions, a
    time limit)."""
    observation, action = pool.single_observation_space, pool.single_action_space
    if not isinstance(observation, gymnasium.spaces.Box):
        raise TypeError(f"{env_id}: observations must be a Box, got {observation}")
    if not isinstance(action, gymnasium.spaces.Discrete | gymnasium.spaces.Box):
        raise TypeError(f"{env_id}: actions must be Discrete or Box, got {action}")
    limit = pool.spec.max_episode_steps if pool.spec is not None else None
    if limit is None:
        raise ValueError(f"{env_id}: a time limit (max_episode_steps) is needed")
    return EnvSpec(env_id, observation, action, int(limit))


def own_record(pool: Any) -> bool:
    """Whether `pool` is one of the library's host pools (the engine's `VectorEnv`, Atari's),
    which give a step's whole record (`step_result`) and legal masks; else a Gymnasium vector
    env."""
    return callable(getattr(pool, "step_result", None))


@dataclasses.dataclass(frozen=True)
class HostDoor(FunctionalEnv):
    """A host pool (`pool`, a `gymnasium.vector.VectorEnv` with same-step auto-reset) behind
    the functional interface, stepped from the program through ordered `io_callback`s. Bad
    actions fail the step with the native core's message, before the pool sees them."""

    pool: Any = None
    door: ClassVar[str] = "host"

    def _structs(self, n: int, final_obs: bool = True, extras: bool = False,
                 legal_mask: bool = False) -> StepResult:
        """What a step gives, as `jax.ShapeDtypeStruct`s (state None)."""
        obs = jax.ShapeDtypeStruct((n, *self.env_spec.observation_space.shape),
                                   self.env_spec.graph_observation_dtype)
        flag = jax.ShapeDtypeStruct((n,), jnp.bool_)
        row = jax.ShapeDtypeStruct((n,), jnp.float32)
        mask = None
        if legal_mask:
            mask = jax.ShapeDtypeStruct((n, self.env_spec.legal_mask_width()), jnp.bool_)
        return StepResult(None, obs, row, flag, flag, obs if final_obs else None,
                          {name: row for name in self.env_spec.extras_names} if extras
                          else None, mask)

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        return tuple(jnp.shape(state)[:1])

    def kept(self, active: jax.Array, new: Any, old: Any) -> Any:
        """None: the pool steps all its environments at once (a TypeError)."""
        raise TypeError(f"{self.env_spec.env_id}: the {self.door} door's pool steps all its "
                        f"environments at once; stepping some of them needs an in-graph "
                        f"door (native or jax)")

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[jax.Array, jax.Array]:
        if num_envs != self.pool.num_envs:
            raise ValueError(f"{self.env_spec.env_id}: the host pool has {self.pool.num_envs} "
                             f"environments, reset asked for {num_envs}")
        state = jnp.zeros((num_envs, 1), jnp.uint32)
        obs_struct = self._structs(num_envs).obs
        if context.initializing():
            return state, jnp.zeros(obs_struct.shape, obs_struct.dtype)

        def host_reset(key):
            obs, _ = self.pool.reset(seed=seed_of(key))
            return np.asarray(obs, obs_struct.dtype)

        return state, io_callback(host_reset, obs_struct, key, ordered=True)

    def legal_mask(self, state: jax.Array) -> jax.Array:
        """The legal actions of the pool's environments now, bool[n, num_actions] (every action
        of a Gymnasium environment; placeholders while a graph's state is created)."""
        struct = jax.ShapeDtypeStruct((self.pool.num_envs, self.env_spec.legal_mask_width()),
                                      jnp.bool_)
        if context.initializing() or not own_record(self.pool):
            return jnp.ones(struct.shape, struct.dtype)
        return io_callback(lambda _: np.asarray(self.pool.legal_mask(), bool), struct, state,
                           ordered=True)

    def _step(self, state: jax.Array, action: jax.Array, **asked: bool) -> StepResult:
        native = own_record(self.pool)  # the engine's pools give the whole record
        structs = self._structs(self.pool.num_envs, **asked) if native \
            else self._structs(self.pool.num_envs)
        if context.initializing():
            out = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), structs)
        else:
            def host_step(action):
                message = action_error(self.env_spec, action)
                if message is not None:
                    raise ValueError(message)
                out = self.pool.step_result(np.asarray(action), **asked) if native \
                    else self._gymnasium_step(np.asarray(action))
                return jax.tree.map(lambda x, s: np.asarray(x, s.dtype), out, structs)

            out = io_callback(host_step, structs, action, ordered=True)
        out = out._replace(state=state)
        return out if native else self._asked(out, **asked)

    def _gymnasium_step(self, action: np.ndarray) -> StepResult:
        """A Gymnasium vector environment's step as a record, final observations included."""
        obs, reward, terminated, truncated, info = self.pool.step(action)
        final = info.get("final_obs")
        if final is None:  # no episode ended
            final = obs
        else:
            mask = info["_final_obs"]
            if final.dtype == object:  # Gymnasium's per-env entries
                final = np.stack([final[i] if mask[i] else obs[i] for i in range(len(obs))])
            else:  # the rows of ended episodes, zeros in the others
                final = np.where(mask.reshape(-1, *[1] * (np.ndim(obs) - 1)), final, obs)
        return StepResult(None, obs, reward, terminated, truncated, final)
