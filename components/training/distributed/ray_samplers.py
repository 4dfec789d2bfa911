"""`RaySamplers`: the samplers of a distributed run as Ray actors, with a cheap transport.

Each actor holds its own `Sampler` (graph, compiled executable, native environments).

- **Several rollouts per request.** A request asks an actor for `rollouts` batches, so Ray's
  fixed cost per call (about a millisecond here) is paid once for all of them.
- **Pipelining.** A thread in the actor samples batch after batch into a queue of
  `rollouts` batches, loading the newest weights a request brought before each batch, so it
  samples on while a result travels and the next request arrives. `depth` requests are
  kept queued on every actor, so one is always waiting for the next batches. Both make
  batches a few versions old: the policy lag the learner measures and reports.
- **Results without copies.** The batches of one request come back as one contiguous byte
  buffer (NumPy, through Ray's object store) and a small header; the learner reads each
  array as a view into that buffer.
- **Weights only when they changed.** Each request carries the version number of the
  published weights, and the weights themselves only to an actor that does not hold that
  version yet (the driver keeps track of what it sent each actor). Small weights (up to
  `inline_bytes`, 100 KB: Ray's own limit for inlining a call's arguments) travel inside
  the call, which costs less than the object store; larger ones go into the object store
  once per version (`ray.put` on the first request that needs them, shared by every actor)
  and Ray resolves the reference before the call runs.

An actor that dies is replaced by a new one (with a new stream of random keys) and the run
goes on; `replaced` counts them. No batch from any sampler within `timeout` seconds is an
error.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from typing import Any

import jax
import numpy as np

from components.training.distributed.cluster import ray_module
from components.training.distributed.sampler import Sampler

Header = tuple[list[tuple[str, str, tuple[int, ...], int]], list[dict[str, Any]]]


def pack(results: list[dict[str, Any]]) -> tuple[Header, np.ndarray]:
    """The batches of `results` (`Sampler.sample`'s) as one contiguous byte buffer and a
    header: for each array name its dtype, shape and offset (the batches of one name lie
    one after the other), and every result's other fields."""
    first = results[0]["batch"]
    layout, offset = [], 0
    for name in sorted(first):
        array = first[name]
        layout.append((name, array.dtype.str, array.shape, offset))
        offset += array.nbytes * len(results)
    buffer = np.empty(offset, np.uint8)
    for name, dtype, shape, start in layout:
        stacked = buffer[start:start + first[name].nbytes * len(results)].view(dtype)
        stacked = stacked.reshape(len(results), *shape)
        for i, result in enumerate(results):
            stacked[i] = result["batch"][name]
    meta = [{key: value for key, value in result.items() if key != "batch"}
            for result in results]
    return (layout, meta), buffer


def unpack(header: Header, buffer: np.ndarray) -> list[dict[str, Any]]:
    """`pack`'s results again, each array a read-only view into `buffer` (no copy)."""
    layout, meta = header
    count = len(meta)
    stacked = {name: np.frombuffer(buffer, np.dtype(dtype), count * int(np.prod(shape)),
                                   start).reshape(count, *shape)
               for name, dtype, shape, start in layout}
    return [{**info, "batch": {name: array[i, ...] for name, array in stacked.items()}}
            for i, info in enumerate(meta)]


class RemoteSampler(Sampler):
    """A `Sampler` as Ray runs it: a thread of its own samples batches one after the other
    into a queue of `ahead`, loading the newest weights a call brought before each batch;
    a call takes `rollouts` batches from that queue, packed into one buffer. So the sampler
    samples on while Ray returns a result and delivers the next call, and a batch is at most
    `ahead` batches older than the call that takes it. For a synchronous (on-policy)
    algorithm it samples in the call instead, with the weights the call brought."""

    def __init__(self, *args: Any, ahead: int = 1):
        super().__init__(*args)
        self.ready: queue.Queue[Any] = queue.Queue(maxsize=ahead)
        self.incoming: tuple[dict[str, Any], int] | None = None  # weights to load next
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def _produce(self) -> None:
        while True:
            with self.lock:
                weights, version = self.incoming or (None, self.version)
                self.incoming = None
            try:
                result: Any = self.sample(weights, version)
            except Exception as error:  # noqa: BLE001 - handed to the caller of sample_packed
                result = error
            self.ready.put(result)  # waits while `ahead` batches wait
            if isinstance(result, Exception):
                return

    def sample_packed(self, weights: dict[str, Any] | None, version: int, rollouts: int
                      ) -> tuple[Header, np.ndarray]:
        """`rollouts` batches, sampled with the policy of `version` from the next one on;
        `weights` are its weights, or None when this sampler has them already. A synchronous
        algorithm's batches are all sampled in the call, with exactly those weights."""
        if self.parts.synchronous:  # on-policy: nothing sampled ahead with older weights
            return pack([self.sample(weights if i == 0 else None, version)
                         for i in range(rollouts)])
        if weights is not None:
            with self.lock:
                self.incoming = (weights, version)
        if self.thread is None:
            self.thread = threading.Thread(target=self._produce, daemon=True)
            self.thread.start()
        results = []
        for _ in range(rollouts):
            result = self.ready.get()
            if isinstance(result, Exception):
                raise result
            results.append(result)
        return pack(results)


class RaySamplers:
    """Samplers as Ray actors: weights through the object store once per version, `depth`
    requests of `rollouts` batches in flight on each, a dead actor replaced (up to
    `max_replacements`).

    `request(index)` asks for one more batch of sampler `index`; every `rollouts` of them
    make one call to the actor. `next()` hands out the batches one at a time, in the order
    their requests finished. Weights of up to `inline_bytes` travel inside the calls that
    need them, larger ones through the object store."""
    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int, count: int,
                 first_stream: int = 0, depth: int = 2, rollouts: int = 1,
                 max_replacements: int | None = None, timeout: float = 600.0,
                 inline_bytes: int = 100 * 1024, executor: str = "xla"):
        self.ray = ray_module()
        self.args = (algo, env_id, config, seed)
        self.executor = executor
        self.count, self.depth, self.rollouts, self.timeout = count, depth, rollouts, timeout
        self.inline_bytes = inline_bytes
        self.max_replacements = 2 * count + 2 if max_replacements is None else max_replacements
        cpus = self.ray.cluster_resources().get("CPU", 1.0)
        self.remote = self.ray.remote(num_cpus=min(1.0, cpus / count))(RemoteSampler)
        self.streams, self.replaced = first_stream, 0
        self.actors = [self._start() for _ in range(count)]
        self.pending: dict[Any, int] = {}  # a call in flight -> its sampler
        self.owed = [0] * count  # batches asked of each sampler and not yet in a call
        self.sent: list[int | None] = [None] * count  # the weights' version each actor has
        self.arrived: deque[tuple[int, dict[str, Any]]] = deque()
        self.weights: Any = None
        self.nbytes = 0
        self.reference: Any = None  # large weights in the object store, put on first use
        self.version = -1

    def _start(self) -> Any:
        actor = self.remote.remote(*self.args, self.streams, self.count, self.executor,
                                   ahead=self.rollouts)
        self.streams += 1
        return actor

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Make `weights` (of `version`) the ones the next requests sample with; they travel
        with the first request to each actor (through the object store, once, if larger than
        `inline_bytes`)."""
        self.weights = jax.tree.map(np.asarray, weights)
        self.nbytes = sum(leaf.nbytes for leaf in jax.tree.leaves(self.weights))
        self.version, self.reference = version, None

    def request(self, index: int) -> None:
        """Ask sampler `index` for one more batch with the published weights."""
        self.owed[index] += 1
        if self.owed[index] >= self.rollouts:
            self.owed[index] -= self.rollouts
            self._call(index)

    def _call(self, index: int) -> None:
        if self.sent[index] == self.version:
            weights = None  # the actor's calls run in order: it will hold them by then
        elif self.nbytes <= self.inline_bytes:
            weights = self.weights
        else:
            if self.reference is None:
                self.reference = self.ray.put(self.weights)
            weights = self.reference  # resolved by Ray before the call runs
        ref = self.actors[index].sample_packed.remote(weights, self.version, self.rollouts)
        self.sent[index] = self.version
        self.pending[ref] = index

    def next(self) -> tuple[int, dict[str, Any]]:
        """The next batch: `(index, result)`, the oldest of those arrived, or of the next
        request to finish (replacing samplers that died meanwhile)."""
        while not self.arrived:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=self.timeout)
            if not ready:
                raise TimeoutError(f"RaySamplers: no batch from any of {self.count} samplers "
                                   f"in {self.timeout} s (is the cluster short of CPUs?)")
            index = self.pending.pop(ready[0])
            try:
                header, buffer = self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as error:
                self._replace(index, error)
                continue
            self.arrived.extend((index, result) for result in unpack(header, buffer))
        return self.arrived.popleft()

    def _replace(self, index: int, error: Exception) -> None:
        if self.replaced >= self.max_replacements:
            raise RuntimeError(f"RaySamplers: sampler {index} died and {self.replaced} "
                               f"samplers were replaced already; giving up: {error}") from error
        lost = [ref for ref, i in self.pending.items() if i == index]
        for ref in lost:
            del self.pending[ref]
        self.ray.kill(self.actors[index], no_restart=True)
        self.actors[index] = self._start()
        self.sent[index] = None
        self.replaced += 1
        for _ in range(len(lost) + 1):  # the calls lost, and the one that failed
            self._call(index)

    def pids(self) -> list[int]:
        """The process ids of the actors."""
        return self.ray.get([actor.pid.remote() for actor in self.actors])

    def close(self) -> None:
        """Kill the actors and forget pending requests."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors, self.pending, self.arrived = [], {}, deque()
