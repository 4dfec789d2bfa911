"""`LocalSamplers`: the samplers of a distributed run inside the driver's process, run one
request at a time: the same agent and loop as on Ray, without Ray (the baseline of
`bench/distributed.py`, and a run on a machine without Ray).

`lag=k` simulates the policy lag of samplers far from the learner: requests sample with the
weights published `k` versions before the latest, so an algorithm's tolerance of stale
batches can be tested in one process, reproducibly."""

from __future__ import annotations

from collections import deque
from typing import Any

import jax
import numpy as np

from components.training.distributed.sampler import Sampler


class LocalSamplers:
    """Samplers in the driver's process, with the same interface as `RaySamplers` (for tests and
    small runs); with `lag=k`, each request samples with the weights published `k` versions
    before the latest (the oldest kept until `k` were published)."""
    depth = 1  # a request runs when its result is asked for: no point queueing more
    rollouts = 1  # batches per request
    replaced = 0

    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int,
                 count: int, first_stream: int = 0, lag: int = 0, executor: str = "xla",
                 device: Any = None):
        if lag < 0:
            raise ValueError(f"LocalSamplers: lag must be >= 0 versions, got {lag}")
        self.count, self.lag = count, lag
        self.samplers = [Sampler(algo, env_id, config, seed, first_stream + i, count, executor,
                                 device=device) for i in range(count)]
        self.streams = first_stream + count
        self.requests: deque[tuple[int, Any, int]] = deque()
        self.published: deque[tuple[Any, int]] = deque(maxlen=lag + 1)

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Make `weights` (of `version`) the ones the next requests sample with (with a lag:
        the ones published `lag` versions before them)."""
        # a copy: the learner's next update may reuse the buffers of its state
        self.published.append((jax.tree.map(np.array, weights) if self.lag else weights,
                               version))

    @property
    def weights(self) -> Any:
        """The weights the next request samples with."""
        return self.published[0][0] if self.published else None

    @property
    def version(self) -> int:
        """The version of `weights` (-1 before the first `publish`)."""
        return self.published[0][1] if self.published else -1

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
