"""Every build-time failure is a SpaceError naming component path, API, argument, both spaces."""

import jax
import jax.numpy as jnp
import pytest
from toy_components import Counter, Linear

import metagraph as mg
from metagraph.spaces import Box, Discrete, PRNGKey


class Policy(mg.Component):
    def __init__(self):
        self.head = Linear(2)

    @mg.api(inputs={"obs": Box((4,), batch=True)}, outputs=Discrete(2, batch=True))
    def act(self, obs):
        return jnp.argmax(self.head.forward(obs), axis=-1).astype(jnp.int32)


class Agent(mg.Component):
    def __init__(self):
        self.policy = Policy()

    @mg.api
    def act(self, obs):
        return self.policy.act(obs)


def build_error(root, spaces, **kwargs) -> mg.SpaceError:
    with pytest.raises(mg.SpaceError) as info:
        mg.build(root, spaces, **kwargs)
    assert isinstance(info.value, ValueError)
    return info.value


def test_declared_input_mismatch_names_path_api_argument_and_spaces():
    error = build_error(Agent(), {"obs": Box((5,), batch=True)})
    assert str(error).startswith("agent/policy.act(obs): expected float32[B,4], got float32[B,5]")
    assert error.edge.caller == "agent.act" and error.edge.callee == "agent/policy.act"
    assert error.edge.argument == "obs"
    assert str(error.edge.expected) == "float32[B,4]" and str(error.edge.actual) == "float32[B,5]"
    assert error.graph is not None and "error" in error.graph.edges["agent.act", "agent/policy.act"]


def test_dtype_mismatch():
    error = build_error(Agent(), {"obs": Box((4,), dtype=jnp.int32, batch=True)})
    assert "expected float32[B,4], got int32[B,4]" in str(error)


def test_missing_batch_rank():
    error = build_error(Agent(), {"obs": Box((4,))})
    assert "expected float32[B,4], got float32[4]" in str(error)


def test_declared_output_mismatch():
    class BadOutput(mg.Component):
        @mg.api(outputs=Box((2,), batch=True))
        def f(self, x):
            return x

    error = build_error(BadOutput(), {"x": Box((3,), batch=True)})
    assert str(error).startswith("bad_output.f -> output: expected float32[B,2], got float32[B,3]")


def test_missing_input_space():
    error = build_error(Agent(), {})
    assert "agent.act(obs): no input space given" in str(error)
    assert error.argument == "obs"


def test_argument_of_wrong_python_type():
    class PassesString(mg.Component):
        def __init__(self):
            self.head = Linear(2)

        @mg.api
        def f(self, x):
            return self.head.forward("not an array")

    error = build_error(PassesString(), {"x": Box((3,), batch=True)})
    assert "passes_string/head.forward(x)" in str(error)
    assert "expected an array or a pytree of arrays, got str" in str(error)


def test_wrong_number_of_arguments():
    class TooMany(mg.Component):
        def __init__(self):
            self.head = Linear(2)

        @mg.api
        def f(self, x):
            return self.head.forward(x, x)

    error = build_error(TooMany(), {"x": Box((3,), batch=True)})
    assert "too_many/head.forward(x)" in str(error) and "too many" in str(error)


def test_component_used_in_two_places_with_incompatible_spaces():
    class TwoUses(mg.Component):
        def __init__(self):
            self.head = Linear(2)

        @mg.api
        def f(self, x, y):
            return self.head.forward(x) + self.head.forward(y)

    error = build_error(TwoUses(), {"x": Box((3,), batch=True), "y": Box((4,), batch=True)})
    text = str(error)
    assert "two_uses/head.forward(x): expected float32[B,3], got float32[B,4]" in text
    assert "used in two places" in text


