"""The asynchronous host pool, in EnvPool's spelling: `make(id, num_envs, batch_size=B)`,
`async_reset()`, `recv()` and `send(actions, env_ids)`, so that the C++ threads step some
environments while the caller runs its policy for others (the seed's loop; Sebulba's actor).

    env = envs.make("CartPole-v1", 8, batch_size=4)       # two groups of 4
    env.async_reset()
    for _ in range(1000):
        obs, reward, terminated, truncated, info = env.recv()   # a group that finished
        env.send(policy(obs), info["env_id"])                   # it steps while we go on

The environments are split into `num_envs // batch_size` groups of `batch_size`; each group is
a host pool of its own (its own C++ threads, which step it with Python's lock released),
driven by worker threads (as many as the groups, at most one per C++ thread of the budget).
`recv` returns the first group whose step (or reset) finished, its environments' indices in
`info["env_id"]`; `send` starts the step of a group received and not sent since.
Environment i draws from the stream of (seed, i) whatever the grouping, so with the same
actions every environment's trajectory equals the synchronous pool's.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import numpy as np

from components.envs.engine import catalogue
from components.envs.engine.spec import EnvSpec
from components.envs.engine.threads import resolve_threads
from components.envs.engine.vector_env import (
    VectorEnv,
    check_seed,
    refuse_own_engine,
    set_spaces,
)
from metagraph.checks import positive_int

_STOP = object()


def _work(groups: list[VectorEnv], orders: queue.Queue, finished: queue.Queue) -> None:
    """A worker: runs the resets and steps sent to any group, one at a time (a group has at
    most one in flight), and reports each result (or the exception it raised) as
    `(g, result)`."""
    while (order := orders.get()) is not _STOP:
        g, kind, value = order
        group = groups[g]
        n = group.num_envs
        try:
            if kind == "reset":
                obs, _ = group.reset(seed=value)
                result = (obs, np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool), {})
            else:
                result = group.step(value)
        except BaseException as error:  # handed to the caller of recv, its type kept
            result = error
        finished.put((g, result))


class AsyncVectorEnv:
    """`num_envs` environments of `env` stepped asynchronously in groups of `batch_size` (see
    the module docstring). `num_threads` C++ threads in all (None: every core this process may
    run on), shared out among the groups, at least one each.

    Args:
        env: an environment id or its `EnvSpec`.
        num_envs: how many environments; a multiple of `batch_size`.
        batch_size: the environments `recv` returns at once (one group).
        seed: environment i draws from (seed, i); None: fresh.
        num_threads: C++ threads in all; None: the default above.
        **kwargs: the environment's keyword arguments.
    """

    def __init__(self, env: str | EnvSpec, num_envs: int, batch_size: int,
                 seed: int | None = 0, num_threads: int | None = None, **kwargs: Any):
        spec = env if isinstance(env, EnvSpec) else catalogue.spec(env, **kwargs)
        if isinstance(env, EnvSpec) and kwargs:
            raise TypeError(f"{spec.env_id}: keyword arguments go with an id, not a spec")
        where = spec.env_id
        refuse_own_engine(spec, "AsyncVectorEnv")
        self.env_spec = spec
        self.num_envs = positive_int(num_envs, f"{where}: num_envs")
        self.batch_size = positive_int(batch_size, f"{where}: batch_size")
        if self.num_envs % self.batch_size:
            raise ValueError(f"{where}: num_envs ({self.num_envs}) must be a multiple of "
                             f"batch_size ({self.batch_size}): the environments step in groups "
                             f"of batch_size")
        seed = check_seed(seed, where)
        groups = self.num_envs // self.batch_size
        threads = max(1, resolve_threads(num_threads, self.num_envs, where) // groups)
        self._groups = [VectorEnv(spec, self.batch_size, seed, threads,
                                  first_stream=g * self.batch_size) for g in range(groups)]
        self._ids = [np.arange(g * self.batch_size, (g + 1) * self.batch_size, dtype=np.int32)
                     for g in range(groups)]
        self._finished: queue.Queue = queue.Queue()
        self._orders: queue.Queue = queue.Queue()  # (group, "reset" | "step", argument)
        self._busy = [False] * groups    # a reset or step sent and not received yet
        self._ready = [False] * groups   # received, so the next command may be sent
        self._lock = threading.Lock()    # the groups' flags, between callers
        self._receivers = 0              # recv calls waiting for a group
        self.closed = False
        # the workers hold the groups and queues, not this object: dropping it stops them. As
        # many as the groups, at most one per C++ thread of the budget: batch_size=1 over 4096
        # environments does not start 4096 threads
        count = min(groups, max(1, resolve_threads(num_threads, self.num_envs, where)))
        self._workers = [threading.Thread(target=_work, daemon=True,
                                          args=(self._groups, self._orders, self._finished),
                                          name=f"metagraph-{where}-worker-{k}")
                         for k in range(count)]
        for k, worker in enumerate(self._workers):
            try:
                worker.start()
            except RuntimeError as error:  # the process's thread limit
                self._stop(self._workers[:k])
                for group in self._groups:
                    group.close()
                raise RuntimeError(f"{where}: could not start the pool's worker thread {k + 1} "
                                   f"of {count} ({error}); pass fewer num_threads") from None
        set_spaces(self, spec, self.batch_size)

    @property
    def num_groups(self) -> int:
        """The number of groups (`num_envs // batch_size`)."""
        return len(self._groups)

    @property
    def num_threads(self) -> int:
        """The C++ threads stepping the environments, all groups together."""
        return sum(group.num_threads for group in self._groups)

    def async_reset(self, seed: int | None = None) -> None:
        """Reset every environment, asynchronously (EnvPool's `async_reset`): each group's
        first observations come from `recv`, with reward 0 and neither flag set. With `seed`,
        environment i restarts from the stream of (seed, i). Every group must be idle (nothing
        sent and not received)."""
        self._check_open()
        if seed is not None:
            seed = check_seed(seed, self.env_spec.env_id)
        with self._lock:
            busy = [g for g in range(self.num_groups) if self._busy[g]]
            if busy:
                raise RuntimeError(f"{self.env_spec.env_id}: async_reset while the groups "
                                   f"{busy} are stepping: recv them first")
            for g in range(self.num_groups):
                self._busy[g], self._ready[g] = True, False
                self._orders.put((g, "reset", seed))

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The first group whose reset or step finished: `(obs, reward, terminated,
        truncated, info)` of its `batch_size` environments, as `VectorEnv.step` returns them,
        with `info["env_id"]` their indices (int32). Waits (Python's lock released) until one
        finishes. A step the group refused (bad actions: nothing moved) or that failed raises
        here, with its own type; the group may then be sent again."""
        self._check_open()
        with self._lock:
            if not any(self._busy):
                raise RuntimeError(f"{self.env_spec.env_id}: recv with nothing sent: call "
                                   f"async_reset() first, then send() what recv() gave")
            if self._receivers >= sum(self._busy):
                raise RuntimeError(f"{self.env_spec.env_id}: recv while every group sent is "
                                   f"awaited by another thread's recv already; send first")
            self._receivers += 1
        try:
            g, result = self._next_finished()
        finally:
            with self._lock:
                self._receivers -= 1
        with self._lock:
            self._busy[g], self._ready[g] = False, True
        if isinstance(result, BaseException):
            raise result
        obs, reward, terminated, truncated, info = result
        info["env_id"] = self._ids[g]
        return obs, reward, terminated, truncated, info

    def _next_finished(self) -> tuple[int, Any]:
        """The next (group, result) the workers finished; a RuntimeError once the pool is
        closed while waiting (`close` wakes every waiting `recv`)."""
        while True:
            try:
                return self._finished.get(timeout=0.1)
            except queue.Empty:
                if self.closed:
                    raise RuntimeError(f"{self.env_spec.env_id}: the environment pool was "
                                       f"closed while recv waited") from None

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start the step of the group whose environments `env_ids` are (as `recv`'s
        `info["env_id"]` gave them; None: the group received last), with `actions` for them
        in that order. Returns at once; the actions are copied first, so the caller may reuse
        its array. ValueError for ids that are not one received group's, or a group already
        stepping."""
        self._check_open()
        try:  # copied before the group is marked: a failed copy leaves it as it was
            copied = np.array(actions)
        except Exception as error:  # its own type kept, with what happened to the group
            error.add_note(f"{self.env_spec.env_id}: send could not read the actions; the "
                           f"group is not stepped and may be sent again")
            raise
        with self._lock:
            g = self._group_of(env_ids)
            self._busy[g], self._ready[g] = True, False
            self._orders.put((g, "step", copied))

    def step(self, actions: Any, env_ids: Any = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """`send(actions, env_ids)` then `recv()` (EnvPool's `step` with `env_id`): the next
        group to finish, which need not be the one just sent."""
        self.send(actions, env_ids)
        return self.recv()

    def _group_of(self, env_ids: Any) -> int:
        where = self.env_spec.env_id
        if env_ids is None:
            ready = [g for g in range(self.num_groups) if self._ready[g]]
            if len(ready) != 1:
                raise ValueError(f"{where}: send without env_ids needs exactly one group "
                                 f"received and not sent, there are {len(ready)}: pass "
                                 f"info['env_id'] of the recv this answers")
            return ready[0]
        ids = np.asarray(env_ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or len(ids) != self.batch_size:
            raise ValueError(f"{where}: env_ids must be the {self.batch_size} integer indices "
                             f"of one group as recv gave them, got {ids.dtype}{list(ids.shape)}")
        g = int(ids[0]) // self.batch_size if 0 <= int(ids[0]) < self.num_envs else -1
        if g < 0 or not np.array_equal(ids, self._ids[g]):
            raise ValueError(f"{where}: env_ids {ids.tolist()[:8]}... are not one group's: "
                             f"this pool steps the groups [k * {self.batch_size}, (k + 1) * "
                             f"{self.batch_size}) that recv returns, whole and in order")
        if not self._ready[g]:
            state = "stepping already" if self._busy[g] else "not received since it was reset"
            raise ValueError(f"{where}: the group of environments {int(ids[0])}.."
                             f"{int(ids[-1])} is {state}: send answers a recv")
        return g

    def close(self) -> None:
        """Stop the workers (after the steps in flight) and release the pools."""
        if self.closed:
            return
        self.closed = True
        self._stop(self._workers)
        for group in self._groups:
            group.close()

    def _stop(self, workers: list[threading.Thread]) -> None:
        """Stop `workers` after the orders sent before, and wait for them."""
        for _ in workers:
            self._orders.put(_STOP)
        for worker in workers:
            worker.join()

    def __enter__(self) -> AsyncVectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # dropped without close(): stop the workers (they end after the step in flight)
        if not getattr(self, "closed", True):
            self.closed = True
            for _ in self._workers:
                self._orders.put(_STOP)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self.env_spec.env_id}: the environment pool is closed")

    def __repr__(self) -> str:
        return (f"AsyncVectorEnv({self.env_spec.env_id}, num_envs={self.num_envs}, "
                f"batch_size={self.batch_size}, {self.num_groups} groups)")
