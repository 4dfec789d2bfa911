"""The asynchronous Atari pool, EnvPool's spelling over ale-py's own asynchronous engine:
`make("Pong-v5", num_envs, batch_size=B)`, `async_reset()`, `recv()` and `send(actions,
env_ids)`. ale-py returns the first `B` environments to finish, whichever they are
(`info["env_id"]`), and `send` answers the batch received last: one batch is held at a time.

    env = envs.make("Pong-v5", 16, batch_size=8)
    env.async_reset()
    for _ in range(1000):
        obs, reward, terminated, truncated, info = env.recv()
        env.send(policy(obs), info["env_id"])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from components.envs.atari.vector_env import _Games, refuse_exact_state
from components.envs.engine.spec import EnvSpec
from components.envs.engine.threads import resolve_threads
from components.envs.engine.vector_env import check_seed, set_spaces
from metagraph.checks import positive_int


class AtariAsyncVectorEnv:
    """`num_envs` environments of an Atari game stepped asynchronously by ale-py's threads,
    `batch_size` at a time (see the module docstring); steps as `AtariVectorEnv.step` gives
    them, `info["env_id"]` their environments.

    Args:
        spec: the game's spec.
        num_envs: how many environments.
        batch_size: the environments `recv` returns at once (at most `num_envs`).
        seed: environment i is seeded with (seed + i) mod 2**31; None: fresh.
        num_threads: ale-py's threads; None: every core this process may run on, capped at
            `batch_size`.
    """

    def __init__(self, spec: EnvSpec, num_envs: int, batch_size: int, seed: int | None = 0,
                 num_threads: int | None = None):
        where = spec.env_id
        self.env_spec = spec
        self.num_envs = positive_int(num_envs, f"{where}: num_envs")
        self.batch_size = positive_int(batch_size, f"{where}: batch_size")
        if self.batch_size > self.num_envs:
            raise ValueError(f"{where}: batch_size ({self.batch_size}) must be at most "
                             f"num_envs ({self.num_envs})")
        self._seed = check_seed(seed, where)
        self._games = _Games(spec, self.num_envs, self.batch_size,
                             resolve_threads(num_threads, self.batch_size, where))
        self._first: tuple | None = None   # the batch async_reset received
        self._held: np.ndarray | None = None  # the ids of the batch received, not yet sent
        self._started = False
        self.closed = False
        set_spaces(self, spec, self.batch_size)

    @property
    def num_threads(self) -> int:
        """ale-py's threads stepping the environments."""
        return self._games.num_threads

    def async_reset(self, seed: int | None = None) -> None:
        """Start a new game in every environment (from `seed`; without one, from the pool's
        seed the first time and each environment's own stream after); the first
        observations come from `recv`, with reward 0 and neither flag set. Nothing may be in
        flight: only before the first step, or with every environment received."""
        self._check_open()
        if self._started and (self._held is None or self.batch_size != self.num_envs):
            raise RuntimeError(f"{self.env_spec.env_id}: async_reset while environments are "
                               f"stepping; ale-py resets the whole pool only before its first "
                               f"step or when every environment has been received (batch_size "
                               f"= num_envs). Make a new pool to start again")
        if seed is not None:
            seed = check_seed(seed, self.env_spec.env_id)
        elif not self._started:
            seed = self._seed
        self._started = True
        obs, info = self._games.reset(seed)
        n = len(obs)
        self._first = (obs, np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool), info)
        self._held = None

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The next `batch_size` environments to finish their step (or reset): `(obs, reward,
        terminated, truncated, info)`, their indices in `info["env_id"]`. Waits until they
        have."""
        self._check_open()
        if not self._started:
            raise RuntimeError(f"{self.env_spec.env_id}: recv with nothing sent: call "
                               f"async_reset() first, then send() what recv() gave")
        if self._held is not None:
            raise RuntimeError(f"{self.env_spec.env_id}: recv while the batch received last "
                               f"({self._held.tolist()[:8]}...) has not been sent: ale-py "
                               f"holds one batch at a time; send its actions first")
        if self._first is not None:
            batch, self._first = self._first, None
        else:
            batch = self._games.finish(self._games.ale.recv())
        self._held = batch[4]["env_id"]
        return batch

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start the step of the batch received last (`env_ids`: its `info["env_id"]`, or
        None) with `actions` for its environments in that order; returns at once. A
        ValueError for ids that are not that batch's, or bad actions (nothing is sent: the
        batch may be sent again)."""
        self._check_open()
        where = self.env_spec.env_id
        if self._held is None:
            raise ValueError(f"{where}: send without a batch received: send answers recv")
        if env_ids is not None and not np.array_equal(np.asarray(env_ids), self._held):
            raise ValueError(f"{where}: env_ids {np.asarray(env_ids).tolist()[:8]}... are not "
                             f"those of the batch received last ({self._held.tolist()[:8]}"
                             f"...): ale-py steps the batch recv returned, in its order")
        arr = self._games.actions(actions, self.batch_size)
        self._games.ale.send(arr)
        self._held = None

    def step(self, actions: Any, env_ids: Any = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """`send(actions, env_ids)` then `recv()`: the next batch to finish."""
        self.send(actions, env_ids)
        return self.recv()

    def __getstate__(self) -> dict:
        raise refuse_exact_state(self.env_spec.env_id, "pickling the pool")

    def close(self) -> None:
        """Stop ale-py's threads."""
        if not self.closed:
            self.closed = True
            self._games.close()

    def __enter__(self) -> AtariAsyncVectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self.env_spec.env_id}: the environment pool is closed")

    def __repr__(self) -> str:
        return (f"AtariAsyncVectorEnv({self.env_spec.env_id}, num_envs={self.num_envs}, "
                f"batch_size={self.batch_size})")


__all__ = ["AtariAsyncVectorEnv"]
