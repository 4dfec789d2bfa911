"""`MLP(orthogonal=(gain, output_gain))`: every weight matrix is orthogonal up to its gain
(W^T W = gain^2 I for a tall matrix, W W^T for a wide one, checked with NumPy), biases start at
zero; without the option the MLP is haiku's `hk.nets.MLP` itself (same parameters)."""

import haiku as hk
import jax
import numpy as np
import pytest

from components.networks import MLP
from metagraph.spaces import Box
from metagraph.testing import ComponentTest

X = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)


def _weights(state):
    params = state["params"]
    return [params[name] for name in sorted(params, key=lambda n: int(n.rsplit("_", 1)[1]))]


def test_orthogonal_weights_have_their_gains():
    test = ComponentTest(MLP([32, 8, 2], orthogonal=(np.sqrt(2), 0.01)),
                         {"x": Box((6,), batch=True)})
    out = test.test(("forward", X))
    assert out.shape == (4, 2)
    layers = _weights(test.get_state())
    for layer, gain in zip(layers, [np.sqrt(2), np.sqrt(2), 0.01], strict=True):
        w = np.asarray(layer["w"], np.float64)
        gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
        np.testing.assert_allclose(gram, gain**2 * np.eye(len(gram)), atol=1e-5 * gain**2)
        np.testing.assert_array_equal(layer["b"], 0.0)
    # the forward pass is the plain tanh MLP of those weights (NumPy)
    h = X.astype(np.float64)
    for i, layer in enumerate(layers):
        h = h @ np.asarray(layer["w"], np.float64) + np.asarray(layer["b"], np.float64)
        h = np.tanh(h) if i < len(layers) - 1 else h
    np.testing.assert_allclose(out, h, rtol=1e-4, atol=1e-6)


def test_default_is_haikus_mlp():
    test = ComponentTest(MLP([5, 3]), {"x": Box((6,), batch=True)})
    test.test(("forward", X))
    reference = hk.without_apply_rng(hk.transform(lambda x: hk.nets.MLP([5, 3])(x)))
    expected = reference.init(jax.random.PRNGKey(0), X)
    assert jax.tree.map(np.shape, test.get_state()["params"]) == jax.tree.map(np.shape, expected)


def test_bad_gains_are_refused():
    with pytest.raises(ValueError, match=r"orthogonal must be \(gain, output_gain\)"):
        MLP([4], orthogonal=(1.0,))
    with pytest.raises(ValueError, match=r"orthogonal must be \(gain, output_gain\)"):
        MLP([4], orthogonal=(1.0, 0.0))
