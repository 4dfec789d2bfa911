"""Small components shared by the framework tests, each with an obvious NumPy reference."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

import metagraph as mg
from components.networks import MLP
from components.optimizer import Optimizer
from metagraph.spaces import Box


class Counter(mg.Component):
    """Counts its calls."""

    @mg.api
    def increment(self):
        count = self.get_state("count", jnp.zeros((), jnp.int32)) + 1
        self.set_state("count", count)
        return count


class RunningMean(mg.Component):
    """Tracks the mean of every row it has seen; returns its input centred by that mean."""

    @mg.api
    def update(self, x):
        count = self.get_state("count", jnp.zeros((), jnp.float32))
        mean = self.get_state("mean", lambda key: jnp.zeros(x.shape[-1:], jnp.float32))
        n = jnp.asarray(x.shape[0], jnp.float32)
        mean = mean + (x.mean(axis=0) - mean) * n / (count + n)
        self.set_state("count", count + n)
        self.set_state("mean", mean)
        return x - mean


class Linear(mg.Component):
    """y = x @ w + b with w ~ N(0, 1/d) drawn from the component's init key."""

    def __init__(self, units: int, name: str | None = None):
        super().__init__(name)
        self.units = units

    @mg.api
    def forward(self, x):
        d = x.shape[-1]
        w = self.get_param("w", lambda key: jax.random.normal(key, (d, self.units)) / np.sqrt(d))
        b = self.get_param("b", jnp.zeros((self.units,), jnp.float32))
        return x @ w + b


class Model(mg.Component):
    """Two levels: a stateful normaliser and a linear head inside a composite, with a counter."""

    def __init__(self, units: int = 3):
        self.norm = RunningMean()
        self.head = Linear(units)
        self.calls = Counter()

    @mg.api(inputs={"x": Box((4,), batch=True)})
    def predict(self, x):
        self.calls.increment()
        return self.head.forward(self.norm.update(x))

    @mg.api
    def sample(self, x, key):
        logits = self.head.forward(x)
        return jax.random.categorical(key, logits)


def numpy_model(xs, w, b):
    """NumPy reference of Model.predict over a sequence of batches."""
    total = np.zeros(w.shape[0], np.float64)
    count = 0
    outputs = []
    for x in xs:
        total += x.sum(axis=0)
        count += x.shape[0]
        outputs.append((x - total / count) @ w + b)
    return outputs


class LeastSquares(mg.Component):
    """A one-output MLP fitted by SGD: `update(x, y)` takes one optimizer step and returns its
    loss (the base of the loop and branch tests, which add APIs of their own)."""

    def __init__(self):
        self.model = MLP([1])
        self.optimizer = Optimizer(self, "loss", optax.sgd(0.1), wrt=self.model)

    @mg.api
    def loss(self, x, y):
        return ((self.model.forward(x)[:, 0] - y) ** 2).mean()

    @mg.api
    def update(self, x, y):
        return self.optimizer.step(x, y)["loss"]


class EnvironmentRoot(mg.Component):
    """A root over an environment: `start(key)` resets it; subclasses add how it acts."""

    def __init__(self, env):
        self.env = env

    @mg.api
    def start(self, key):
        return self.env.reset(key)


class Stepper(EnvironmentRoot):
    """Steps its environment with the actions it is given (no policy to keep them valid)."""

    @mg.api
    def act(self, action):
        return self.env.step(action).obs


class Roller(Stepper):
    """A `Stepper` whose `act` returns every output of the step (its `StepResult`)."""

    @mg.api
    def act(self, action):
        return self.env.step(action)
