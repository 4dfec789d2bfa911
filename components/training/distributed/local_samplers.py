"""`LocalSamplers`: the samplers of a distributed run inside the driver's process, run one
request at a time: the same agent and loop as on Ray, without Ray (the baseline of
`bench/distributed.py`, and a run on a machine without Ray)."""

from __future__ import annotations

from collections import deque
from typing import Any

from components.training.distributed.sampler import Sampler


class LocalSamplers:
    """Samplers in the driver's process, with the same interface as `RaySamplers` (for tests and
    small runs)."""
    depth = 1  # a request runs when its result is asked for: no point queueing more
    replaced = 0

    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int,
                 count: int, first_stream: int = 0):
        self.count = count
        self.samplers = [Sampler(algo, env_id, config, seed, first_stream + i, count)
                         for i in range(count)]
        self.streams = first_stream + count
        self.requests: deque[int] = deque()
        self.weights: Any = None
        self.version = -1

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Make `weights` (of `version`) the ones the next requests sample with."""
        self.weights, self.version = weights, version

    def request(self, index: int) -> None:
        """Queue a batch from sampler `index` with the published weights."""
        self.requests.append((index, self.weights, self.version))

    def next(self) -> tuple[int, dict[str, Any]]:
        """Run the oldest request: `(index, batch)`."""
        index, weights, version = self.requests.popleft()
        return index, self.samplers[index].sample(weights, version)

    def close(self) -> None:
        """Drop the samplers."""
        self.samplers.clear()
