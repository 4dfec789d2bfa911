"""Distributed runs: samplers and one learner, on Ray or in one process, for any algorithm
with a `Distributed` part (`components.training.algorithm`).

    metagraph train CartPole-v1 --algo impala --runner ray --num-samplers 2 --out runs/impala
    metagraph train CartPole-v1 --algo reweight --runner ray --num-samplers 2 --out runs/rw

- `Sampler`: one worker's graph, executable and environments (`sampler.py`).
- `RaySamplers`: samplers as Ray actors, weights through the object store, dead ones replaced;
  `LocalSamplers`: the same in the driver's process, sampling and learning in turn;
  `ThreadedSamplers` (`--runner pipeline`): in threads of the driver's process, sampling on
  the actor's device while the learner learns on its own.
- `Learner`: publishes the shared weights, gathers batches, calls the algorithm's `update`.
- `connect(address)`: a local Ray instance with no setup, or an existing cluster.
- `LearnerGroup`: one learner over several processes on JAX's distributed runtime, gradients
  all-reduced by XLA (`learner_group.py`).
- `inputs_for(graph, api, batch)`: an API's inputs out of a batch, by its signature's names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import jax

from components.training.algorithm import Distributed
from components.training.distributed.cluster import connect
from components.training.distributed.learner import Learner, shared_scope
from components.training.distributed.learner_group import LearnerGroup
from components.training.distributed.local_samplers import LocalSamplers
from components.training.distributed.ray_samplers import RaySamplers
from components.training.distributed.sampler import Sampler
from components.training.distributed.threaded_samplers import ThreadedSamplers
from components.training.inputs import inputs_for
from components.training.run.run_spec import RUNNERS, check_batches_per_request
from metagraph.checks import positive_int


def open_learner(algo: str, parts: Distributed, exe: Any, config: Any, env_id: str, seed: int,
                 runner: str, num_samplers: int, first_stream: int, version: int,
                 key_for: Callable[[int], jax.Array], batches_per_request: int = 1,
                 executor: str = "xla", actor_device: Any = None) -> Learner:
    """The learner of algorithm `algo` (its name or MODULE:ATTRIBUTE, which each sampler
    resolves again) over `num_samplers` samplers on `runner` ("ray": Ray actors, each asked
    for `batches_per_request` batches per call; "local": in this process, sampling and
    learning in turn; "pipeline": in threads of this process, sampling while the learner
    learns), started from weight version `version`; every sampler runs on the executor
    `executor` names, as the learner does, its programs on `actor_device` (None: JAX's
    default device; the pipeline's default is the host, "cpu")."""
    if runner not in RUNNERS:
        raise ValueError(f"unknown runner {runner!r}; expected one of {RUNNERS}")
    positive_int(num_samplers, "num_samplers")
    check_batches_per_request(batches_per_request, runner)
    parts.check(config, num_samplers)
    if runner == "ray":
        if actor_device is not None:
            raise ValueError("--actor-device: Ray's samplers run in their own processes on "
                             "their own nodes, on JAX's default device there")
        pool = RaySamplers(algo, env_id, config.to_dict(), seed, num_samplers,
                           first_stream=first_stream, rollouts=batches_per_request,
                           executor=executor)
    elif runner == "pipeline":
        pool = ThreadedSamplers(algo, env_id, config.to_dict(), seed, num_samplers,
                                first_stream=first_stream, executor=executor,
                                device="cpu" if actor_device is None else actor_device)
    else:
        pool = LocalSamplers(algo, env_id, config.to_dict(), seed, num_samplers,
                             first_stream=first_stream, executor=executor,
                             device=actor_device)
    return Learner(parts, exe, config, pool, version, key_for, name=algo)


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_num_samplers(num_samplers: int, runner: str, address: str | None) -> None:
    """ValueError unless `num_samplers` is a positive int and, for samplers on this machine
    (in process, or on a Ray instance started here: no `address`), at most its cores (at least
    2): more samplers than cores only wait for each other, and each holds its own executable,
    environments and threads."""
    positive_int(num_samplers, "num_samplers")
    if runner == "ray" and address is not None:
        return  # a cluster's size is the cluster's
    limit = max(2, usable_cores())
    if num_samplers > limit:
        raise ValueError(f"num_samplers={num_samplers}: this machine has {usable_cores()} "
                         f"cores; run at most {limit} samplers here (join a Ray cluster with "
                         f"--address for more)")


__all__ = ["RUNNERS", "Learner", "LearnerGroup", "LocalSamplers", "RaySamplers", "Sampler",
           "ThreadedSamplers",
           "check_batches_per_request", "check_num_samplers", "connect", "inputs_for",
           "open_learner", "shared_scope"]
