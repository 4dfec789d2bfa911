"""Records the meta-graph during the one abstract trace of `mg.build`, and checks spaces.

Nodes: one per component (`kind="component"`), one per API (`kind="api"`, named
`path.api`, with the `inputs` and `outputs` of its first call), and `"input"` for the graph's
inputs. Edges: `kind="contains"` from a component to its sub-components and APIs,
`kind="call"` from caller API to callee API carrying `args` (argument name -> space that
flowed) and `returns` (the space of the result) of the first call along it, `calls` (how many
calls), and `signatures`: every distinct `(args, returns)` pair of those calls, each the
input and output of one and the same call (a polymorphic API called twice from one caller
with two batch sizes has two).
"""

from __future__ import annotations

from typing import Any

import jax
import networkx as nx

from metagraph.api import ApiSpec
from metagraph.errors import SpaceError
from metagraph.spaces import abstract_of, same_signature, space_of

INPUT = "input"


class Recorder:
    """Records the calls of one trace into `nx`; `components` maps path -> component."""

    def __init__(self, components: dict[str, Any], batch_size: Any, time_size: Any):
        self.batch_size, self.time_size = batch_size, time_size
        self.nx = nx.DiGraph()
        self.nx.add_node(INPUT, kind="input")
        self._first_call: dict[str, tuple[Any, str]] = {}
        self._open_calls: list[tuple[str, str, dict[str, Any], bool, bool]] = []
        for path, component in components.items():
            parent = path.rpartition("/")[0] or None
            self.nx.add_node(path, kind="component", cls=type(component).__name__,
                             depth=path.count("/"), parent=parent, params=0)
            if parent is not None:
                self.nx.add_edge(parent, path, kind="contains")

    def space(self, value: Any):
        """The space of a traced value, with this trace's batch and time dimensions recognised."""
        return space_of(value, self.batch_size, self.time_size)

    def enter(self, path: str, component: Any, spec: ApiSpec, arguments: dict[str, Any],
              caller: str | None) -> None:
        """A call of `spec` on `component` (at `path`) from API node `caller` begins."""
        node = f"{path}.{spec.name}"
        caller = caller or INPUT
        flowed = {}
        for arg, value in arguments.items():
            try:
                flowed[arg] = self.space(value)
            except TypeError as e:
                raise SpaceError(f"{node}({arg}): {e}", component=path, api=spec.name,
                                 argument=arg, expected="an array or pytree of arrays",
                                 actual=type(value).__name__, caller=caller) from None
        first_of_node = node not in self.nx
        if first_of_node:
            self.nx.add_node(node, kind="api", component=path, api=spec.name, inputs=flowed,
                             outputs=None)
            self.nx.add_edge(path, node, kind="contains")
        edge = self.nx.get_edge_data(caller, node)
        first_of_edge = edge is None
        if first_of_edge:
            self.nx.add_edge(caller, node, kind="call", args=flowed, returns=None, calls=1,
                             signatures=[])
        else:
            edge["calls"] += 1
        self._open_calls.append((caller, node, flowed, first_of_edge, first_of_node))
        for arg, value in arguments.items():
            expected = spec.declared_input(component, arg)
            if expected is not None and not self.fits(expected, value):
                self._fail(SpaceError.mismatch(path, spec.name, arg, expected, flowed[arg],
                                               caller=caller), caller, node)
        signature = abstract_of(arguments)
        first = self._first_call.setdefault(node, (signature, caller))
        if not spec.polymorphic and not same_signature(first[0], signature):
            first_spaces = self.nx.nodes[node]["inputs"]
            for arg in arguments:
                if first_spaces.get(arg) != flowed[arg]:
                    self._fail(SpaceError.mismatch(
                        path, spec.name, arg, first_spaces.get(arg), flowed[arg], caller=caller,
                        hint=f"the same component was called with {first_spaces.get(arg)} from "
                             f"{first[1]}; a component used in two places must see compatible "
                             f"spaces (declare @api(polymorphic=True) if it is meant to)"),
                        caller, node)

    def exit(self, path: str, component: Any, spec: ApiSpec, result: Any) -> None:
        """The innermost open call (of `spec` on `component` at `path`) returned `result`."""
        caller, node, flowed, first_of_edge, first_of_node = self._open_calls.pop()
        try:
            returned = self.space(result)
        except TypeError as e:
            raise SpaceError(f"{node} -> output: {e}", component=path, api=spec.name,
                             caller=caller) from None
        edge = self.nx.edges[caller, node]
        if first_of_edge:
            edge["returns"] = returned
        if first_of_node:
            self.nx.nodes[node]["outputs"] = returned
        if (flowed, returned) not in edge["signatures"]:
            edge["signatures"].append((flowed, returned))
        expected = spec.declared_output(component)
        if expected is not None and not self.fits(expected, result):
            self._fail(SpaceError.mismatch(path, spec.name, None, expected, returned,
                                           caller=caller), caller, node)

    def fits(self, expected: Any, value: Any) -> bool:
        """Whether `value` has the declared space. Batch and time ranks match the graph's B
        and T, or any sizes (an inner call may batch differently from the root's inputs)."""
        actual = abstract_of(value)
        if same_signature(expected.to_abstract(self.batch_size, self.time_size), actual):
            return True
        leaves = jax.tree.leaves(actual)
        if not leaves or not (expected.batch or expected.time):
            return False
        lead = tuple(leaves[0].shape[:2]) + (1, 1)
        return any(same_signature(expected.to_abstract(b, t), actual)
                   for b, t in ((lead[0], lead[1]), (lead[1], lead[0]), (lead[0], 1)))

    def missing_input(self, spec: ApiSpec, root: str, given: dict[str, Any],
                      argument: str) -> SpaceError:
        """The error for root API `spec` whose `argument` has no input space, with a graph
        to draw: the root API called from the input with the spaces given, `argument` red."""
        node = f"{root}.{spec.name}"
        flowed = {**given, argument: None}
        self.nx.add_node(node, kind="api", component=root, api=spec.name, inputs=flowed,
                         outputs=None)
        self.nx.add_edge(root, node, kind="contains")
        self.nx.add_edge(INPUT, node, kind="call", args=flowed, returns=None, calls=0,
                         signatures=[])
        error = SpaceError(
            f"{node}({argument}): no input space given; pass input_spaces={{{argument!r}: "
            f"<Space>, ...}} to mg.build (or build only some APIs with apis=[...])",
            component=root, api=spec.name, argument=argument, expected="an input space",
            actual="none given", caller=INPUT)
        self.nx.edges[INPUT, node]["error"] = error
        error.graph = self.nx
        return error

    def _fail(self, error: SpaceError, caller: str, node: str) -> None:
        self.nx.edges[caller, node]["error"] = error
        error.graph = self.nx
        raise error
