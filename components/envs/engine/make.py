"""`make`: the host door of every task, synchronous (`VectorEnv`) or asynchronous
(`AsyncVectorEnv`, with `batch_size`)."""

from __future__ import annotations

from typing import Any

from components.envs.engine import catalogue
from components.envs.engine.async_vector_env import AsyncVectorEnv
from components.envs.engine.vector_env import VectorEnv


def make(env_id: str, num_envs: int = 1, seed: int | None = 0, num_threads: int | None = None,
         batch_size: int | None = None, **kwargs: Any) -> Any:
    """The host pool of `num_envs` environments of `env_id` (any registered id) stepped by
    `num_threads` C++ threads (None: every core this process may run on, capped at
    `num_envs`); `kwargs` are the environment's keyword arguments. With `batch_size`, the
    asynchronous pool (`AsyncVectorEnv`: EnvPool's `async_reset`, `recv`, `send`), its
    environments stepped in groups of `batch_size`; else a `VectorEnv`. A family with an
    engine of its own makes its own pools (Atari: `AtariVectorEnv`, `AtariAsyncVectorEnv`)."""
    if isinstance(env_id, str):
        own = catalogue.registration(env_id).vector_env
        if own is not None:  # a family stepping in an engine of its own (Atari)
            return own(catalogue.spec(env_id, **kwargs), num_envs, seed, num_threads,
                       batch_size)
    if batch_size is not None:
        return AsyncVectorEnv(env_id, num_envs, batch_size, seed, num_threads, **kwargs)
    return VectorEnv(env_id, num_envs, seed, num_threads, **kwargs)


def vector_entry_point(env_id: str, num_envs: int = 1, seed: int | None = 0,
                       num_threads: int | None = None, **kwargs: Any) -> Any:
    """`gymnasium.make_vec("metagraph/<id>", n)`: registered by name so that the specs
    Gymnasium keeps on its environments pickle. Gymnasium's own `max_episode_steps` is the
    task's (a MuJoCo task takes it as a keyword argument)."""
    return make(env_id, num_envs, seed, num_threads, **kwargs)
