"""The meta-graph's schema: every node and edge of a built graph (and of a failed build's) holds
exactly the fields of one record type of `metagraph.schema`, read back typed; records refuse
unknown fields and attributes of another kind."""

import pytest

from examples.draw_graphs import shape_error
from metagraph import schema
from metagraph.schema import ApiNode, CallEdge, ComponentNode, DataEdge, Flow, SourceLocation


def _check_every_attribute_is_declared(graph):
    for name, attrs in graph.nodes(data=True):
        record = schema.node(graph, name)
        assert set(attrs) == {"kind", *type(record)._fields}, name
    for u, v, attrs in graph.edges(data=True):
        record = schema.edge(graph, u, v)
        assert set(attrs) == {"kind", *type(record)._fields}, (u, v)


def test_a_built_graph_holds_the_schemas_records(model_graph):
    _check_every_attribute_is_declared(model_graph.nx)
    apis = dict(schema.nodes_of(model_graph.nx, ApiNode))
    assert set(apis) == {"model.predict", "model.sample", "model/norm.update",
                         "model/head.forward", "model/calls.increment"}
    predict = apis["model.predict"]
    assert predict.is_root and predict.component == "model" and predict.api == "predict"
    assert str(predict.inputs["x"]) == "float32[B,4]"
    assert isinstance(predict.source, SourceLocation)
    head = schema.node(model_graph.nx, "model/head")
    assert isinstance(head, ComponentNode) and head.parent == "model" and head.params == 15
    assert sum(row.size for row in head.state) == head.state_size == 15
    call = schema.edge(model_graph.nx, "model.sample", "model/head.forward")
    assert isinstance(call, CallEdge) and str(call.returns) == "float32[B,3]"
    assert call.calls == len(call.signatures) == 1 and call.error is None
    # the typed view and networkx's attribute dict are one: plain networkx users see the same
    assert model_graph.nx.edges["model.sample", "model/head.forward"]["returns"] is call.returns


def test_a_failed_builds_graph_holds_the_schemas_records():
    error = shape_error()
    _check_every_attribute_is_declared(error.graph)
    [(u, v, faulty)] = [(u, v, e) for u, v, e in schema.edges_of(error.graph, CallEdge) if e.error]
    assert faulty.error is error and v == "misfit_agent/head.score"
    flows = [f for _, _, e in schema.edges_of(error.graph, DataEdge) for f in e.flows]
    assert flows and all(isinstance(f, Flow) for f in flows)
    # no state known: the build did not get that far
    assert all(c.state is None for _, c in schema.nodes_of(error.graph, ComponentNode))


def test_records_refuse_unknown_fields_and_other_kinds(model_graph):
    with pytest.raises(TypeError, match="unknown fields.*'colour'"):
        ApiNode.fields(component="m", api="f", colour="red")
    with pytest.raises(TypeError, match="missing fields.*'api'"):
        ApiNode.fields(component="m")
    with pytest.raises(TypeError, match="kind 'component', not 'api'"):
        ApiNode(model_graph.nx.nodes["model/head"])
    head = schema.node(model_graph.nx, "model/head")
    with pytest.raises(AttributeError, match="no field 'colour'"):
        head.colour  # noqa: B018
    with pytest.raises(AttributeError, match="no field 'colour'"):
        head.colour = "red"
