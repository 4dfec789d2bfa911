"""`FunctionalEnv`: the interface every door of an environment offers to a compiled program,
pure `reset(key, num_envs)` and `step(state, action, ...) -> StepResult` functions over an
opaque state, with the argument checks they share. A door (`InGraphEnv`, a family's pure-JAX
twin, `HostDoor`) supplies `_batch_shape`, `_reset`, `_step` and, where it can, `physical_state` /
`state_from_physical`."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.actions import traced_actions
from components.envs.engine.spec import EnvSpec, physical_rows
from components.envs.engine.step_result import StepResult
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

    def step(self, state: Any, action: jax.Array, *, final_obs: bool = False,
             extras: bool = False, legal_mask: bool = False) -> StepResult:
        """One step of every environment with same-step auto-reset: a `StepResult` (state,
        obs, reward, terminated, truncated), with the final observations (`final_obs`), the
        task's extra outputs by name (`extras`) and the next states' legal actions
        (`legal_mask`) where asked for; what is not asked for is None and not computed where
        the door can skip it. Actions outside the action space (a discrete action outside
        [0, n), a NaN or infinite continuous one) fail the call with the same message on
        every door. Called eagerly, a refusal is a ValueError with the engine's message, as the
        host pool's (a program that steps inside the caller's own `jax.jit` fails with XLA's
        `JaxRuntimeError`, the same message after "INVALID_ARGUMENT: ")."""
        where = f"{self.env_spec.env_id}.step"
        action = traced_actions(self.env_spec, action, self._batch_shape(state), where)
        if legal_mask:
            self.env_spec.legal_mask_width()  # (a TypeError for continuous actions)
        try:
            out = self._step(state, action, final_obs=final_obs, extras=extras,
                             legal_mask=legal_mask)
            if not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(out)):
                # Eager: where dispatch is asynchronous (JAX 0.11, a GPU as default backend),
                # a refusal would surface only when the caller reads the result.
                jax.block_until_ready(out)
            return out
        except (ValueError, jax.errors.JaxRuntimeError) as error:
            refusal = engine_refusal(error)
            if refusal is error:
                raise
            raise refusal from None

    def _asked(self, out: StepResult, final_obs: bool, extras: bool, legal_mask: bool
               ) -> StepResult:
        """`out`, a door's whole step (final observations included, extras where the door
        computes them) with what was not asked for dropped; extras and legal masks for a door
        that computes neither: none for a task without them (an empty dict, every action
        legal), a TypeError for a task with them."""
        task = self.env_spec.task
        if extras and out.extras is None and self.env_spec.extras_dim:
            raise TypeError(f"{self.env_spec.env_id}: the {self.door} door gives no extras; "
                            f"the native door does")
        if legal_mask and task is not None and task.has_legal:
            raise TypeError(f"{self.env_spec.env_id}: the {self.door} door gives no legal "
                            f"mask; the native door does")
        mask = None
        if legal_mask:
            mask = jnp.ones(out.reward.shape + (self.env_spec.legal_mask_width(),), jnp.bool_)
        return out._replace(final_obs=out.final_obs if final_obs else None,
                            extras=(out.extras or {}) if extras else None,
                            legal_mask=mask)

    def kept(self, active: jax.Array, new: Any, old: Any) -> Any:
        """Each environment's state from `new` where `active` (bool, the batch's shape), from
        `old` elsewhere: a step of some of the environments. Here for a state whose every
        leaf leads with the batch's axes (the pure-JAX twins'); a door that keeps its
        environments on another axis (the native one) says so, one that keeps them in a
        pool has none (a TypeError)."""
        return where_leading(active, new, old)

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        raise NotImplementedError

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[Any, jax.Array]:
        raise NotImplementedError

    def _step(self, state: Any, action: jax.Array, *, final_obs: bool, extras: bool,
              legal_mask: bool) -> StepResult:
        raise NotImplementedError

    def _physics_for(self, physics: Any) -> np.ndarray:
        physics = np.asarray(physics, np.float64)
        num_envs = physics.shape[0] if physics.ndim == 2 else 1
        return physical_rows(self.env_spec, physics, num_envs, "physics")


def where_leading(mask: jax.Array, new: Any, old: Any) -> Any:
    """`new` where `mask`, `old` elsewhere, leaf by leaf of two pytrees alike, each leaf
    leading with `mask`'s axes (the mask broadcast over the rest)."""
    def one(new_leaf: jax.Array, old_leaf: jax.Array) -> jax.Array:
        shaped = jnp.reshape(mask, mask.shape + (1,) * (jnp.ndim(new_leaf) - mask.ndim))
        return jnp.where(shaped, new_leaf, old_leaf)
    return jax.tree.map(one, new, old)


def engine_refusal(error: Exception) -> Exception:
    """What an eager call of a door raises for `error`: a refusal of the step as one
    ValueError with the door's own message, the host pool's; any other error as it is. A
    refusal arrives as XLA's status INVALID_ARGUMENT from the native door (which JAX raises as
    a ValueError on its fast path of eager dispatch and as a JaxRuntimeError on its first
    call), or, from a pure-JAX twin, as the ValueError its host callback raised, wrapped in
    XLA's INTERNAL error with the callback's traceback (`actions.refuse_bad_actions`)."""
    text = str(error)
    prefix = "INVALID_ARGUMENT: "
    if text.startswith(prefix):
        # JAX 0.11 names the program after the message: " [executable_name='jit_ffi_call']"
        return ValueError(re.sub(r" \[executable_name='[^']*'\]$", "", text[len(prefix):]))
    raised = "\nValueError: "
    if text.startswith("INTERNAL: CpuCallback error") and raised in text:
        return ValueError(text.rsplit(raised, 1)[1])
    return error


def check_elapsed_steps(env_spec: EnvSpec, elapsed_steps: Any, num_envs: int) -> np.ndarray:
    """Steps already taken in each environment's episode, as int32[num_envs], or a ValueError
    when they are not integers in [0, max_episode_steps)."""
    steps = np.broadcast_to(np.asarray(elapsed_steps), (num_envs,))
    if steps.dtype.kind not in "iu" or steps.min() < 0 or steps.max() >= env_spec.max_episode_steps:
        raise ValueError(f"{env_spec.env_id}: elapsed_steps must be integers in "
                         f"[0, {env_spec.max_episode_steps}), got {elapsed_steps!r}")
    return steps.astype(np.int32)
