"""Records the meta-graph during the one abstract trace of `mg.build`, and checks spaces.

What the nodes and edges carry is declared in `metagraph.schema`: one `ComponentNode` per
component, one `ApiNode` per API (`path.api`, with the spaces of its first call and its
`SourceLocation`), the `InputNode`; `ContainsEdge`s from a component to its sub-components and
APIs, a `CallEdge` from caller to callee API (the spaces of its first call, how many calls,
every distinct signature: a polymorphic API called twice from one caller with two batch sizes
has two).

Data flow: `flows` (a list of `Flow`) on an edge from the API whose output (or from
`"input"`, the root API argument) an API call consumed, to that API: a `DataEdge`, or a
`CallEdge` that also carries data. Values are followed by identity: the very traced array
a call returned (or a root API received) passed on as an argument, whole or as a part of a
dict or tuple, is an edge; a value computed from it is not (it was made by the caller). A
value an API received as an argument and passes down to its callees travels on those call
edges and makes no data edge (except a root API's: `"input"` -> the API that consumed it).
"""

from __future__ import annotations

from typing import Any

import jax
import networkx as nx

from metagraph import schema
from metagraph.api import ApiSpec
from metagraph.errors import SpaceError
from metagraph.schema import (
    INPUT,
    ApiNode,
    CallEdge,
    ComponentNode,
    ContainsEdge,
    DataEdge,
    Flow,
    InputNode,
    SourceLocation,
)
from metagraph.spaces import abstract_of, same_signature, space_of

__all__ = ["INPUT", "Flow", "Recorder", "SourceLocation"]


