"""mg.scan threads component state through lax.scan: K optimizer steps inside one executable
equal K separate calls, under both executors."""

import numpy as np
import pytest
from toy_components import LeastSquares

import metagraph as mg
from metagraph.spaces import Box
from metagraph.testing import BACKENDS, ComponentTest


class Fit(LeastSquares):
    @mg.api
    def update_many(self, xs, ys):
        def body(count, batch):
            return count + 1, self.optimizer.step(*batch)["loss"]

        return mg.scan(body, 0, (xs, ys))


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_inside_a_scan_equal_separate_calls(backend):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(5, 16, 3)).astype(np.float32)
    ys = rng.normal(size=(5, 16)).astype(np.float32)
    spaces = {"x": Box((16, 3)), "y": Box((16,)), "xs": Box((5, 16, 3)), "ys": Box((5, 16))}
    looped, single = (ComponentTest(Fit(), spaces, backend=backend) for _ in range(2))
    count, losses = looped.test(("update_many", [xs, ys]))
    assert count == 5
    expected = [single.test(("update", [x, y])) for x, y in zip(xs, ys, strict=True)]
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    np.testing.assert_allclose(looped.get_state("fit/model")["params"]["mlp/~/linear_0"]["w"],
                               single.get_state("fit/model")["params"]["mlp/~/linear_0"]["w"],
                               rtol=1e-5)
    assert looped.get_state("fit/optimizer")["count"] == 5
