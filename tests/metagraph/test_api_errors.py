"""Errors raised inside an API: the user's own keep their type and traceback (with a note
naming the component and API), JAX's shape errors become SpaceError, Python that cannot run
on traced values becomes a TraceError naming the fix, under both executors."""

import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import metagraph as mg
from metagraph.spaces import Box

SPACES = {"x": Box((3,), batch=True)}


class RewardTooLarge(Exception):
    """A user's own exception type."""


class Inner(mg.Component):
    """Its `f` misbehaves in the way `mode` says (set after the build to fail at run time)."""

    def __init__(self, mode: str = "ok"):
        self.mode = mode

    @mg.api
    def f(self, x):
        if self.mode == "user":
            raise RewardTooLarge("reward above the configured maximum")
        if self.mode == "value":
            raise ValueError("a value error of the user's own")
        if self.mode == "if" and x.sum() > 0:  # a Python `if` on a traced value
            return x
        if self.mode == "numpy":
            return np.asarray(x) + 1
        if self.mode == "batch" and x.shape[0] > 3:  # a comparison of the symbolic batch
            return x[:3]
        if self.mode == "keep" and not self.initializing:
            self.last = x  # an array kept on self between calls
        return x * 2.0


class Outer(mg.Component):
    def __init__(self, mode: str = "ok"):
        self.inner = Inner(mode)

    @mg.api
    def f(self, x):
        return self.inner.f(x) + 1.0


def lower(graph, backend):
    from backends import eager, xla

    return xla.lower(graph) if backend == "xla" else eager.lower(graph)


def test_a_users_exception_keeps_its_type_traceback_and_gets_a_note():
    with pytest.raises(RewardTooLarge, match="reward above the configured maximum") as info:
        mg.build(Outer("user"), SPACES)
    notes = info.value.__notes__
    assert [n for n in notes if n.startswith("metagraph:")] == [
        "metagraph: raised inside outer/inner.f (component 'outer/inner', API 'f'), called "
        "from outer.f"]  # one note, from the innermost API
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "f" and "raise RewardTooLarge" in frames[-1].line


def test_a_users_value_error_is_not_a_space_error():
    with pytest.raises(ValueError, match="a value error of the user's own") as info:
        mg.build(Outer("value"), SPACES)
    assert not isinstance(info.value, mg.SpaceError)
    assert any("outer/inner.f" in note for note in info.value.__notes__)


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_a_users_exception_at_run_time_under_both_executors(backend):
    root = Outer()
    exe = lower(mg.build(root, SPACES), backend)
    root.inner.mode = "user"  # the next trace (XLA) or run (eager) raises
    with pytest.raises(RewardTooLarge) as info:
        exe.f(np.ones((2, 3), np.float32))
    assert any("outer/inner.f" in note for note in info.value.__notes__)


def test_jax_shape_errors_are_space_errors():
    class Mismatch(mg.Component):
        @mg.api
        def f(self, x):
            return x @ jnp.ones((5, 2))

    with pytest.raises(mg.SpaceError, match=r"mismatch.f: JAX raised while tracing") as info:
        mg.build(Mismatch(), SPACES)
    assert isinstance(info.value.__cause__, TypeError)


def test_an_if_on_a_traced_value_names_the_fix():
    with pytest.raises(mg.TraceError) as info:
        mg.build(Outer("if"), SPACES)
    text = str(info.value)
    assert text.startswith("outer/inner.f: Python control flow on a traced value "
                           "(TracerBoolConversionError)")
    assert "jnp.where(condition, a, b)" in text and "mg.cond(pred, true_fn, false_fn" in text
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value.__cause__, jax.errors.TracerBoolConversionError)
    assert (info.value.component, info.value.api) == ("outer/inner", "f")


def test_numpy_on_a_traced_value_names_the_fix():
    with pytest.raises(mg.TraceError, match=r"outer/inner.f: a traced array was converted to "
                                            r"NumPy.*jax.numpy function instead"):
        mg.build(Outer("numpy"), SPACES)


def test_a_comparison_of_the_symbolic_batch_names_batch_size():
    with pytest.raises(mg.TraceError, match=r"outer/inner.f: a shape computation on the "
                                            r"symbolic batch.*mg.build\(\.\.\., batch_size=n\)"
                       ) as info:
        mg.build(Outer("batch"), SPACES)
    assert isinstance(info.value.__cause__, jax.errors.InconclusiveDimensionOperation)
    graph = mg.build(Outer("batch"), SPACES, batch_size=5)  # the fix it names
    assert str(graph.apis["f"].outputs) == "float32[3,3]"


KEPT = (r"outer/inner.f: stored a JAX array on self.last; a component keeps no arrays between "
        r"calls .* self.get_state\('last', init\)")


def test_an_array_kept_on_self_fails_the_build():
    class Keeps(mg.Component):
        @mg.api
        def f(self, x):
            previous = getattr(self, "previous", None)
            self.previous = x
            return x if previous is None else x + previous

    component = Keeps()
    with pytest.raises(mg.TraceError, match=r"keeps.f: stored a JAX array on self.previous"):
        mg.build(component, SPACES)
    assert not hasattr(component, "previous")  # put back as it was: no leaked tracer


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_an_array_kept_on_self_is_the_same_error_under_both_executors(backend):
    root = Outer("keep")  # keeps it only after the state is created: the build passes
    exe = lower(mg.build(root, SPACES), backend)
    with pytest.raises(mg.TraceError, match=KEPT):
        exe.f(np.ones((2, 3), np.float32))
    assert not hasattr(root.inner, "last")


def test_a_constant_made_in_init_is_allowed():
    from backends import eager, xla

    class Scaled(mg.Component):
        def __init__(self):
            self.scale = jnp.arange(3.0)  # made once, never written by an API

        @mg.api
        def f(self, x):
            return x * self.scale

    graph = mg.build(Scaled(), SPACES)
    x = np.ones((2, 3), np.float32)
    for exe in (xla.lower(graph), eager.lower(graph)):
        np.testing.assert_array_equal(exe.f(x), x * np.arange(3.0))
