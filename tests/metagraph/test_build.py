"""Build: one abstract trace records the meta-graph; state is threaded through pure functions."""

import jax
import numpy as np
import pytest
from toy_components import Counter, Linear, Model, numpy_model

import metagraph as mg
from metagraph.spaces import Box, PRNGKey


def test_graph_has_component_and_api_nodes_and_call_edges(model_graph):
    g = model_graph.nx
    assert set(model_graph.components) == {"model", "model/norm", "model/head", "model/calls"}
    for path in model_graph.components:
        assert g.nodes[path]["kind"] == "component"
    assert g.nodes["model/head"]["parent"] == "model"
    apis = {n for n, kind in g.nodes(data="kind") if kind == "api"}
    assert apis == {"model.predict", "model.sample", "model/norm.update",
                    "model/head.forward", "model/calls.increment"}
    edge = g.edges["model.predict", "model/norm.update"]
    assert edge["kind"] == "call"
    assert str(edge["args"]["x"]) == "float32[B,4]"
    assert str(edge["returns"]) == "float32[B,4]"
    assert str(g.edges["model.sample", "model/head.forward"]["returns"]) == "float32[B,3]"
    assert g.edges["model", "model/head"]["kind"] == "contains"


def test_summary_lists_components_apis_and_params(model_graph):
    text = model_graph.summary()
    assert "4 components, 15 parameters" in text  # w: 4x3, b: 3
    assert "predict(x: float32[B,4]) -> float32[B,3]" in text
    assert "model/norm:mean" in text and "model/head:w" in text
    assert model_graph.param_count("model/head") == 15
    assert model_graph.param_count("model/norm") == 0


def test_state_spec_is_static(model_graph):
    spec = model_graph.state_spec
    assert spec["model/norm"]["mean"].shape == (4,)
    assert spec["model/head"]["w"].shape == (4, 3)
    assert ("model/head", "w") in model_graph.trainable
    assert ("model/norm", "mean") not in model_graph.trainable


