"""Scopes belong to a graph: one component built into several graphs runs right in each."""

import numpy as np
import pytest
from toy_components import Counter, Linear

import metagraph as mg
from metagraph.spaces import Box
from metagraph.testing import ComponentTest

SPACES = {"v": Box((3,), batch=True)}
RNG = np.random.default_rng(3)


class Doubled(mg.Component):
    """Root A: 2 * x.forward(v)."""

    def __init__(self, x):
        self.x = x

    @mg.api
    def f(self, v):
        return self.x.forward(v) * 2.0


class Nest(mg.Component):
    def __init__(self, x):
        self.x = x


class Shifted(mg.Component):
    """Root B, holding the same component one level deeper: x.forward(v) + 1."""

    def __init__(self, x):
        self.inner = Nest(x)
        self.calls = Counter()

    @mg.api
    def f(self, v):
        self.calls.increment()
        return self.inner.x.forward(v) + 1.0


def lower(graph, backend):
    from backends import eager, xla

    return xla.lower(graph) if backend == "xla" else eager.lower(graph)


def linear(exe, scope, v):
    """NumPy reference of Linear.forward with the parameters the executor holds at `scope`."""
    state = exe.get_state(scope)
    return v.astype(np.float64) @ state["w"] + state["b"]


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_a_component_built_into_three_graphs_runs_right_in_each(backend):
    x = Linear(2)
    graph_a = mg.build(Doubled(x), SPACES)
    exe_a = lower(graph_a, backend)
    v = RNG.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(exe_a.f(v), 2 * linear(exe_a, "doubled/x", v), rtol=1e-5)

    alone = ComponentTest(x, {"x": Box((3,), batch=True)}, backend=backend)  # X as a root
    graph_x, exe_x = alone.graph, alone.executor
    graph_b = mg.build(Shifted(x), SPACES)
    exe_b = lower(graph_b, backend)

    for n in (5, 2):  # a new batch size: XLA traces A again, eager runs its Python again
        v = RNG.normal(size=(n, 3)).astype(np.float32)
        np.testing.assert_allclose(exe_a.f(v), 2 * linear(exe_a, "doubled/x", v), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(alone.test(("forward", v)), linear(exe_x, "linear", v),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(exe_b.f(v), linear(exe_b, "shifted/inner/x", v) + 1,
                                   rtol=1e-5, atol=1e-6)
    assert exe_b.get_state("shifted/calls")["count"] == 2
    assert graph_a.scope_of(x) == "doubled/x" and graph_x.scope_of(x) == "linear"
    assert graph_b.scope_of(x) == "shifted/inner/x"
    assert x.scope == "shifted/inner/x"  # outside any graph: the one built last
    np.testing.assert_array_equal(exe_a.get_state(x)["w"], exe_a.get_state("doubled/x")["w"])
    assert set(exe_a.get_states(x)) == {"doubled/x"}
    np.testing.assert_array_equal(graph_a.init_state(0)["doubled/x"]["w"],
                                  mg.build(Doubled(Linear(2)), SPACES).init_state(0)
                                  ["doubled/x"]["w"])  # A's state is A's, whatever came after


def test_a_component_used_but_not_part_of_the_graph_is_named():
    class Borrows(mg.Component):
        def __init__(self):
            self.link("head", Linear(2))  # linked, but owned by no component of the graph

        @mg.api
        def f(self, v):
            return self.head.forward(v)

    with pytest.raises(mg.MetaGraphError, match="Linear 'linear' is not part of the graph of "
                                                "'borrows'.*a `link` alone does not add it"):
        mg.build(Borrows(), SPACES)


def test_a_component_never_built_has_no_scope():
    with pytest.raises(mg.MetaGraphError, match="not part of a built graph"):
        _ = Linear(2).scope
