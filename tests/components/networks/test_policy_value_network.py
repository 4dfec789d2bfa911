"""`PolicyValueNetwork` alone (ComponentTest on every backend): both torsos give logits [B, A]
and values in [-1, 1], the MLP torso equals haiku's MLP with the two heads written out by
hand, and bad sizes are refused."""

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.networks import PolicyValueNetwork
from metagraph.spaces import Box
from metagraph.testing import BACKENDS, ComponentTest

PLANES = np.random.default_rng(0).integers(0, 2, (5, 6, 7, 2)).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_torso_is_haikus_mlp_with_two_heads(backend):
    test = ComponentTest(PolicyValueNetwork(7, hidden=(16, 8)),
                         {"x": Box((6, 7, 2), batch=True)}, backend=backend)
    logits, value = test.test(("forward", PLANES))
    params = test.get_state()["params"]

    def reference(x):
        h = hk.nets.MLP([16, 8], activate_final=True)(x.reshape(x.shape[0], -1))
        return hk.Linear(7, name="policy")(h), jnp.tanh(hk.Linear(1, name="value")(h))[:, 0]

    expected = hk.without_apply_rng(hk.transform(reference)).apply(params, PLANES)
    np.testing.assert_allclose(logits, expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value, expected[1], rtol=1e-5, atol=1e-6)


def test_residual_torso_shapes():
    net = PolicyValueNetwork(7, torso="residual", hidden=(16,), channels=4, blocks=2)
    params = net.transformed.init(jax.random.PRNGKey(0), PLANES)
    logits, value = net.forward_with(params, PLANES)
    assert logits.shape == (5, 7) and value.shape == (5,)
    assert (np.abs(value) <= 1).all()
    assert sum("conv" in name for name in params) == 5  # the stem and 2 blocks of 2


@pytest.mark.parametrize("kwargs, message", [
    ({"torso": "cnn"}, "torso must be one of"), ({"hidden": ()}, "positive ints"),
    ({"channels": 0}, "positive ints"), ({"blocks": -1}, "blocks an int >= 0"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PolicyValueNetwork(7, **kwargs)
