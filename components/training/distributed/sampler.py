"""`Sampler`: one sampling worker of a distributed run. It resolves the algorithm from its
name or `MODULE:ATTRIBUTE` (the registry: a Ray actor imports the user's module itself),
builds the algorithm's sampler graph once, lowers it (its own compiled executable and its own
environments), and on each `sample(weights, version)` call loads the published weights if they
are newer and runs the algorithm's `sample_api`. The same class runs in the driver's process
(`LocalSamplers`) or as a Ray actor (`RaySamplers`)."""

from __future__ import annotations

import os
import time
from typing import Any

import jax
import numpy as np

from components.training.algorithm import distributed_form
from components.training.distributed.learner import shared_scopes, shared_states
from components.training.registry import resolve
from components.training.run.executors import lower
from components.training.run.keys import START_INDEX


class Sampler:
    """One worker: algorithm `algo`'s sampler graph and executable for `env_id`, on its own
    random stream, run by the executor `executor` names (`components.training.run.executors`:
    the run's own), its programs on `device` (None: JAX's default device)."""
    def __init__(self, algo: str, env_id: str, config: dict[str, Any], seed: int, stream: int,
                 num_samplers: int, executor: str = "xla", device: Any = None):
        algorithm = resolve(algo)
        self.parts = distributed_form(algorithm)
        if self.parts is None:
            raise ValueError(f"Sampler: algorithm {algo!r} has no distributed form")
        cfg = algorithm.config_class.from_dict(config)
        graph = self.parts.build_sampler(env_id, cfg, num_samplers)
        self.exe = lower(graph, executor, seed=seed, device=device)
        # the shared components that sampling uses (the learner's may have more: a value)
        self.needed = sorted(shared_states(self.exe, shared_scopes(graph, self.parts.shared)))
        # every sampler ever started in a run has its own stream of keys
        self.key = jax.random.fold_in(jax.random.PRNGKey(seed), stream)
        self.stream, self.calls, self.version = stream, 0, None
        self.parts.start_sampler(self.exe, jax.random.fold_in(self.key, START_INDEX))

    def sample(self, weights: dict[str, Any] | None, version: int) -> dict[str, Any]:
        """A batch sampled with the policy of `version` (loading `weights` when they are newer
        than the ones held): {"batch", "version", "sample_seconds", "finished_at"}."""
        if weights is not None and version != self.version:
            missing = [scope for scope in self.needed if scope not in weights]
            if missing:
                raise ValueError(f"Sampler.sample: the weights lack {missing}; got "
                                 f"{sorted(weights)}")
            self.exe.set_states({scope: weights[scope] for scope in self.needed})
            self.version = version
        if self.version is None:
            raise RuntimeError("Sampler.sample: no policy weights received yet")
        start = time.perf_counter()
        out = self.exe.call(self.parts.sample_api,
                            np.asarray(jax.random.fold_in(self.key, self.calls)))
        batch = {name: np.asarray(value) for name, value in out.items()}
        self.calls += 1
        return {"batch": batch, "version": self.version, "stream": self.stream,
                "sample_seconds": time.perf_counter() - start, "finished_at": time.time()}

    def pid(self) -> int:
        """This sampler's process id."""
        return os.getpid()
