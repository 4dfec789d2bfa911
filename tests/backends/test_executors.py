"""The XLA and eager executors: same outputs, state threading, state access, input checks."""

import jax
import numpy as np
import pytest
from toy_components import Counter, numpy_model

import metagraph as mg
from metagraph.spaces import Box
from metagraph.testing import ComponentTest

RNG = np.random.default_rng(1)
BATCHES = [RNG.normal(size=(n, 4)).astype(np.float32) for n in (3, 3, 6)]


def test_xla_and_eager_give_the_same_outputs_and_state(model_xla, model_eager, fresh):
    xla_exe, eager_exe = fresh(model_xla), fresh(model_eager)
    for x in BATCHES:
        np.testing.assert_allclose(xla_exe.predict(x), eager_exe.predict(x), rtol=1e-5,
                                   atol=1e-6)
    key = jax.random.PRNGKey(7)
    np.testing.assert_array_equal(xla_exe.sample(BATCHES[0], key),
                                  eager_exe.sample(BATCHES[0], key))
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5),
                 xla_exe.get_state(), eager_exe.get_state())


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_both_backends_match_numpy(backend, model_xla, model_eager, fresh):
    exe = fresh(model_xla if backend == "xla" else model_eager)
    head = exe.get_state("model/head")
    expected = numpy_model(BATCHES, head["w"], head["b"])
    for x, want in zip(BATCHES, expected, strict=True):
        np.testing.assert_allclose(exe.predict(x), want, rtol=1e-5, atol=1e-5)
    assert exe.get_state("model/calls")["count"] == 3


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_counter_called_three_times_reads_three(backend):
    test = ComponentTest(Counter(), {}, backend=backend)
    for expected in (1, 2, 3):
        test.test(("increment", None), expected_outputs=np.int32(expected))
    assert test.get_state()["count"] == 3


def test_set_state_drives_outputs(model_xla, fresh):
    exe = fresh(model_xla)
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    exe.set_state({"w": w, "b": np.ones(3, np.float32)}, "model/head")
    x = BATCHES[0]
    np.testing.assert_allclose(exe.predict(x), (x - x.mean(0)) @ w + 1, rtol=1e-5, atol=1e-4)
    with pytest.raises(mg.SpaceError, match="model/head.set_state"):
        exe.set_state({"w": np.zeros((4, 2), np.float32), "b": np.ones(3, np.float32)},
                      "model/head")
    with pytest.raises(mg.StateError, match="no component 'model/nope'"):
        exe.get_state("model/nope")


def test_one_executable_per_input_signature(model_xla):
    executable = model_xla.executables["predict"]
    for n in (2, 2, 9):
        model_xla.predict(np.zeros((n, 4), np.float32))
    shapes = {sig[0][0] for sig in executable.signatures}
    assert {(2, 4), (9, 4)} <= shapes
    assert len([s for s in shapes if s == (2, 4)]) == 1
    assert "stablehlo" in executable.as_text() or "func.func" in executable.as_text()
    assert executable.cost_analysis()["flops"] > 0


def test_compiler_options_reach_xla(model_graph):
    from backends import xla

    with pytest.raises(ValueError, match="No such compile option: 'xla_not_an_option'"):
        xla.lower(model_graph, compiler_options={"xla_not_an_option": True})
    with pytest.raises(ValueError, match="not a valid bool"):
        xla.lower(model_graph, compiler_options={"xla_cpu_enable_fast_math": "maybe"})
    plain = xla.lower(model_graph)
    tuned = xla.lower(model_graph, compiler_options={"xla_backend_optimization_level": 1,
                                                     "xla_cpu_enable_fast_math": False})
    for x in BATCHES[:2]:
        np.testing.assert_allclose(plain.predict(x), tuned.predict(x), rtol=1e-6, atol=1e-6)


