"""`FunctionalEnv`: the interface every door of an environment offers to a compiled program,
pure `reset(key, num_envs)` and `step(state, action)` functions over an opaque state, with the
argument checks they share. A door (`InGraphEnv`, a family's pure-JAX twin, `HostDoor`)
supplies `_batch_shape`, `_reset`, `_step` and, where it can, `physical_state` /
`state_from_physical`."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.actions import traced_actions
from components.envs.engine.spec import EnvSpec, physical_rows
from metagraph.checks import positive_int


def raw_key(key: Any, where: str) -> jax.Array:
    """`key` (a typed key or a raw one) as a raw PRNG key uint32[..., 2]; TypeError naming
    `where` otherwise."""
    if jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    key = jnp.asarray(key)
    if key.dtype != jnp.uint32 or key.shape[-1:] != (2,):
        raise TypeError(f"{where}: key must be a raw PRNG key uint32[2], got "
                        f"{key.dtype}{list(key.shape)}")
    return key


@dataclasses.dataclass(frozen=True)
class FunctionalEnv:
    """The functional interface shared by every door: argument checks and the API; a door
    supplies `_batch_shape`, `_reset`, `_step`, `physical_state` and `state_from_physical`."""

    env_spec: EnvSpec
    door: ClassVar[str] = ""

    @property
    def obs_dim(self) -> int:
        """The number of elements of one observation (its shape's product)."""
        return int(np.prod(self.env_spec.observation_space.shape))

    def reset(self, key: jax.Array, num_envs: int) -> tuple[Any, jax.Array]:
        """Initial states of `num_envs` environments, one random stream per environment index.
        Leading axes of `key` (from vmap or a batch of keys) are more groups of environments."""
        key = raw_key(key, f"{self.env_spec.env_id}.reset")
        positive_int(num_envs, f"{self.env_spec.env_id}.reset: num_envs")
        return self._reset(key, num_envs)

    def step_with_final_obs(self, state: Any, action: jax.Array) -> tuple:
        """`step`, also returning the last observation of episodes that ended this step.
        Actions outside the action space (a discrete action outside [0, n), a NaN or infinite
        continuous one) fail the call with the same message on every door."""
        action = traced_actions(self.env_spec, action, self._batch_shape(state),
                                f"{self.env_spec.env_id}.step")
        return self._step(state, action)

    def step(self, state: Any, action: jax.Array) -> tuple:
        """(state', obs, reward, terminated, truncated) with same-step auto-reset."""
        return self.step_with_final_obs(state, action)[:5]

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        raise NotImplementedError

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[Any, jax.Array]:
        raise NotImplementedError

    def _step(self, state: Any, action: jax.Array) -> tuple:
        raise NotImplementedError

    def _physics_for(self, physics: Any) -> np.ndarray:
        physics = np.asarray(physics, np.float64)
        num_envs = physics.shape[0] if physics.ndim == 2 else 1
        return physical_rows(self.env_spec, physics, num_envs, "physics")


def check_elapsed_steps(env_spec: EnvSpec, elapsed_steps: Any, num_envs: int) -> np.ndarray:
    """Steps already taken in each environment's episode, as int32[num_envs], or a ValueError
    when they are not integers in [0, max_episode_steps)."""
    steps = np.broadcast_to(np.asarray(elapsed_steps), (num_envs,))
    if steps.dtype.kind not in "iu" or steps.min() < 0 or steps.max() >= env_spec.max_episode_steps:
        raise ValueError(f"{env_spec.env_id}: elapsed_steps must be integers in "
                         f"[0, {env_spec.max_episode_steps}), got {elapsed_steps!r}")
    return steps.astype(np.int32)
