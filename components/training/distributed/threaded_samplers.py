"""`ThreadedSamplers`: the pipelined runner (`--runner pipeline`). Each sampler runs in a
thread of the driver's process, its fused rollout program placed on the actor's device (the
host by default, where the native tasks step), while the learner updates on its own device
(JAX's default: the accelerator where there is one). Sampling and learning overlap; batches
and weights move between the devices as arrays.

A sampler loads the newest published weights before each batch, at most two requests are in
flight in all (two for one sampler, one each for two), and the learner takes the batches in
the order it asked for them, so a batch is at most one weight version old when the learner
takes it (the policy lag the rows report): what PPO's ratio and IMPALA's V-trace correct.
With K > 2 samplers each has one request in flight and the lag is at most K - 1."""

from __future__ import annotations

import collections
import queue
import signal
import threading
from typing import Any

from components.training.distributed.sampler import Sampler

_STOP = object()


class ThreadedSamplers:
    """Samplers in threads of this process, with the interface of `LocalSamplers` and
    `RaySamplers`; each sampler's programs on `device` (a name such as "cpu" or a
    `jax.Device`; None: JAX's default device)."""

    rollouts = 1  # batches per request
    replaced = 0

    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int, count: int,
                 first_stream: int = 0, executor: str = "xla", device: Any = None):
        self.count = count
        # requests in flight per sampler: two in all where that is possible (one sampling
        # while the learner takes the other), so that the policy lag stays at most one
        self.depth = max(1, 2 // count)
        self.samplers = [Sampler(algo, env_id, config, seed, first_stream + i, count, executor,
                                 device=device) for i in range(count)]
        self.streams = first_stream + count
        self._lock = threading.Lock()
        self._published: tuple[Any, int] = (None, -1)
        self._requests = [queue.Queue() for _ in range(count)]
        self._results = [queue.Queue() for _ in range(count)]
        self._asked: collections.deque[int] = collections.deque()  # samplers, in request order
        self._threads = [threading.Thread(target=self._work, args=(i,), daemon=True,
                                          name=f"metagraph-sampler-{i}") for i in range(count)]
        for thread in self._threads:
            thread.start()

    def _work(self, index: int) -> None:
        # Ctrl-C is the main thread's (interrupts.py): never delivered to a sampler's thread,
        # nor to the threads XLA and the engine start from it, inside their waits
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        sampler, requests = self.samplers[index], self._requests[index]
        while requests.get() is not _STOP:
            with self._lock:  # the newest weights, as this batch starts
                weights, version = self._published
            try:
                result: Any = sampler.sample(weights, version)
            except BaseException as error:  # raised by `next`, its type kept
                result = error
            self._results[index].put(result)

    def publish(self, weights: dict[str, Any], version: int) -> None:
        """Make `weights` (of `version`: NumPy copies, as `Executor.get_states` makes them,
        which the learner's next update cannot change) the ones the next batches sample
        with."""
        with self._lock:
            self._published = (weights, version)

    @property
    def version(self) -> int:
        """The version of the weights published last (-1 before the first `publish`)."""
        return self._published[1]

    def request(self, index: int) -> None:
        """Queue a batch from sampler `index` (sampled with the newest weights when it starts)."""
        self._asked.append(index)
        self._requests[index].put(True)

    def next(self) -> tuple[int, dict[str, Any]]:
        """The batch asked for first among those not yet taken, `(index, result)`, waiting for
        it; a sampler's error is raised here. Taken in the order they were asked for, not as
        they finish: a sampler that finished twice while another was still sampling would
        otherwise leave that one's batch to be learned from two or more versions late."""
        index = self._asked.popleft()
        result = self._results[index].get()
        if isinstance(result, BaseException):
            raise result
        return index, result

    def close(self) -> None:
        """Stop the threads once the batches they are sampling are done (requests not started
        are dropped), and drop the samplers."""
        for requests in self._requests:
            while True:
                try:
                    requests.get_nowait()
                except queue.Empty:
                    break
            requests.put(_STOP)
        for thread in self._threads:
            thread.join()
        self.samplers.clear()
