"""Transformations of a graph's pure functions, applied before lowering, as JAX applies
`jax.vmap` and shardings to a function before `jit(...).lower(...)`: the XLA executor only
lowers what a transformation gives it, compiles the lowered stage and calls the compiled one.

    Transform()              one seed on the default device (nothing changes)
    Transform(device)        one seed, the program and its state on `device`
    Seeds(4)                 four independent copies as one program (`jax.vmap`): the state,
                             every input and every output carry a leading axis of 4
    DataParallel(...)        a mesh of devices: inputs split, state replicated
                             (`backends.xla.data_parallel`)

    exe = backends.xla.lower(graph, transform=Seeds(4))   # or seeds=4, its short form
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from backends.xla.devices import resolve_device
from metagraph.checks import positive_int
from metagraph.errors import SpaceError
from metagraph.graph import MetaGraph, State


class Transform:
    """What an executor lowers: a graph's pure functions `(state, *inputs) -> (state',
    outputs)` as they are, on one device: `device` (a `jax.Device` or a name such as "cpu" or
    "gpu:0", `backends.xla.devices`), or JAX's default device for None. A transformation
    overrides what it changes; each method is called before anything is lowered or run."""

    device: jax.Device | None = None

    def __init__(self, device: Any = None):
        self.device = resolve_device(device, f"backends.xla.{type(self).__name__}: device")

    def pure(self, fn: Callable) -> Callable:
        """The function to lower in place of root API function `fn`."""
        return fn

    def state_spec(self, graph: MetaGraph) -> State:
        """The abstract state the transformed functions take."""
        return graph.state_spec

    def initial_state(self, graph: MetaGraph, seed: int) -> State:
        """The concrete state the transformed functions start from."""
        return graph.init_state(seed)

    def place(self, state: State) -> State:
        """`state` on the devices the transformed functions run on."""
        return state if self.device is None else jax.device_put(state, self.device)

    def abstract_inputs(self, inputs: tuple) -> tuple:
        """The abstract inputs of the transformed function from those of the graph's."""
        return inputs

    def jit_options(self, graph: MetaGraph, api: str, abstract_inputs: tuple
                    ) -> dict[str, Any]:
        """Keyword arguments for `jax.jit` beyond the function and donation (shardings):
        with a `device`, every input and output on it (NumPy inputs are copied there)."""
        if self.device is None:
            return {}
        on_device = jax.sharding.SingleDeviceSharding(self.device)
        return {"in_shardings": on_device, "out_shardings": on_device}

    def input_checker(self, checker: Any) -> Any:
        """The check of a call's inputs (`backends.inputs.InputChecker` of the graph's API)
        for the transformed function's inputs."""
        return checker

    def __repr__(self) -> str:
        where = "" if self.device is None else f"device={self.device}"
        return f"{type(self).__name__}({where})"


class Seeds(Transform):
    """K independent copies of the graph as one program (`jax.vmap` over a leading axis of K):
    copy k's state starts from seed `seed + k`; every input and output carries the axis; all
    on `device` (JAX's default for None)."""

    def __init__(self, count: int, device: Any = None):
        super().__init__(device)
        self.count = positive_int(count, "backends.xla.Seeds: count")

    def pure(self, fn: Callable) -> Callable:
        """`fn` vmapped over the leading seed axis of the state and of every input."""
        return jax.vmap(fn)

    def state_spec(self, graph: MetaGraph) -> State:
        """The graph's abstract state stacked on a leading axis of `count`."""
        return graph.state_spec_for(self.count)

    def initial_state(self, graph: MetaGraph, seed: int) -> State:
        """`count` initial states, copy k from seed `seed + k`, stacked."""
        return graph.init_state(seed, seeds=self.count)

    def abstract_inputs(self, inputs: tuple) -> tuple:
        """Every input with a leading axis of `count`."""
        return jax.tree.map(lambda s: jax.ShapeDtypeStruct((self.count, *s.shape), s.dtype),
                            inputs)

    def input_checker(self, checker: Any) -> Any:
        """Checks that every input has the seed axis, then each seed's slice as one call's."""
        return SeededInputChecker(checker, self.count)

    def __repr__(self) -> str:
        where = "" if self.device is None else f", device={self.device}"
        return f"Seeds({self.count}{where})"


class SeededInputChecker:
    """Inputs of K independent seeds: every array has a leading axis of K; each slice is
    checked like a single seed's input."""

    def __init__(self, checker: Any, seeds: int):
        self.checker, self.seeds = checker, seeds

    def __call__(self, args: tuple, kwargs: Mapping[str, Any]) -> tuple[tuple, tuple]:
        """The bound inputs and their signature, as `InputChecker` returns them; SpaceError
        for an input without the seed axis."""
        leaves = jax.tree.leaves((args, kwargs))
        for leaf in leaves:
            if np.shape(leaf)[:1] != (self.seeds,):
                raise SpaceError(f"{self.checker.root}.{self.checker.sig.name}: with seeds="
                                 f"{self.seeds} every input needs a leading axis of "
                                 f"{self.seeds}, got shape {np.shape(leaf)}",
                                 component=self.checker.root, api=self.checker.sig.name)
        first = jax.tree.map(lambda x: x[0], (args, kwargs))
        self.checker(*first)
        inputs = self.checker._bind(args, kwargs)
        return inputs, tuple((np.shape(x), np.asarray(x).dtype) for x in jax.tree.leaves(inputs))
