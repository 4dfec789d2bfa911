"""The pure-JAX twin behind the functional interface (`make_functional(env_id, door="jax")`):
the dynamics of `twin_dynamics.py` in float32, with the same spaces, limits and same-step
auto-reset as the C++ core, for accelerators where a host round trip would dominate.

Its state is a `TwinState` pytree. Random streams come from JAX keys (environment i of
`reset(key, n)` uses `fold_in(key, i)`), so the twin is deterministic under a seed but does not
draw the same initial states as the native core; from the same physical state the two step
alike to float32 precision (tested). Bad actions fail the step with the native core's message
(`engine/actions.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.classic_control.twin_dynamics import DYNAMICS
from components.envs.engine.actions import refuse_bad_actions
from components.envs.engine.functional import FunctionalEnv, check_elapsed_steps
from components.envs.engine.step_result import StepResult


class TwinState(NamedTuple):
    """The pure-JAX twin's state: physics, steps in the episode and each environment's key."""
    physics: jax.Array  # float32[..., N, physical_dim], Gymnasium's layout
    steps: jax.Array  # int32[..., N], steps taken in the current episode
    key: jax.Array  # uint32[..., N, 2], each environment's own stream


def _map_keys(fn, keys: jax.Array) -> Any:
    """Apply a one-key function to every key of uint32[..., 2]."""
    lead = keys.shape[:-1]
    out = jax.vmap(fn)(keys.reshape(-1, 2))
    return jax.tree.map(lambda x: x.reshape(lead + x.shape[1:]), out)


class TwinFunctionalEnv(FunctionalEnv):
    """The pure-JAX twin of a native environment (see the module docstring)."""

    door: ClassVar[str] = "jax"

    @property
    def dynamics(self) -> Any:
        """The class of this environment's pure-JAX dynamics (`twin_dynamics`)."""
        return DYNAMICS[self.env_spec.env_id]

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        if not isinstance(state, TwinState):
            raise TypeError(f"{self.env_spec.env_id}.step: state must be the TwinState that "
                            f"reset returned, got {type(state).__name__}")
        return tuple(state.steps.shape)

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[TwinState, jax.Array]:
        def one_group(group_key):
            return jax.vmap(lambda i: jax.random.fold_in(group_key, i))(jnp.arange(num_envs))

        keys = _map_keys(one_group, key)
        keys, reset_keys = self._split(keys)
        physics = _map_keys(self.dynamics.reset, reset_keys)
        steps = jnp.zeros(physics.shape[:-1], jnp.int32)
        return TwinState(physics, steps, keys), self.dynamics.observe(physics)

    @staticmethod
    def _split(keys: jax.Array) -> tuple[jax.Array, jax.Array]:
        pair = _map_keys(jax.random.split, keys)
        return pair[..., 0, :], pair[..., 1, :]

    def _step(self, state: TwinState, action: jax.Array, **asked: bool) -> StepResult:
        refuse_bad_actions(self.env_spec, action)
        physics, reward, terminated = self.dynamics.step(state.physics, action)
        steps = state.steps + 1
        truncated = steps >= self.env_spec.max_episode_steps  # whether or not it terminated
        final_obs = self.dynamics.observe(physics)
        done = terminated | truncated
        keys, reset_keys = self._split(state.key)
        fresh = _map_keys(self.dynamics.reset, reset_keys)
        physics = jnp.where(done[..., None], fresh, physics)
        steps = jnp.where(done, 0, steps)
        obs = self.dynamics.observe(physics)
        return self._asked(StepResult(TwinState(physics, steps, keys), obs,
                                      reward.astype(jnp.float32), terminated, truncated,
                                      final_obs), **asked)

    def physical_state(self, state: TwinState) -> np.ndarray:
        """The physics of each environment (Gymnasium's layout), as float64 on the host."""
        return np.asarray(state.physics, np.float64)

    def elapsed_steps(self, state: TwinState) -> np.ndarray:
        """Steps taken in each environment's current episode."""
        return np.asarray(state.steps)

    def state_from_physical(self, physics: Any, seed: int = 0, elapsed_steps: Any = 0
                            ) -> TwinState:
        """A state that starts each environment from the given physical state, as if
        `elapsed_steps` of its episode had passed."""
        physics = self._physics_for(physics)
        num_envs = physics.shape[0]
        keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.PRNGKey(seed), i))(
            jnp.arange(num_envs))
        steps = check_elapsed_steps(self.env_spec, elapsed_steps, num_envs)
        return TwinState(jnp.asarray(physics, jnp.float32), jnp.asarray(steps), keys)