class Recorder:
    """Records the calls of one trace into `nx`; `components` maps path -> component."""

    def __init__(self, components: dict[str, Any], batch_size: Any, time_size: Any):
        self.batch_size, self.time_size = batch_size, time_size
        self.nx = nx.DiGraph()
        InputNode.add(self.nx, INPUT)
        self._first_call: dict[str, tuple[Any, str]] = {}
        # id(traced leaf) -> (the leaf, kept alive so its id is not reused; producer node;
        # path in its output): the values of the root API being traced, for data edges
        self._values: dict[int, tuple[Any, str, tuple]] = {}
        # id(traced leaf) -> (the leaf; [(API node, argument path)] that consumed it), for
        # `carried` to link a loop's carry to the producer of the next iteration's value
        self._consumed: dict[int, tuple[Any, list[tuple[str, str]]]] = {}
        self._open_calls: list[tuple[str, str, dict[str, Any], bool, bool]] = []
        self._received: list[set[int]] = []  # per open call: ids of the arrays passed to it
        for path, component in components.items():
            parent = path.rpartition("/")[0] or None
            ComponentNode.add(self.nx, path, cls=type(component).__name__,
                              depth=path.count("/"), parent=parent)
            if parent is not None:
                ContainsEdge.add(self.nx, parent, path)

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
            ApiNode.add(self.nx, node, component=path, api=spec.name, inputs=flowed,
                        source=SourceLocation.of(spec.fn))
            ContainsEdge.add(self.nx, path, node)
        if caller == INPUT:  # a root API: its arguments are the graph's input
            for arg, value in arguments.items():
                self._produced(INPUT, value, (jax.tree_util.GetAttrKey(arg),))
        else:
            self._record_flows(node, arguments, flowed)
        self._received.append(set() if caller == INPUT else {
            id(leaf) for leaf in jax.tree.leaves(arguments) if isinstance(leaf, jax.Array)})
        edge = self.nx.edges[caller, node] if self.nx.has_edge(caller, node) else None
        # a first call, also where values flowed on the edge before it (a root API that
        # another root traced first called with the graph's input)
        first_of_edge = edge is None or edge.get("kind") == DataEdge.kind
        if first_of_edge:
            flows = [] if edge is None else list(DataEdge(edge).flows)
            CallEdge.add(self.nx, caller, node, args=flowed, flows=flows)
        else:
            self._call(caller, node).calls += 1
        self._open_calls.append((caller, node, flowed, first_of_edge, first_of_node))
        for arg, value in arguments.items():
            expected = spec.declared_input(component, arg)
            if expected is not None and not self.fits(expected, value):
                self._fail(SpaceError.mismatch(path, spec.name, arg, expected, flowed[arg],
                                               caller=caller), caller, node)
        signature = abstract_of(arguments)
        first = self._first_call.setdefault(node, (signature, caller))
        if not spec.polymorphic and not same_signature(first[0], signature):
            first_spaces = ApiNode(self.nx.nodes[node]).inputs
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
        self._received.pop()
        try:
            returned = self.space(result)
        except TypeError as e:
            raise SpaceError(f"{node} -> output: {e}", component=path, api=spec.name,
                             caller=caller) from None
        edge = self._call(caller, node)
        if first_of_edge:
            edge.returns = returned
        if first_of_node:
            ApiNode(self.nx.nodes[node]).outputs = returned
        if (flowed, returned) not in edge.signatures:
            edge.signatures.append((flowed, returned))
        self._produced(node, result, ())
        if not self._open_calls:  # the root API returned: let its traced values go
            self._values.clear()
            self._consumed.clear()
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
        ApiNode.add(self.nx, node, component=root, api=spec.name, inputs=flowed,
                    source=SourceLocation.of(spec.fn))
        ContainsEdge.add(self.nx, root, node)
        call = CallEdge.add(self.nx, INPUT, node, args=flowed, calls=0)
        error = SpaceError(
            f"{node}({argument}): no input space given; pass input_spaces={{{argument!r}: "
            f"<Space>, ...}} to mg.build (or build only some APIs with apis=[...])",
            component=root, api=spec.name, argument=argument, expected="an input space",
            actual="none given", caller=INPUT)
        call.error = error
        error.graph = self.nx
        return error

    def _produced(self, producer: str, value: Any, prefix: tuple) -> None:
        """Remember the traced arrays in `value` as made by `producer` (latest producer wins:
        an API that returns its input unchanged passes it on)."""
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            if isinstance(leaf, jax.Array):
                self._values[id(leaf)] = (leaf, producer, prefix + tuple(path))

    def _record_flows(self, node: str, arguments: dict[str, Any], flowed: dict[str, Any]
                      ) -> None:
        """Data edges into `node` for every argument value an earlier API (or the input)
        produced: one flow per argument when it is one producer's output (or a part of it)
        as a whole, else one per array. Arrays the caller received itself are passed down."""
        passed_down = self._received[-1] if self._received else set()
        for arg, value in arguments.items():
            leaves = [(tuple(p), leaf) for p, leaf in jax.tree_util.tree_flatten_with_path(value)[0]
                      if isinstance(leaf, jax.Array)]
            found = [(p, leaf, self._values.get(id(leaf))) for p, leaf in leaves
                     if id(leaf) not in passed_down]
            for p, leaf, _ in found:  # a loop's carry links them to a later producer
                self._consumed.setdefault(id(leaf), (leaf, []))[1].append(
                    (node, arg + jax.tree_util.keystr(p)))
            found = [(p, leaf, hit[1], hit[2]) for p, leaf, hit in found
                     if hit is not None and hit[0] is leaf]
            if not found:
                continue
            producers = {producer for _, _, producer, _ in found}
            whole = None
            if len(found) == len(leaves) and len(producers) == 1:
                p0, out0 = found[0][0], found[0][3]
                prefix = out0[: len(out0) - len(p0)] if len(out0) >= len(p0) else None
                if prefix is not None and all(out == prefix + p for p, _, _, out in found):
                    whole = prefix
            if whole is not None:
                self._add_flow(found[0][2], node, Flow(_keys(whole), arg, flowed[arg]))
                continue
            for p, leaf, producer, out in found:
                self._add_flow(producer, node, Flow(_keys(out), arg + jax.tree_util.keystr(p),
                                                    self.space(leaf)))

    def carried(self, carry_in: Any, carry_out: Any) -> None:
        """A loop body ran once on `carry_in` and returned `carry_out` (`mg.scan` while the
        graph is built): the next iteration's calls consume what this one produced, so each
        API that consumed a leaf of `carry_in` gets a data edge from the producer of the
        matching leaf of `carry_out` (e.g. env.step's observation into the policy)."""
        for into, out in zip(jax.tree.leaves(carry_in), jax.tree.leaves(carry_out), strict=True):
            consumed = self._consumed.get(id(into))
            made = self._values.get(id(out))
            if consumed is None or consumed[0] is not into or made is None or made[0] is not out:
                continue
            for node, argument in consumed[1]:
                self._add_flow(made[1], node, Flow(_keys(made[2]), argument, self.space(out)))

    def _add_flow(self, producer: str, node: str, flow: Flow) -> None:
        record = (schema.edge(self.nx, producer, node) if self.nx.has_edge(producer, node)
                  else DataEdge.add(self.nx, producer, node))
        if flow not in record.flows:
            record.flows.append(flow)

    def _call(self, caller: str, node: str) -> CallEdge:
        return CallEdge(self.nx.edges[caller, node])

    def _fail(self, error: SpaceError, caller: str, node: str) -> None:
        self._call(caller, node).error = error
        error.graph = self.nx
        raise error


def _keys(path: tuple) -> str:
    """`['obs'][0]`; a root argument's name first (`obs['x']`)."""
    if path and isinstance(path[0], jax.tree_util.GetAttrKey):
        return path[0].name + jax.tree_util.keystr(path[1:])
    return jax.tree_util.keystr(path)
