"""Distributed runs: samplers and one learner, on Ray or in one process.

    metagraph train CartPole-v1 --algo impala --backend ray --num-samplers 2 --out runs/impala
    metagraph train CartPole-v1 --algo reweight --backend ray --num-samplers 2 --out runs/rw

- `Sampler`: one worker's graph, executable and environments (`sampler.py`).
- `RaySamplers`: samplers as Ray actors, weights through the object store, dead ones replaced;
  `LocalSamplers`: the same in the driver's process.
- `ImpalaLearner` (asynchronous, V-trace) and `ReweightLearner` (synchronous, reweights all
  samplers' paths together).
- `connect(address)`: a local Ray instance with no setup, or an existing cluster.
"""

from __future__ import annotations

from typing import Any

from backends.ray.cluster import connect
from backends.ray.impala_learner import ImpalaLearner
from backends.ray.local_samplers import LocalSamplers
from backends.ray.ray_samplers import RaySamplers
from backends.ray.reweight_learner import ReweightLearner
from backends.ray.sampler import Sampler

BACKENDS = ("local", "ray")


def open_learner(alg: Any, exe: Any, config: Any, env_id: str, seed: int, backend: str,
                 num_samplers: int, first_stream: int, version: int, key_for: Any) -> Any:
    """The learner of algorithm `alg` over `num_samplers` samplers on `backend` ("ray": Ray
    actors; "local": in this process), started from learner version `version`."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    if not isinstance(num_samplers, int) or num_samplers < 1:
        raise ValueError(f"num_samplers must be an int >= 1, got {num_samplers!r}")
    if alg.name == "reweight" and config.num_paths % num_samplers:
        raise ValueError(f"reweight: num_paths={config.num_paths} must divide evenly among "
                         f"{num_samplers} samplers")
    pool_class = RaySamplers if backend == "ray" else LocalSamplers
    pool = pool_class(alg.name, env_id, config.to_dict(), seed, num_samplers,
                      first_stream=first_stream)
    if alg.name == "impala":
        return ImpalaLearner(exe, pool, version)
    if alg.name == "reweight":
        return ReweightLearner(exe, pool, config, key_for)
    raise ValueError(f"{alg.name} has no distributed learner; distributed algorithms: "
                     f"impala, reweight")


__all__ = ["BACKENDS", "ImpalaLearner", "LocalSamplers", "RaySamplers", "ReweightLearner",
           "Sampler", "connect", "open_learner"]
