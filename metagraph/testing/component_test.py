"""`ComponentTest`: build one component alone, call its APIs, compare with expected outputs.

    test = ComponentTest(Counter(), input_spaces={}, backend="xla")
    test.test(("increment", None), expected_outputs=1)
    test.get_state()["count"]
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

import jax
import numpy as np

from metagraph.build import build
from metagraph.component import Component

BACKEND_GROUP = "metagraph.backends"
"""The entry-point group naming the backends (`xla`, `eager`: modules with a `lower(graph,
seed=..., ...)`); metagraph finds them through the installed package's metadata, so the
framework never imports `backends` and a third-party backend registers the same way."""


def backend_names() -> list[str]:
    """The names of the installed backends."""
    return sorted(point.name for point in entry_points(group=BACKEND_GROUP))


BACKENDS = tuple(backend_names())
"""The installed backends' names, e.g. ("eager", "xla")."""


def lower_with(backend: str, graph: Any, seed: int,
               compiler_options: Mapping[str, Any] | None) -> Any:
    """`graph` lowered by the backend named `backend` (an entry point of BACKEND_GROUP)."""
    points = {point.name: point for point in entry_points(group=BACKEND_GROUP)}
    if backend not in points:
        raise ValueError(f"ComponentTest: backend must be one of {sorted(points)} (the "
                         f"{BACKEND_GROUP!r} entry points installed), got {backend!r}")
    options = {} if compiler_options is None else {"compiler_options": dict(compiler_options)}
    return points[backend].load().lower(graph, seed=seed, **options)


class ComponentTest:
    """A component built as the root of its own graph, on one backend.

    `input_spaces` maps API argument names to spaces; `apis` limits which APIs are built;
    `backend` names an installed backend ("xla", "eager"; see `backend_names()`);
    `compiler_options` go to a backend that compiles (XLA's own options).
    """

    def __init__(self, component: Component, input_spaces: Mapping[str, Any] | None = None,
                 backend: str = "xla", seed: int = 0, apis: list[str] | None = None,
                 compiler_options: Mapping[str, Any] | None = None, **build_options: Any):
        self.component = component
        self.graph = build(component, dict(input_spaces or {}), apis=apis, **build_options)
        self.executor = lower_with(backend, self.graph, seed, compiler_options)
        self.backend = backend

    def test(self, call: tuple[str, Any], expected_outputs: Any = None,
             decimals: int = 7) -> Any:
        """Run `call = (api, inputs)` and, if given, compare with `expected_outputs` to
        `decimals` places (pytrees compared leaf by leaf). `inputs` is None (no argument), a
        list (the positional arguments) or one value (the only argument). Returns the outputs
        as NumPy."""
        api, inputs = call
        if inputs is None:
            args: tuple = ()
        elif isinstance(inputs, list):
            args = tuple(inputs)
        else:
            args = (inputs,)
        outputs = jax.tree.map(np.asarray, self.executor.call(api, *args))
        if expected_outputs is not None:
            assert_tree_almost_equal(outputs, expected_outputs, decimals,
                                     f"{self.graph.root.name}.{api} ({self.backend})")
        return outputs

    def get_state(self, path: str | None = None) -> Any:
        """The component's own state (`{name: value}`) by default, or another scope's."""
        return self.executor.get_state(path or self._own_scope())

    def set_state(self, value: Any, path: str | None = None) -> None:
        """Replace the component's own state (or that of scope `path`) with `value`, checked
        against its spec."""
        self.executor.set_state(value, path or self._own_scope())

    def _own_scope(self) -> str:
        return self.graph.scope_of(self.component)

    def __getattr__(self, name: str) -> Any:  # exe-style API calls: test.act(obs)
        return getattr(self.__dict__["executor"], name)


def assert_tree_almost_equal(actual: Any, expected: Any, decimals: int = 7,
                             what: str = "outputs") -> None:
    """Assert two pytrees have the same structure and leaves equal to `decimals` places.

    Args:
        actual: The pytree produced.
        expected: The reference pytree.
        decimals: As in `numpy.testing.assert_array_almost_equal`.
        what: Names the values in the failure message.

    Raises:
        AssertionError: The structures differ, or a leaf differs (the message names its index).
    """
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    expected_leaves, expected_tree = jax.tree.flatten(expected)
    if actual_tree != expected_tree:
        raise AssertionError(f"{what}: structure {actual_tree} != expected {expected_tree}")
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves, strict=True)):
        np.testing.assert_array_almost_equal(a, e, decimal=decimals,
                                             err_msg=f"{what}: leaf {i} differs")
