"""The XLA FFI targets of the native cores: `metagraph_<env>_reset` and `metagraph_<env>_step`
(CPU), registered with JAX by `register_ffi_targets()`.

Registration is explicit, not a side effect of importing a module: the native door
(`NativeFunctionalEnv`) calls it when it is made, and a user who lowers `jax.ffi.ffi_call`s of
these targets by hand calls it first. It is idempotent and thread-safe: the second and later
calls do nothing.
"""

from __future__ import annotations

import threading

import jax

from components.envs.specs import SPECS

_lock = threading.Lock()
_registered = False


def target_name(env_id: str, what: str) -> str:
    """The FFI target name of `what` ("reset" or "step") for a native environment."""
    return f"metagraph_{env_id.replace('-', '_')}_{what}"


def register_ffi_targets() -> None:
    """Register every native environment's reset and step handlers with XLA (CPU), once."""
    global _registered
    with _lock:
        if _registered:
            return
        for env_id, env_spec in SPECS.items():
            jax.ffi.register_ffi_target(target_name(env_id, "reset"), env_spec.ffi_reset,
                                        platform="cpu")
            jax.ffi.register_ffi_target(target_name(env_id, "step"), env_spec.ffi_step,
                                        platform="cpu")
        _registered = True