def test_call_inputs_are_checked(model_xla):
    x = BATCHES[0]
    with pytest.raises(mg.SpaceError, match=r"model.predict\(x\): expected float32\[B,4\], got "
                                            r"float64\[B,4\]; cast"):
        model_xla.predict(x.astype(np.float64))
    with pytest.raises(mg.SpaceError, match=r"expected float32\[B,4\], got float32\[B,3\]"):
        model_xla.predict(x[:, :3])
    with pytest.raises(mg.SpaceError, match="missing inputs"):
        model_xla.predict()
    with pytest.raises(mg.SpaceError, match="unexpected input 'y'"):
        model_xla.predict(x=x, y=x)
    with pytest.raises(mg.SpaceError, match="not a list"):
        model_xla.predict([[0.0] * 4])
    with pytest.raises(AttributeError, match="no attribute or API 'nope'"):
        model_xla.nope(x)


def test_batch_sizes_must_agree():
    from backends import xla

    class Add(mg.Component):
        @mg.api
        def f(self, a, b):
            return a + b

    graph = mg.build(Add(), {"a": Box((2,), batch=True), "b": Box((2,), batch=True)})
    exe = xla.lower(graph)
    with pytest.raises(mg.SpaceError, match="disagree on the B dimension: a has 3, b has 4"):
        exe.f(np.zeros((3, 2), np.float32), np.zeros((4, 2), np.float32))


def test_states_of_a_component_and_everything_inside_it(model_xla, fresh):
    exe, other = fresh(model_xla), fresh(model_xla)
    states = exe.get_states("model")
    assert set(states) == set(exe.state)  # the root holds every component
    head = {"w": np.full((4, 3), 2.0, np.float32), "b": np.zeros(3, np.float32)}
    exe.set_state(head, "model/head")
    other.set_states(exe.get_states("model/head"))
    np.testing.assert_array_equal(other.get_state("model/head")["w"], head["w"])
    with pytest.raises(mg.StateError, match="no state in or below component 'nothing'"):
        exe.get_states("nothing")


def test_precompiled_apis_compile_in_the_background_and_run_the_same(model_graph):
    from backends import xla

    with pytest.raises(ValueError, match="precompile names 'nope', which is not a root API"):
        xla.lower(model_graph, precompile=("nope",))
    exe = xla.lower(model_graph, compiler_options={"xla_cpu_enable_fast_math": False},
                    precompile=("predict",))
    executable = exe.executables["predict"]
    assert executable.signatures == [(((1, 4), np.dtype(np.float32)),)]  # batch size 1
    x = BATCHES[0][:1]
    plain = xla.lower(model_graph, compiler_options={"xla_cpu_enable_fast_math": False})
    np.testing.assert_array_equal(exe.predict(x), plain.predict(x))
    assert "0 compiling" in repr(executable)  # the call took the background compile


def named_apis(*names):
    """A component whose root APIs have the given names, each returning x + 1."""

    def make(name):
        def method(self, x):
            return x + 1.0

        method.__name__ = method.__qualname__ = name
        return mg.api(method)

    return type("Named", (mg.Component,), {name: make(name) for name in names})()


@pytest.mark.parametrize("backend", ["xla", "eager"])
@pytest.mark.parametrize("api", ["state", "graph", "get_state", "call", "set_states",
                                 "save_checkpoint", "_run"])
def test_an_api_named_like_an_executor_attribute_is_refused(backend, api):
    from backends import eager, xla

    graph = mg.build(named_apis("act", api), {"x": Box((2,), batch=True)})
    lower = xla.lower if backend == "xla" else eager.lower
    with pytest.raises(mg.MetaGraphError, match=rf"named \(Named\): root API '{api}' has the "
                                                rf"name of an attribute of \w+Executor "
                                                rf"\(exe.{api}\).*rename the API.*'get_state'"):
        lower(graph)


