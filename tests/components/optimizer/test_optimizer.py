"""The Optimizer component takes the same steps as the same optax chain run by hand (gradient
clipping and a learning-rate schedule included), on the parameter arrays or on them flattened
into one vector, and counts them."""

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import metagraph as mg
from components.networks import MLP
from components.optimizer import Optimizer
from metagraph.spaces import Box
from metagraph.testing import BACKENDS, ComponentTest

SCHEDULE = optax.linear_schedule(0.05, 0.01, transition_steps=4)


def transform():
    return optax.adam(SCHEDULE)


class Fit(mg.Component):
    """Least squares of a small MLP, minimised by its optimizer."""

    def __init__(self, flat: bool = False):
        self.model = MLP([8, 1])
        self.optimizer = Optimizer(self, "loss", transform(), max_grad_norm=0.5, wrt=self.model,
                                   flat=flat)

    @mg.api
    def loss(self, x, y):
        return ((self.model.forward(x)[:, 0] - y) ** 2).mean()

    @mg.api
    def update(self, x, y):
        return self.optimizer.step(x, y)

    @mg.api
    def steps(self):
        return self.optimizer.steps()


@pytest.mark.parametrize("backend,flat", [(backend, False) for backend in BACKENDS]
                         + [(BACKENDS[0], True)])
def test_steps_equal_optax_by_hand(backend, flat):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + 3.0).astype(np.float32)
    test = ComponentTest(Fit(flat), {"x": Box((3,), batch=True), "y": Box((), batch=True)},
                         backend=backend)
    params = test.get_state("fit/model")["params"]

    mlp = hk.without_apply_rng(hk.transform(lambda x: hk.nets.MLP([8, 1],
                                                                  activation=jax.nn.tanh)(x)))
    chain = optax.chain(optax.clip_by_global_norm(0.5), transform())
    opt_state = chain.init(params)

    def loss(p):
        return ((mlp.apply(p, x)[:, 0] - y) ** 2).mean()

    for step in range(1, 6):
        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = chain.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        out = test.test(("update", [x, y]))
        assert out["step"] == step
        np.testing.assert_allclose(out["loss"], value, rtol=1e-5)
        np.testing.assert_allclose(out["grad_norm"], optax.tree.norm(grads), rtol=1e-5)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6),
                 test.get_state("fit/model")["params"], params)
    assert test.test(("steps", None)) == 5


def test_optimizer_refuses_bad_configuration():
    model = MLP([1])
    with pytest.raises(TypeError, match="GradientTransformation"):
        Optimizer(model, "forward", "adam")
    with pytest.raises(ValueError, match="max_grad_norm"):
        Optimizer(model, "forward", optax.sgd(0.1), max_grad_norm=-1.0)
    with pytest.raises(TypeError, match="target must be a Component"):
        Optimizer(jnp.zeros(3), "forward", optax.sgd(0.1))
