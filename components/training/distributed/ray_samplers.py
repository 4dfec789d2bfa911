"""`RaySamplers`: the samplers of a distributed run as Ray actors, with a cheap transport.

Each actor holds its own `Sampler` (graph, compiled executable, native environments).

- **Several rollouts per request.** A request asks an actor for `rollouts` batches, sampled
  one after the other with the same weights, so Ray's fixed cost per call (a few hundred
  microseconds to a few milliseconds) is paid once for all of them.
- **Requests kept in flight.** `depth` requests are queued on every actor: when one is done
  the actor starts the next at once, while the previous result travels to the learner and
  without waiting for it, which is what makes batches a few versions old (the policy lag the
  learner measures).
- **Results without copies.** The batches of one request come back as one contiguous byte
  buffer (NumPy, through Ray's object store) and a small header; the learner reads each
  array as a view into that buffer.
- **Weights only when they changed.** The learner's weights go into the object store once
  per version (`ray.put` on the first request that needs them, shared by every actor); a
  request carries the reference unresolved, with the version number, and an actor fetches
  the weights only when that version is newer than the one it holds.

An actor that dies is replaced by a new one (with a new stream of random keys) and the run
goes on; `replaced` counts them. No batch from any sampler within `timeout` seconds is an
error.
"""

from __future__ import annotations

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
    """A `Sampler` as Ray runs it: `rollouts` batches per call, packed into one buffer, the
    weights fetched from the object store only when their version is newer."""

    def sample_packed(self, weights: list[Any], version: int, rollouts: int
                      ) -> tuple[Header, np.ndarray]:
        """`rollouts` batches with the policy of `version`; `weights` holds the reference to
        its weights, resolved only when this sampler holds another version."""
        loaded = ray_module().get(weights[0]) if version != self.version else None
        return pack([self.sample(loaded if i == 0 else None, version)
                     for i in range(rollouts)])


class RaySamplers:
    """Samplers as Ray actors: weights through the object store once per version, `depth`
    requests of `rollouts` batches in flight on each, a dead actor replaced (up to
    `max_replacements`).

    `request(index)` asks for one more batch of sampler `index`; every `rollouts` of them
    make one call to the actor. `next()` hands out the batches one at a time, in the order
    their requests finished."""
    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int, count: int,
                 first_stream: int = 0, depth: int = 2, rollouts: int = 1,
                 max_replacements: int | None = None, timeout: float = 600.0):
        self.ray = ray_module()
        self.args = (algo, env_id, config, seed)
        self.count, self.depth, self.rollouts, self.timeout = count, depth, rollouts, timeout
        self.max_replacements = 2 * count + 2 if max_replacements is None else max_replacements
        cpus = self.ray.cluster_resources().get("CPU", 1.0)
        self.remote = self.ray.remote(num_cpus=min(1.0, cpus / count))(RemoteSampler)
        self.streams, self.replaced = first_stream, 0
        self.actors = [self._start() for _ in range(count)]
        self.pending: dict[Any, int] = {}  # a call in flight -> its sampler
        self.owed = [0] * count  # batches asked of each sampler and not yet in a call
        self.arrived: deque[tuple[int, dict[str, Any]]] = deque()
        self.weights: Any = None
        self.reference: Any = None  # the weights in the object store, put on first use
        self.version = -1

    def _start(self) -> Any:
        actor = self.remote.remote(*self.args, self.streams, self.count)
        self.streams += 1
        return actor

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Make `weights` (of `version`) the ones the next requests sample with; they go into
        the object store once, when a request first needs them."""
        self.weights = jax.tree.map(np.asarray, weights)
        self.version, self.reference = version, None

    def request(self, index: int) -> None:
        """Ask sampler `index` for one more batch with the published weights."""
        self.owed[index] += 1
        if self.owed[index] >= self.rollouts:
            self.owed[index] -= self.rollouts
            self._call(index)

    def _call(self, index: int) -> None:
        if self.reference is None:
            self.reference = self.ray.put(self.weights)
        # the reference inside a list: Ray leaves it unresolved, the actor fetches it if needed
        ref = self.actors[index].sample_packed.remote([self.reference], self.version,
                                                      self.rollouts)
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