def test_two_level_composite_matches_numpy(model_graph):
    predict = jax.jit(model_graph.pure("predict"))
    state = model_graph.init_state(0)
    w, b = np.asarray(state["model/head"]["w"]), np.asarray(state["model/head"]["b"])
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(n, 4)).astype(np.float32) + 3.0 for n in (5, 2, 7)]
    expected = numpy_model(xs, w, b)
    for x, want in zip(xs, expected, strict=True):
        state, got = predict(state, x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert int(state["model/calls"]["count"]) == 3
    np.testing.assert_allclose(state["model/norm"]["mean"], np.concatenate(xs).mean(0), rtol=1e-5)


def test_init_is_deterministic_per_seed_and_scope(model_graph):
    a, b, c = (model_graph.init_state(s) for s in (0, 0, 1))
    np.testing.assert_array_equal(a["model/head"]["w"], b["model/head"]["w"])
    assert not np.allclose(a["model/head"]["w"], c["model/head"]["w"])


def test_init_state_from_the_build_trace_equals_a_fresh_trace():
    """With fixed input shapes, init_state compiles mg.build's own trace; the state equals
    the one a fresh init trace (what a graph with a batch dimension runs) creates."""
    graph = mg.build(Model(), {"x": Box((3, 4)), "key": PRNGKey()})
    assert graph._init_trace is not None
    reused = graph.init_state(5)
    graph._init_trace = None
    fresh = graph.init_state(5)
    jax.tree.map(np.testing.assert_array_equal, reused, fresh)


def test_sibling_instances_of_one_class_get_their_own_scopes_and_params():
    class TwoHeads(mg.Component):
        def __init__(self):
            self.heads = [Linear(2), Linear(2)]

        @mg.api
        def both(self, x):
            return self.heads[0].forward(x), self.heads[1].forward(x)

    graph = mg.build(TwoHeads(), {"x": Box((3,), batch=True)})
    assert {"two_heads/heads_0", "two_heads/heads_1"} <= set(graph.components)
    state = graph.init_state(0)
    assert not np.allclose(state["two_heads/heads_0"]["w"], state["two_heads/heads_1"]["w"])


def test_shared_component_is_one_node_with_one_state():
    class Shared(mg.Component):
        def __init__(self):
            self.a = Counter()
            self.b = self.a  # the same instance reached twice

        @mg.api
        def twice(self):
            self.a.increment()
            return self.b.increment()

    graph = mg.build(Shared(), {})
    assert list(graph.state_spec) == ["shared/a"]
    state, out = jax.jit(graph.pure("twice"))(graph.init_state(), )
    assert int(out) == 2 and graph.nx.edges["shared.twice", "shared/a.increment"]["calls"] == 2


def test_build_does_not_compile_and_components_need_a_graph():
    with pytest.raises(mg.MetaGraphError, match="outside a graph"):
        Counter().increment()


def test_symbolic_or_fixed_batch():
    graph = mg.build(Model(), {"x": Box((4,), batch=True)}, apis=["predict"], batch_size=8)
    edge = graph.nx.edges["model.predict", "model/head.forward"]
    assert str(edge["args"]["x"]) == "float32[B,4]"  # a leading 8 is recognised as B
    assert graph.apis["predict"].outputs.shape == (3,)


def test_summary_pairs_each_calls_input_with_its_own_output():
    class ValueNetwork(mg.Component):
        @mg.api(polymorphic=True)
        def forward(self, x):
            w = self.get_param("w", np.ones((3, 1), np.float32))
            return x @ w

    class Critic(mg.Component):
        def __init__(self):
            self.value_network = ValueNetwork()

        @mg.api
        def values(self, obs, batch):
            return self.value_network.forward(obs), self.value_network.forward(batch)

    graph = mg.build(Critic(), {"obs": Box((4, 3)), "batch": Box((128, 3))})
    lines = graph.summary().splitlines()
    calls = [line.strip() for line in lines if "-> critic/value_network.forward" in line]
    assert calls == [
        "critic.values -> critic/value_network.forward(x: float32[4,3]) -> float32[4,1]",
        "critic.values -> critic/value_network.forward(x: float32[128,3]) -> float32[128,1]"]
    edge = graph.nx.edges["critic.values", "critic/value_network.forward"]
    assert str(edge["args"]["x"]) == "float32[4,3]" and str(edge["returns"]) == "float32[4,1]"
    assert edge["calls"] == 2


@pytest.mark.parametrize("size", [1.5, 0, -2, True, "8"])
def test_batch_and_time_sizes_must_be_positive_ints(size):
    with pytest.raises(ValueError, match=rf"mg.build: batch_size must be a positive int, got "
                                         rf"{size!r}"):
        mg.build(Model(), {"x": Box((4,), batch=True)}, apis=["predict"], batch_size=size)
    with pytest.raises(ValueError, match="mg.build: time_size must be a positive int"):
        mg.build(Model(), {"x": Box((4,), batch=True)}, apis=["predict"], time_size=size)
    graph = mg.build(Model(), {"x": Box((4,), batch=True)}, apis=["predict"],
                     batch_size=np.int64(2))
    assert graph.batch_size == 2 and type(graph.batch_size) is int


def test_an_init_compile_option_this_xla_lacks_is_left_out(monkeypatch):
    """The init program's quick-compile options come and go between XLA releases (jaxlib 0.11
    dropped `xla_cpu_use_fusion_emitters`): one the installed XLA does not know is dropped,
    and the state is made all the same."""
    from metagraph import graph as graph_module

    monkeypatch.setattr(graph_module, "INIT_COMPILER_OPTIONS",
                        {**graph_module.INIT_COMPILER_OPTIONS, "xla_no_such_option": True})
    monkeypatch.setattr(graph_module, "_REJECTED_OPTIONS", set())
    built = mg.build(Model(), {"x": Box((4,), batch=True), "key": PRNGKey()})
    state = built.init_state(0)
    assert "xla_no_such_option" in graph_module._REJECTED_OPTIONS
    assert jax.tree.leaves(state)


def test_an_api_on_request_is_built_only_when_named():
    class TwoUses(mg.Component):
        @mg.api
        def forward(self, x):
            return x * 2

        @mg.api(on_request=True)
        def special(self, y):  # its input space is given only where it is built
            return y + 1

    default = mg.build(TwoUses(), {"x": Box((3,))})
    assert list(default.apis) == ["forward"]
    both = mg.build(TwoUses(), {"x": Box((3,)), "y": Box((2,))}, apis=["forward", "special"])
    assert list(both.apis) == ["forward", "special"]


class Twice(mg.Component):
    """`both` calls `double`, and both are root APIs."""

    @mg.api
    def both(self, x):
        return self.double(x) + 1.0

    @mg.api
    def double(self, x):
        return 2.0 * x


@pytest.mark.parametrize("apis", [["both", "double"], ["double", "both"]])
def test_a_root_api_that_another_root_calls_first_is_built_in_any_order(apis):
    graph = mg.build(Twice(), {"x": Box((3,), batch=True)}, apis=apis)
    edge = graph.nx.edges["input", "twice.double"]
    assert edge["kind"] == "call" and str(edge["args"]["x"]) == "float32[B,3]"
    assert graph.nx.edges["twice.both", "twice.double"]["kind"] == "call"
    pure = graph.pure("both")
    _, out = pure(graph.init_state(0), np.ones((2, 3), np.float32))
    np.testing.assert_allclose(out, 3.0)
