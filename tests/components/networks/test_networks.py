"""Haiku networks as components compute what haiku computes with the same parameters; the
LSTM carries its recurrent state between calls and clears it per row."""

import haiku as hk
import jax
import numpy as np
import pytest

from components.networks import CNN, LSTM, MLP
from metagraph.spaces import Bool, Box
from metagraph.testing import BACKENDS, ComponentTest

rng = np.random.default_rng(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_is_haikus_mlp(backend):
    test = ComponentTest(MLP([16, 3]), {"x": Box((5,), batch=True)}, backend=backend)
    x = rng.normal(size=(4, 5)).astype(np.float32)
    params = test.get_state()["params"]
    ref = hk.without_apply_rng(hk.transform(
        lambda x: hk.nets.MLP([16, 3], activation=jax.nn.tanh)(x))).apply(params, x)
    test.test(("forward", x), expected_outputs=np.asarray(ref), decimals=5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cnn_scales_uint8_images_and_flattens(backend):
    test = ComponentTest(CNN(channels=(4,), output_size=8),
                         {"x": Box((8, 8, 3), batch=True, dtype=np.uint8)}, backend=backend)
    images = rng.integers(0, 256, (2, 8, 8, 3)).astype(np.uint8)
    out = test.test(("forward", images))
    assert out.shape == (2, 8)
    params = test.get_state()["params"]
    ref = hk.without_apply_rng(hk.transform(CNN(channels=(4,), output_size=8).network))
    np.testing.assert_allclose(out, ref.apply(params, images.astype(np.float32) / 255.0),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_carries_and_resets_its_state(backend):
    test = ComponentTest(LSTM(6, batch_size=3), {"x": Box((3, 2)), "mask": Bool((3,))},
                         backend=backend)
    xs = rng.normal(size=(4, 3, 2)).astype(np.float32)
    params = test.get_state()["params"]
    core = hk.without_apply_rng(hk.transform(lambda x, s: hk.LSTM(6)(x, s)))
    state = hk.LSTMState(np.zeros((3, 6), np.float32), np.zeros((3, 6), np.float32))
    for x in xs:
        expected, state = core.apply(params, x, state)
        test.test(("step", x), expected_outputs=np.asarray(expected), decimals=5)
    test.test(("reset", np.array([True, False, False])))
    hidden, cell = test.get_state()["recurrent"]
    assert (hidden[0] == 0).all() and (cell[0] == 0).all()
    np.testing.assert_allclose(hidden[1:], state.hidden[1:], rtol=1e-5)
