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


def open_learner(spec: Any, parts: Distributed, exe: Any, *args: Any, first_stream: int = 0,
                 version: int = 0, key_for: Callable[[int], jax.Array] | None = None,
                 actor_device: Any = None, **old: Any) -> Learner:
    """The learner of the distributed run `spec` (a `RunSpec`, checked when it was made: its
    algorithm's name or MODULE:ATTRIBUTE, which each sampler resolves again, `env_id`,
    `config`, `seed`, `runner`, `num_samplers`, `batches_per_request`, `executor`) over its
    samplers: Ray actors ("ray", each asked for `batches_per_request` batches per call), this
    process ("local", sampling and learning in turn) or its threads ("pipeline", sampling
    while the learner learns). The first sampler draws key stream `first_stream`; the learner
    starts from weight version `version`, each update's key `key_for(version)` (None: the
    run's seed's key of that version); the samplers' programs run on `actor_device` (None:
    JAX's default device; the pipeline's default is the host, "cpu").

    The spelling before, `open_learner(algo, parts, exe, config, env_id, seed, runner,
    num_samplers, first_stream, version, key_for, batches_per_request=1, executor="xla",
    actor_device=None)`, still works this release with a DeprecationWarning."""
    if isinstance(spec, str):
        spec, first_stream, version, key_for, actor_device = _old_call(
            spec, args, {**old, "actor_device": actor_device})
    elif args or old:
        raise TypeError(f"open_learner(spec, parts, exe, *, first_stream, version, key_for, "
                        f"actor_device) got more arguments: {len(args)} positional, "
                        f"{sorted(old)}")
    if key_for is None:
        from components.training.run.keys import keys_for

        key_for = lambda v: keys_for(spec.seed, None, v)  # noqa: E731
    settings = (spec.algo, spec.env_id, spec.config.to_dict(), spec.seed, spec.num_samplers)
    if spec.runner == "ray":
        if actor_device is not None:
            raise ValueError("--actor-device: Ray's samplers run in their own processes on "
                             "their own nodes, on JAX's default device there")
        pool = RaySamplers(*settings, first_stream=first_stream,
                           rollouts=spec.batches_per_request, executor=spec.executor)
    elif spec.runner == "pipeline":
        pool = ThreadedSamplers(*settings, first_stream=first_stream, executor=spec.executor,
                                device="cpu" if actor_device is None else actor_device)
    else:
        pool = LocalSamplers(*settings, first_stream=first_stream, executor=spec.executor,
                             device=actor_device)
    return Learner(parts, exe, spec.config, pool, version, key_for, name=spec.algo)


_OLD_ORDER = ("config", "env_id", "seed", "runner", "num_samplers", "first_stream", "version",
              "key_for", "batches_per_request", "executor", "actor_device")


def _old_call(algo: str, args: tuple, named: dict[str, Any]) -> tuple:
    """(spec, first_stream, version, key_for, actor_device) of a call in the spelling before
    (`open_learner`'s docstring), the spec checked as `RunSpec.make` checks a run."""
    import warnings

    from components.training.run.run_spec import RunSpec

    warnings.warn("open_learner(algo, parts, exe, config, env_id, seed, runner, num_samplers, "
                  "first_stream, version, key_for, ...) is now open_learner(spec, parts, exe, "
                  "first_stream=..., version=..., key_for=..., actor_device=...): pass the "
                  "run's RunSpec (RunSpec.make(env_id, algo, config, seed=..., runner=..., "
                  "num_samplers=..., batches_per_request=..., executor=...))",
                  DeprecationWarning, stacklevel=3)
    if len(args) > len(_OLD_ORDER):
        raise TypeError(f"open_learner: at most {len(_OLD_ORDER) + 3} arguments, got "
                        f"{len(args) + 3}")
    given = {**named, **dict(zip(_OLD_ORDER, args, strict=False))}
    missing = [n for n in _OLD_ORDER[:8] if n not in given]
    if missing:
        raise TypeError(f"open_learner: missing {missing}")
    spec = RunSpec.make(given["env_id"], algo, given["config"], seed=given["seed"],
                        runner=given["runner"], num_samplers=given["num_samplers"],
                        batches_per_request=given.get("batches_per_request", 1),
                        executor=given.get("executor", "xla"))
    return (spec, given["first_stream"], given["version"], given["key_for"],
            given.get("actor_device"))


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