def test_jax_error_is_reraised_naming_innermost_component_and_api():
    class Inner(mg.Component):
        @mg.api
        def bad(self, x):
            return x @ jnp.ones((5, 2))

    class Outer(mg.Component):
        def __init__(self):
            self.inner = Inner()

        @mg.api
        def f(self, x):
            return self.inner.bad(x)

    error = build_error(Outer(), {"x": Box((3,), batch=True)})
    assert str(error).startswith("outer/inner.bad: JAX raised while tracing this API")
    assert "dot_general requires contracting dimensions" in str(error)  # original kept
    assert isinstance(error.__cause__, TypeError)
    assert error.component == "outer/inner" and error.api == "bad"


def test_state_write_with_other_shape_is_rejected():
    class Grows(mg.Component):
        @mg.api
        def f(self):
            value = self.get_state("v", jnp.zeros((2,)))
            self.set_state("v", jnp.zeros((3,)))
            return value

    error = build_error(Grows(), {})
    assert "grows.set_state('v'): expected float32[2], got float32[3]" in str(error)


def test_state_depending_on_batch_is_rejected():
    class BatchState(mg.Component):
        @mg.api
        def f(self, x):
            return self.get_state("h", lambda key: jnp.zeros_like(x))

    error = build_error(BatchState(), {"x": Box((3,), batch=True)})
    assert "batch_state: state 'h'" in str(error) and "fixed" in str(error)


def test_state_created_only_on_some_python_branch_is_an_error_at_run_time():
    class Branchy(mg.Component):
        use_state = False

        @mg.api
        def f(self, x):
            if self.use_state:
                return x + self.get_state("late", jnp.zeros(()))
            return x

    root = Branchy()
    # a batch dimension: init_state traces again (a concrete graph reuses mg.build's trace)
    graph = mg.build(root, {"x": Box((), batch=True)})
    root.use_state = True
    with pytest.raises(mg.StateError, match="branchy: state 'late' does not exist"):
        graph.pure("f")({}, jnp.zeros((2,)))
    with pytest.raises(mg.StateError, match="differs from the state recorded"):
        graph.init_state()
    with pytest.raises(mg.MetaGraphError, match="outside a graph"):
        Counter().get_state("x", 0)


def test_unknown_root_api_and_bad_input_space_type():
    with pytest.raises(mg.MetaGraphError, match="no API 'nope'"):
        mg.build(Agent(), {"obs": Box((4,), batch=True)}, apis=["nope"])
    with pytest.raises(mg.SpaceError, match="must be a Space"):
        mg.build(Agent(), {"obs": 4})


def test_key_space_flows():
    class Sampler(mg.Component):
        @mg.api
        def f(self, key):
            return jax.random.normal(key, (3,))

    graph = mg.build(Sampler(), {"key": PRNGKey()})
    assert str(graph.apis["f"].outputs) == "float32[3]"


def test_an_error_before_the_trace_still_draws_its_edge(tmp_path):
    error = build_error(Agent(), {})  # no input space for obs: nothing was traced yet
    text = error.draw(tmp_path / "missing.dot").read_text()
    assert 'input -> "agent.act"' in text and "#d62728" in text  # the red edge
    assert "expected an input space" in text and "got none given" in text


def test_an_input_check_error_of_an_executor_draws_its_edge(tmp_path):
    from backends import eager

    exe = eager.lower(mg.build(Agent(), {"obs": Box((4,), batch=True)}))
    with pytest.raises(mg.SpaceError) as info:
        exe.act(jnp.zeros((2, 5)))
    assert info.value.graph is None
    text = info.value.draw(tmp_path / "input.dot").read_text()
    assert 'input -> "agent.act"' in text and "got f32[B,5]" in text


def test_an_error_naming_no_api_says_why_it_cannot_draw(tmp_path):
    error = build_error(Agent(), {"obs": 4})
    with pytest.raises(mg.MetaGraphError, match="names no API, so there is no edge of the "
                                                "meta-graph to draw.*must be a Space"):
        error.draw(tmp_path / "none.dot")
