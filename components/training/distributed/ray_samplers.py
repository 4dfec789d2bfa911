"""`RaySamplers`: the samplers of a distributed run as Ray actors.

Each actor holds its own `Sampler` (graph, compiled executable, native environments). Policy
weights go through Ray's object store once per version (`publish`), and each request carries
the reference to the latest, so a sampler loads new weights between two batches. `depth`
requests are kept queued on every actor: when one batch is done the actor starts the next
at once, without waiting for the learner, which is what makes batches a few versions old
(the policy lag the learner measures).

An actor that dies is replaced by a new one (with a new stream of random keys) and the run
goes on; `replaced` counts them. No batch from any sampler within `timeout` seconds is an
error.
"""

from __future__ import annotations

from typing import Any

from components.training.distributed.cluster import ray_module
from components.training.distributed.sampler import Sampler


class RaySamplers:
    """Samplers as Ray actors: weights through the object store, `depth` requests in flight
    each, a dead actor replaced (up to `max_replacements`)."""
    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int, count: int,
                 first_stream: int = 0, depth: int = 2, max_replacements: int | None = None,
                 timeout: float = 600.0):
        self.ray = ray_module()
        self.args = (algo, env_id, config, seed)
        self.count, self.depth, self.timeout = count, depth, timeout
        self.max_replacements = 2 * count + 2 if max_replacements is None else max_replacements
        cpus = self.ray.cluster_resources().get("CPU", 1.0)
        self.remote = self.ray.remote(num_cpus=min(1.0, cpus / count))(Sampler)
        self.streams, self.replaced = first_stream, 0
        self.actors = [self._start() for _ in range(count)]
        self.pending: dict[Any, int] = {}
        self.weights: Any = None
        self.version = -1

    def _start(self) -> Any:
        actor = self.remote.remote(*self.args, self.streams, self.count)
        self.streams += 1
        return actor

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Put `weights` (of `version`) in the object store for the next requests."""
        self.weights, self.version = self.ray.put(weights), version

    def request(self, index: int) -> None:
        """Ask sampler `index` for a batch with the published weights."""
        self.pending[self.actors[index].sample.remote(self.weights, self.version)] = index

    def next(self) -> tuple[int, dict[str, Any]]:
        """The next finished batch of any sampler, replacing samplers that died meanwhile."""
        while True:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=self.timeout)
            if not ready:
                raise TimeoutError(f"RaySamplers: no batch from any of {self.count} samplers "
                                   f"in {self.timeout} s (is the cluster short of CPUs?)")
            index = self.pending.pop(ready[0])
            try:
                return index, self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as error:
                self._replace(index, error)

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
        for _ in range(len(lost) + 1):
            self.request(index)

    def pids(self) -> list[int]:
        """The process ids of the actors."""
        return self.ray.get([actor.pid.remote() for actor in self.actors])

    def close(self) -> None:
        """Kill the actors and forget pending requests."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors, self.pending = [], {}
