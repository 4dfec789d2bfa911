"""`LearnerGroup`: one learner split over several processes on JAX's own distributed runtime
(`jax.distributed`), its gradients all-reduced by XLA across them (Gloo on CPU hosts, NCCL on
GPUs: the same program either way).

Every process runs the same program, with its own `process_id`:

    group = LearnerGroup.join("10.0.0.1:1234", num_processes=2, process_id=i)  # first JAX call
    exe = group.lower(graph, batch_axes=ImpalaAgent.batch_axes(), seed=0)      # same seed
    for batch in my_batches:                      # this process's part of every batch
        rows = parts.update(exe, config, [batch], key)   # the algorithm's own update
    if group.is_chief:
        exe.save_checkpoint("run/checkpoint.npz")
    group.close()

`exe` is a `backends.xla.process_local.ProcessLocalExecutor`: its APIs take this process's
block of each batch axis; after each call every process holds the same parameters, equal to
one process's on the whole batches (to float tolerance). On a cluster that JAX detects
(SLURM, Open MPI, Cloud TPU), `LearnerGroup.join()` needs no arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax

from backends import xla
from backends.xla.process_local import ProcessLocalExecutor
from metagraph.graph import MetaGraph


class LearnerGroup:
    """This process's place in a group of learner processes (`jax.distributed`)."""

    def __init__(self, process_id: int, num_processes: int):
        """Use `LearnerGroup.join` (which starts the runtime); this only records the place."""
        self.process_id, self.num_processes = process_id, num_processes

    @classmethod
    def join(cls, coordinator: str | None = None, num_processes: int | None = None,
             process_id: int | None = None, local_device_ids: Sequence[int] | None = None,
             cpu_collectives: str = "gloo", timeout: int = 300) -> LearnerGroup:
        """Start JAX's distributed runtime in this process and join the group: process 0
        serves as coordinator at `coordinator` ("HOST:PORT", reachable by every process), and
        every process blocks until all `num_processes` have joined (or `timeout` seconds).
        Call it before any other JAX computation. `cpu_collectives`: the implementation of
        collectives across processes for CPU devices ("gloo"; "mpi" where jaxlib was built
        with it); GPUs use NCCL whatever it says.

        Raises:
            RuntimeError: JAX's distributed runtime was already started, or the group did not
                form within `timeout` seconds.
        """
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
        jax.distributed.initialize(coordinator, num_processes, process_id,
                                   local_device_ids=local_device_ids,
                                   initialization_timeout=timeout)
        return cls(jax.process_index(), jax.process_count())

    @property
    def is_chief(self) -> bool:
        """Whether this is process 0: the one that writes checkpoints and metrics."""
        return self.process_id == 0

    def data_parallel(self, batch_axes: Mapping[str, Any] | None = None) -> xla.DataParallel:
        """A `DataParallel` over every device of every process of the group."""
        return xla.DataParallel.across_processes(batch_axes)

    def lower(self, graph: MetaGraph, batch_axes: Mapping[str, Any] | None = None,
              **options: Any) -> ProcessLocalExecutor:
        """`graph` lowered over the group's mesh (`backends.xla.lower(graph, **options)` with
        `data_parallel=self.data_parallel(batch_axes)`), its APIs taking this process's part
        of each batch. Every process must lower the same graph with the same seed (or load
        the same checkpoint): the replicated state starts equal everywhere."""
        exe = xla.lower(graph, data_parallel=self.data_parallel(batch_axes), **options)
        return ProcessLocalExecutor(exe)

    def close(self) -> None:
        """Leave the group (`jax.distributed.shutdown`); every process should."""
        jax.distributed.shutdown()

    def __repr__(self) -> str:
        return f"LearnerGroup(process {self.process_id} of {self.num_processes})"