def test_backend_attributes_are_reserved_by_their_backend_only():
    from backends import eager, xla

    graph = mg.build(named_apis("act", "executables"), {"x": Box((2,), batch=True)})
    with pytest.raises(mg.MetaGraphError, match="root API 'executables'"):
        xla.lower(graph)
    assert "executables" in xla.XlaExecutor.reserved_names()
    exe = eager.lower(graph)
    x = np.zeros((3, 2), np.float32)
    np.testing.assert_array_equal(exe.executables(x), x + 1)


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_apis_are_plain_attributes_of_the_executor(backend, model_xla, model_eager, fresh):
    exe = fresh(model_xla if backend == "xla" else model_eager)
    assert "predict" in vars(exe)  # bound once, no __getattr__ per call
    x = BATCHES[0]
    np.testing.assert_array_equal(exe.predict(x), fresh(exe).call("predict", x))
    assert isinstance(exe.state, dict) and exe.graph.root.name == "model"


def test_the_fast_path_refuses_what_the_checked_path_refuses(model_xla, fresh, monkeypatch):
    """Repeated calls with the same signature skip the input checker (the compiled executable
    checks shapes itself); everything the checker refuses is still refused, with the state
    kept, and a new signature is checked and compiled as before. The outputs follow the
    NumPy reference through fast and checked calls alike."""
    from backends.inputs import InputChecker

    checked = []
    check = InputChecker.__call__
    monkeypatch.setattr(InputChecker, "__call__",
                        lambda self, *a: checked.append(1) or check(self, *a))
    exe = fresh(model_xla)
    head = exe.get_state("model/head")
    xs = [RNG.normal(size=(n, 4)).astype(np.float32) for n in (2, 2, 2, 5, 5, 2)]
    expected = numpy_model(xs, head["w"], head["b"])
    bad = [xs[0].astype(np.float64),                 # NumPy would be cast by XLA silently
           jax.numpy.asarray(xs[0], jax.numpy.int32),
           np.ones((2, 5), np.float32), [[0.0] * 4] * 2]
    outputs = []
    for i, x in enumerate(xs):
        outputs.append(exe.predict(jax.numpy.asarray(x) if i % 2 else x))
        if i == 1:  # the fast path is taken from the second call on
            for value in bad:
                with pytest.raises(mg.SpaceError):
                    exe.predict(value)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert exe.get_state("model/calls")["count"] == len(xs)  # refused calls changed nothing
    # checked: the first call, the four refused ones, and each change of batch size (5, 2)
    assert len(checked) == 1 + len(bad) + 2


def test_get_state_of_a_component_gives_its_subtree_when_asked(model_xla, fresh):
    exe = fresh(model_xla)
    subtree = exe.get_state("model", recursive=True)
    assert set(subtree) == {"model/norm", "model/head", "model/calls"}
    np.testing.assert_array_equal(subtree["model/head"]["w"], exe.get_state("model/head")["w"])
    assert list(exe.get_state("model/head", recursive=True)) == ["model/head"]
    with pytest.raises(mg.StateError, match="has no state"):
        exe.get_state("model")  # its own entries: none


class CheckedCounter(Counter):
    """A user's component that refuses a count no call could have made."""

    def check_state(self, state):
        if state["count"] < 0:
            raise ValueError(f"count must be >= 0 (it counts calls), got {state['count']}")


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_a_components_own_state_check_refuses_state_set_from_outside(backend, tmp_path):
    test = ComponentTest(CheckedCounter(), {}, backend=backend)
    exe = test.executor
    exe.increment()
    with pytest.raises(mg.SpaceError, match=r"checked_counter.set_state: count must be >= 0 "
                                            r"\(it counts calls\), got -5"):
        exe.set_state({"count": np.int32(-5)}, "checked_counter")
    assert exe.get_state("checked_counter")["count"] == 1  # unchanged
    exe.save_checkpoint(tmp_path / "ok.npz")
    exe.set_state({"checked_counter": {"count": np.int32(7)}})  # the whole state, checked too
    assert exe.get_state("checked_counter")["count"] == 7
    exe.load_checkpoint(tmp_path / "ok.npz")
    assert exe.get_state("checked_counter")["count"] == 1
