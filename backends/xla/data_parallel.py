"""Data-parallel lowering over a mesh of local devices: each input of an API split along its
batch axis, the state (parameters, optimizer state) replicated on every device. XLA's SPMD
partitioner inserts the all-reduces, so a learner's update gives the same result as on one
device (up to the order of float sums).

    dp = DataParallel(batch_axes={"learn": {"obs": 1, "last_obs": 0}})  # default axis: 0
    exe = backends.xla.lower(graph, data_parallel=dp)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from metagraph.errors import SpaceError

AXIS = "batch"


class DataParallel:
    """Run every API over a mesh of local devices: inputs split along their batch axes, state
    replicated."""
    def __init__(self, devices: Sequence[Any] | None = None,
                 batch_axes: Mapping[str, int | Mapping[str, int]] | None = None):
        """`devices`: the mesh (default: all local devices). `batch_axes[api]`: the batch axis
        of every input of `api`, or a mapping from input name to axis (inputs not named, and
        every input of APIs not named, split along axis 0). Scalars and PRNG keys are
        replicated."""
        devices = list(jax.local_devices() if devices is None else devices)
        if not devices:
            raise ValueError("DataParallel: no devices")
        self.mesh = Mesh(np.array(devices), (AXIS,))
        self.batch_axes = dict(batch_axes or {})
        self.replicated = NamedSharding(self.mesh, PartitionSpec())

    @property
    def size(self) -> int:
        """The number of devices in the mesh."""
        return self.mesh.size

    def input_shardings(self, component: str, api: str, names: Sequence[str],
                        inputs: tuple) -> tuple:
        """The sharding of every leaf of `inputs` (the API's inputs, in order of `names`)."""
        axes = self.batch_axes.get(api, 0)
        return tuple(jax.tree.map(
            lambda leaf, name=name: self._sharding(component, api, name, leaf,
                                                   axes if isinstance(axes, int)
                                                   else axes.get(name, 0)), value)
            for name, value in zip(names, inputs, strict=True))

    def _sharding(self, component: str, api: str, name: str, leaf: Any, axis: int) -> Any:
        shape = tuple(leaf.shape)
        if len(shape) <= axis or jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key) \
                or (len(shape) == 1 and shape == (2,) and leaf.dtype == np.uint32):
            return self.replicated  # scalars and keys
        if shape[axis] % self.size:
            raise SpaceError(f"{component}.{api}: data-parallel input {name!r} of shape {shape} "
                             f"splits along axis {axis} over {self.size} devices, so that "
                             f"axis must be a multiple of {self.size}",
                             component=component, api=api)
        return NamedSharding(self.mesh, PartitionSpec(*([None] * axis), AXIS))

    def __repr__(self) -> str:
        return f"DataParallel({self.size} devices, batch_axes={self.batch_axes})"
