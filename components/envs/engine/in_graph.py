"""`InGraphEnv`: the native door of the functional interface for every task, the C++ step run
inside a compiled program through the XLA FFI (on the CPU, or on a CUDA GPU through host copies
of the buffers; `vmap_method="broadcast_all"`: every
leading dimension is just more environments). Functional: state in, state out, as XLA buffers,
so `lax.scan`, `vmap` and a tree search can step from any stored state."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.functional import FunctionalEnv, check_elapsed_steps, raw_key
from components.envs.engine.step_result import PlayoutResult, StepResult
from components.envs.engine.threads import resolve_threads

_registered: set[str] = set()
_lock = threading.Lock()


def target_names(task: Any) -> tuple[str, str, str, str]:
    """The XLA FFI target names of a compiled task class: (reset, step, legal, playout)."""
    cls = type(task)
    base = f"metagraph_{cls.__module__.replace('.', '_')}_{cls.__name__}"
    return f"{base}_reset", f"{base}_step", f"{base}_legal", f"{base}_playout"


def register_ffi_targets(task: Any) -> tuple[str, str, str, str]:
    """Register the reset, step, legal and playout handlers of `task`'s class with XLA, once
    per class (idempotent, thread-safe), for every platform the class has handlers for: the
    host ("cpu") and CUDA GPUs ("CUDA": the CPU handler run on host copies of the program's
    buffers, copied on the program's stream; JAX keeps a registration for a platform it has
    not loaded until it does). Returns their target names."""
    names = target_names(task)
    with _lock:
        if names[0] not in _registered:
            for platform, handlers in type(task).ffi_handlers.items():
                for name, kind in zip(names, ("reset", "step", "legal", "playout"),
                                      strict=True):
                    jax.ffi.register_ffi_target(name, handlers[kind], platform=platform)
            _registered.add(names[0])
    return names


def records_of(state: Any) -> np.ndarray:
    """The in-graph state uint32[..., W, n, 2] as records uint64[..., n, W] (the host pool's
    `records()` layout), read on the host."""
    words = np.ascontiguousarray(np.asarray(state), np.uint32).view(np.uint64)[..., 0]
    return np.ascontiguousarray(np.swapaxes(words, -1, -2))


def state_of(records: Any) -> np.ndarray:
    """Records uint64[..., n, W] as the in-graph state uint32[..., W, n, 2]."""
    words = np.ascontiguousarray(np.swapaxes(np.asarray(records, np.uint64), -1, -2))
    return words[..., None].view(np.uint32)


@dataclasses.dataclass(frozen=True)
class InGraphEnv(FunctionalEnv):
    """A task's C++ step through the XLA FFI (CPU or CUDA GPU). The state is opaque,
    uint32[..., W, n, 2]: the engine's structure of arrays (W rows of n 8-byte words: the
    task's words, the random streams, the step counts). Environment i of
    `reset(PRNGKey(s), n)` draws from the stream of (s, i), as environment i of the host
    pool `make(..., seed=s)` does."""

    door: ClassVar[str] = "native"
    num_threads: int | None = None  # C++ threads stepping inside the program; None: every core

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_threads", resolve_threads(
            self.num_threads, None, f"{self.env_spec.env_id} (native door)"))
        register_ffi_targets(self.env_spec.task)

    @property
    def _targets(self) -> tuple[str, str, str, str]:
        return target_names(self.env_spec.task)

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        state = jnp.asarray(state)
        rows = self.env_spec.record_words
        if state.dtype != jnp.uint32 or state.ndim < 3 or state.shape[-1] != 2 \
                or state.shape[-3] != rows:
            raise TypeError(f"{self.env_spec.env_id}.step: state must come from reset "
                            f"(uint32[..., {rows}, num_envs, 2]), got "
                            f"{state.dtype}{list(state.shape)}")
        return state.shape[:-3] + state.shape[-2:-1]

    def kept(self, active: jax.Array, new: jax.Array, old: jax.Array) -> jax.Array:
        """Each environment's words from `new` where `active` (bool [..., n]), from `old`
        elsewhere (the environments are the state's second axis from the end)."""
        mask = jnp.reshape(active, active.shape[:-1] + (1, active.shape[-1], 1))
        return jnp.where(mask, new, old)

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[jax.Array, jax.Array]:
        lead = key.shape[:-1]
        rows = self.env_spec.record_words
        outputs = (jax.ShapeDtypeStruct(lead + (rows, num_envs, 2), jnp.uint32),
                   self._observations(lead + (num_envs,)))
        return jax.ffi.ffi_call(self._targets[0], outputs, vmap_method="broadcast_all")(
            key, instance=np.int64(self.env_spec.task.instance))

    def _step(self, state: jax.Array, action: jax.Array, *, final_obs: bool, extras: bool,
              legal_mask: bool) -> StepResult:
        # One call: outputs of no elements are ones not asked for, which the step does not
        # write (each observation once where final_obs is not wanted).
        state = jnp.asarray(state)
        n_shape = self._batch_shape(state)
        obs = self._observations(n_shape)
        flag = jax.ShapeDtypeStruct(n_shape, jnp.bool_)
        extras_dim = self.env_spec.extras_dim if extras else 0
        final = obs if final_obs else jax.ShapeDtypeStruct(n_shape + (0,), obs.dtype)
        actions = self.env_spec.legal_mask_width() if legal_mask else 0
        outputs = (jax.ShapeDtypeStruct(state.shape, jnp.uint32), obs,
                   jax.ShapeDtypeStruct(n_shape, jnp.float32), flag, flag, final,
                   jax.ShapeDtypeStruct(n_shape + (extras_dim,), jnp.float32),
                   jax.ShapeDtypeStruct(n_shape + (actions,), jnp.bool_))
        out = jax.ffi.ffi_call(self._targets[1], outputs, vmap_method="broadcast_all",
                               input_output_aliases={0: 0})(
            state, action, num_threads=np.int32(self.num_threads),
            instance=np.int64(self.env_spec.task.instance))
        return StepResult(out[0], out[1], out[2], out[3], out[4],
                          out[5] if final_obs else None, self._named(out[6]) if extras else None,
                          out[7] if legal_mask else None)

    def _named(self, extras: jax.Array) -> dict[str, jax.Array]:
        """Extras [..., extras_dim] by the task's names, each [...]."""
        return {name: extras[..., k] for k, name in enumerate(self.env_spec.extras_names)}

    def _observations(self, n_shape: tuple[int, ...]) -> jax.ShapeDtypeStruct:
        """The observations of environments [*n_shape]: the space's shape, float32 (or bool
        for a task with bool observations)."""
        return jax.ShapeDtypeStruct(n_shape + tuple(self.env_spec.observation_space.shape),
                                    self.env_spec.graph_observation_dtype)

    def legal_mask(self, state: Any) -> jax.Array:
        """The legal actions of each environment's state, bool[..., n, num_actions] (inside a
        program too; all true for a task whose actions are always legal)."""
        width = self.env_spec.legal_mask_width()
        state = jnp.asarray(state)
        shape = self._batch_shape(state) + (width,)
        return jax.ffi.ffi_call(self._targets[2], jax.ShapeDtypeStruct(shape, jnp.bool_),
                                vmap_method="broadcast_all")(
            state, instance=np.int64(self.env_spec.task.instance))

    def playout(self, state: Any, key: jax.Array, *, check_draws: bool = False
                ) -> PlayoutResult:
        """Random playouts from every environment's state, natively (inside a program too):
        each plays actions drawn uniformly among its legal ones (OpenSpiel's random rollouts)
        until its episode terminates or reaches the step limit. `key`: a raw PRNG key
        uint32[2] (or a typed key); environment i draws from the stream of (key, i), i over
        the leading axes flattened. `state` is left as it is. Returns a `PlayoutResult`
        (`returns` float32[..., n], the rewards summed along each playout; `extras` by name,
        those of the state it ended in: a game's outcome for every player; `length`
        int32[..., n], the steps played). A forged state fails the call as a step does, and
        so does a state with no legal action whose game goes on. `check_draws`: every move a
        task's own `random_legal` draws is tested with `legal()` (`envs.check` does; a draw
        out of range fails the call always)."""
        if not self.env_spec.discrete:
            raise TypeError(f"{self.env_spec.env_id}: playouts draw discrete actions only")
        key = raw_key(key, f"{self.env_spec.env_id}.playout")
        n_shape = self._batch_shape(state)
        outputs = (jax.ShapeDtypeStruct(n_shape, jnp.float32),
                   jax.ShapeDtypeStruct(n_shape + (self.env_spec.extras_dim,), jnp.float32),
                   jax.ShapeDtypeStruct(n_shape, jnp.int32))
        returns, extras, length = jax.ffi.ffi_call(
            self._targets[3], outputs, vmap_method="broadcast_all")(
            key, jnp.asarray(state), num_threads=np.int32(self.num_threads),
            check_draws=bool(check_draws), instance=np.int64(self.env_spec.task.instance))
        return PlayoutResult(returns, self._named(extras), length)

    def records(self, state: Any) -> np.ndarray:
        """The environments' records, uint64[..., n, W], read on the host (the words of the
        host pool's `records()`)."""
        return records_of(state)

    def check_state(self, state: Any) -> None:
        """ValueError naming the first environment of `state` (uint32[..., W, n, 2]; the
        index counts over the leading axes flattened) whose words reset and step could not
        have produced: a forged or edited state, refused on the host before any program
        steps it."""
        records = self.records(state)
        self.env_spec.task.check_records(
            np.ascontiguousarray(records.reshape(-1, records.shape[-1])))

    def physical_state(self, state: Any) -> np.ndarray:
        """The physical state of each environment, float64 [..., n, physical_dim]."""
        records = self.records(state)
        flat = np.ascontiguousarray(records.reshape(-1, records.shape[-1]))
        physics = self.env_spec.task.physical(flat)
        return physics.reshape(records.shape[:-1] + (self.env_spec.physical_dim,))

    def elapsed_steps(self, state: Any) -> np.ndarray:
        """Steps taken in each environment's current episode."""
        return self.records(state)[..., -1].astype(np.int32)

    def state_from_physical(self, physics: Any, seed: int = 0, elapsed_steps: Any = 0
                            ) -> np.ndarray:
        """An opaque state that starts each environment from the given physical state
        ((n, physical_dim) or (physical_dim,)), as if `elapsed_steps` of its episode had
        passed (to reach the time limit in tests)."""
        physics = self._physics_for(physics)
        num_envs = physics.shape[0]
        pool = self._pool(num_envs, seed)
        pool.reset_to(physics)
        records = pool.records()
        records[:, -1] = check_elapsed_steps(self.env_spec, elapsed_steps, num_envs)
        return state_of(records)

    def _pool(self, num_envs: int, seed: int = 0) -> Any:
        """A host pool of the same task (one thread), to read and make states."""
        task = self.env_spec.task
        return task.Pool(task, num_envs, seed, 1)
