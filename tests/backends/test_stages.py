"""Executors as stages: an executable's `lower` gives JAX's `Lowered` (it compiles), `compile`
its `Compiled` (it runs); seeds and data parallelism are transformations of the graph's pure
functions applied before lowering (`backends.xla.transforms`), so a user's own transformation
lowers through the same door; the private C++ dispatch is used only on the JAX versions it is
known on, with the public call as the tested fallback."""

import jax
import numpy as np
import pytest

from backends import xla
from backends.xla import executor as xla_executor

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_lower_gives_a_lowered_stage_and_compile_a_compiled_one(model_xla, fresh):
    exe = fresh(model_xla)
    executable = exe.executables["predict"]
    lowered = executable.lower(3)
    assert isinstance(lowered, jax.stages.Lowered)
    compiled = executable.compile(3)
    assert isinstance(compiled, jax.stages.Compiled)
    assert executable.compile(3) is compiled  # compiled once per signature
    # the compiled stage runs: (state, x) -> (state', outputs), as the executor calls it
    _, out = compiled(jax.tree.map(np.array, exe.state), X)
    np.testing.assert_allclose(out, exe.predict(X), rtol=1e-6)


def test_seeds_is_a_transformation_applied_before_lowering(model_graph):
    short = xla.lower(model_graph, seeds=2)
    long = xla.lower(model_graph, transform=xla.Seeds(2))
    assert short.seeds == long.seeds == 2 and short.data_parallel is None
    x = np.stack([X, X + 1])
    np.testing.assert_array_equal(short.predict(x), long.predict(x))
    with pytest.raises(ValueError, match="cannot be combined"):
        xla.lower(model_graph, seeds=2, transform=xla.Seeds(2))
    with pytest.raises(TypeError, match="transform must be a backends.xla.Transform"):
        xla.lower(model_graph, transform=jax.vmap)


class Doubled(xla.Transform):
    """A user's transformation: every output of the graph's function doubled."""

    def pure(self, fn):
        def doubled(state, *inputs):
            state, out = fn(state, *inputs)
            return state, jax.tree.map(lambda y: 2 * y, out)

        return doubled


def test_a_users_transformation_lowers_through_the_same_door(model_graph, model_xla, fresh):
    plain = fresh(model_xla).predict(X)
    doubled = xla.lower(model_graph, transform=Doubled())
    np.testing.assert_allclose(doubled.predict(X), 2 * plain, rtol=1e-6)
    assert "Doubled" in repr(doubled.transform)


def test_the_private_dispatch_only_on_known_jax_versions(model_graph, monkeypatch):
    exe = xla.lower(model_graph)
    exe.predict(X)  # a checked call arms the fast path with the compiled executable
    compiled = exe.executables["predict"].last_compiled()
    low, high = xla_executor.PRIVATE_DISPATCH_VERSIONS
    assert low <= jax.__version_info__[:2] < high, (
        f"JAX {jax.__version__} is outside the versions whose Compiled._call is known: check "
        f"that Compiled.__call__ still only forwards to _call, then widen "
        f"PRIVATE_DISPATCH_VERSIONS")
    assert xla_executor._dispatch(compiled) is compiled._call
    assert xla_executor._dispatch(compiled, (high[0], high[1], 0)) is compiled
    # the fallback runs the same program: an executor on an "unknown" JAX
    monkeypatch.setattr(xla_executor, "PRIVATE_DISPATCH_VERSIONS", ((0, 0), (0, 1)))
    fallback = xla.lower(model_graph)
    for _ in range(3):  # the first call is checked, the next ones take the fast path
        np.testing.assert_array_equal(fallback.predict(X), exe.predict(X))
