"""Data-parallel lowering over a mesh of devices: each input of an API split along its batch
axis, the state (parameters, optimizer state) replicated on every device. XLA's SPMD
partitioner inserts the all-reduces, so a learner's update gives the same result as on one
device (up to the order of float sums).

    dp = DataParallel(batch_axes={"learn": {"obs": 1, "last_obs": 0}})  # default axis: 0
    exe = backends.xla.lower(graph, data_parallel=dp)

The mesh may span several processes on JAX's distributed runtime (`jax.distributed`, one
program per process, the same code on CPU hosts and on a GPU cluster):

    jax.distributed.initialize(coordinator, num_processes, process_id)  # before any JAX work
    dp = DataParallel.across_processes(batch_axes=...)                  # every process's devices
    exe = backends.xla.lower(graph, data_parallel=dp)                    # same seed everywhere
    exe.learn(*dp.global_inputs(graph, "learn", local_inputs))           # this process's part

Every process then holds the same replicated state after each call, and the gradients are
all-reduced by XLA's collectives (Gloo on CPU, NCCL on GPUs) across processes.
`backends.xla.process_local.ProcessLocalExecutor` wraps an executor so that its APIs take the
process-local inputs directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from backends.xla.transforms import Transform
from metagraph.errors import SpaceError
from metagraph.graph import MetaGraph, State

AXIS = "batch"


class DataParallel(Transform):
    """Run every API over a mesh of devices (local ones, or those of several processes):
    inputs split along their batch axes, state replicated (a transformation applied before
    lowering: `backends.xla.transforms`)."""
    def __init__(self, devices: Sequence[Any] | None = None,
                 batch_axes: Mapping[str, int | Mapping[str, int]] | None = None):
        """`devices`: the mesh (default: all local devices; `jax.devices()`, or
        `across_processes`, for every process's). `batch_axes[api]`: the batch axis of every
        input of `api`, or a mapping from input name to axis (inputs not named, and every
        input of APIs not named, split along axis 0). Scalars and PRNG keys are replicated."""
        devices = list(jax.local_devices() if devices is None else devices)
        if not devices:
            raise ValueError("DataParallel: no devices")
        # each process's devices side by side, so that a process holds one block of the batch
        devices.sort(key=lambda d: (d.process_index, d.id))
        self.mesh = Mesh(np.array(devices), (AXIS,))
        self.batch_axes = dict(batch_axes or {})
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        here = jax.process_index()
        self.processes = len({d.process_index for d in devices})
        self.local_size = sum(d.process_index == here for d in devices)

    @classmethod
    def across_processes(cls, batch_axes: Mapping[str, int | Mapping[str, int]] | None = None
                         ) -> DataParallel:
        """A mesh of every device of every process of JAX's distributed runtime
        (`jax.devices()`; call `jax.distributed.initialize` first). With one process it is the
        local mesh, so the same program runs on one process or many."""
        return cls(jax.devices(), batch_axes)

    @property
    def size(self) -> int:
        """The number of devices in the mesh (all processes')."""
        return self.mesh.size

    @property
    def multi_process(self) -> bool:
        """Whether the mesh spans devices of more than one process."""
        return self.processes > 1

    def place(self, state: State) -> State:
        """`state` replicated on every device of the mesh."""
        return jax.device_put(state, self.replicated)

    def jit_options(self, graph: MetaGraph, api: str, abstract_inputs: tuple
                    ) -> dict[str, Any]:
        """The state replicated in and out, each input split along its batch axis."""
        shardings = self.input_shardings(graph.root.name, api, list(graph.apis[api].inputs),
                                         abstract_inputs)
        return {"in_shardings": (self.replicated, *shardings),
                "out_shardings": self.replicated}

    def input_shardings(self, component: str, api: str, names: Sequence[str],
                        inputs: tuple) -> tuple:
        """The sharding of every leaf of `inputs` (the API's inputs, in order of `names`,
        with their global shapes)."""
        return self._per_leaf(component, api, names, inputs, self.size, "devices")

    def global_inputs(self, graph: MetaGraph, api: str, inputs: Sequence[Any]) -> tuple:
        """The global arrays of root API `api`'s inputs (in the order of its signature) from
        this process's part of them: every process passes its own block of each batch axis
        (the same size on every process) and the same value of each replicated input
        (scalars, keys). With a mesh of one process's devices, the inputs are the whole
        batch, placed on the mesh.

        Raises:
            SpaceError: a batch axis that does not split over this process's devices.
        """
        if not self.local_size:
            raise ValueError(f"DataParallel.global_inputs: process {jax.process_index()} has "
                             f"no device in the mesh")
        names = list(graph.apis[api].inputs)
        spaces = list(graph.apis[api].inputs.values())
        inputs = tuple(np.asarray(value, space.dtype)
                       if isinstance(value, bool | int | float) and hasattr(space, "dtype")
                       else value for value, space in zip(inputs, spaces, strict=True))
        shardings = self._per_leaf(graph.root.name, api, names, inputs, self.local_size,
                                   "devices of this process")
        return tuple(jax.tree.map(_global_array, sharding, value)
                     for sharding, value in zip(shardings, inputs, strict=True))

    def local_part(self, graph: MetaGraph, api: str, inputs: Sequence[Any]) -> tuple:
        """This process's block of `api`'s whole (global) inputs, as `global_inputs` takes it:
        for a program where every process sees the whole batch, and in tests."""
        names = list(graph.apis[api].inputs)
        shardings = self._per_leaf(graph.root.name, api, names, tuple(inputs), self.size,
                                   "devices")
        return tuple(jax.tree.map(_local_block, sharding, value)
                     for sharding, value in zip(shardings, inputs, strict=True))

    def _per_leaf(self, component: str, api: str, names: Sequence[str], inputs: tuple,
                  parts: int, what: str) -> tuple:
        axes = self.batch_axes.get(api, 0)
        return tuple(jax.tree.map(
            lambda leaf, name=name: self._sharding(component, api, name, leaf,
                                                   axes if isinstance(axes, int)
                                                   else axes.get(name, 0), parts, what), value)
            for name, value in zip(names, inputs, strict=True))

    def _sharding(self, component: str, api: str, name: str, leaf: Any, axis: int,
                  parts: int, what: str) -> Any:
        shape = tuple(np.shape(leaf))
        dtype = getattr(leaf, "dtype", None)
        if len(shape) <= axis or (dtype is not None and (
                jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
                or (len(shape) == 1 and shape == (2,) and dtype == np.uint32))):
            return self.replicated  # scalars and keys
        if shape[axis] % parts:
            raise SpaceError(f"{component}.{api}: data-parallel input {name!r} of shape {shape} "
                             f"splits along axis {axis} over {parts} {what}, so that "
                             f"axis must be a multiple of {parts}",
                             component=component, api=api)
        return NamedSharding(self.mesh, PartitionSpec(*([None] * axis), AXIS))

    def __repr__(self) -> str:
        where = f", {self.processes} processes" if self.multi_process else ""
        return f"DataParallel({self.size} devices{where}, batch_axes={self.batch_axes})"


def _global_array(sharding: NamedSharding, value: Any) -> jax.Array:
    """One global array from this process's block of it (an array already global as it is)."""
    if isinstance(value, jax.Array) and value.sharding == sharding:
        return value
    return jax.make_array_from_process_local_data(sharding, np.asarray(value))


def _local_block(sharding: NamedSharding, value: Any) -> Any:
    """The block of global `value` that `sharding` puts on this process's devices."""
    shape = np.shape(value)
    index = list(sharding.addressable_devices_indices_map(shape).values())
    block = tuple(slice(min(s[d].start or 0 for s in index),
                        max(shape[d] if s[d].stop is None else s[d].stop for s in index))
                  for d in range(len(shape)))
    return np.asarray(value)[block]
