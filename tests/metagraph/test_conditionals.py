"""mg.cond threads component state through lax.cond: the branch taken writes the state (an
optimizer step equals the same step taken by a separate call), a skipped one leaves it as it
was and returns zeros; mismatched branches are a clear error."""

import numpy as np
import pytest
from toy_components import LeastSquares

import metagraph as mg
from metagraph.spaces import Box, Discrete
from metagraph.testing import BACKENDS, ComponentTest


class Fit(LeastSquares):
    @mg.api
    def update_if(self, x, y, flag):
        return mg.cond(flag == 1, lambda a, b: self.optimizer.step(a, b)["loss"], None, x, y)

    @mg.api
    def update_or_count(self, x, y, flag):
        def count(a, b):
            skipped = self.get_state("skipped", np.zeros((), np.int32))
            self.set_state("skipped", skipped + 1)
            return -np.ones((), np.float32)

        return mg.cond(flag == 1, lambda a, b: self.optimizer.step(a, b)["loss"], count, x, y)

    @mg.api
    def mismatched(self, x, y, flag):
        return mg.cond(flag == 1, lambda a, b: a.sum(), lambda a, b: (a.sum(), b.sum()), x, y)


SPACES = {"x": Box((16, 3)), "y": Box((16,)), "flag": Discrete(2)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_branch_taken_writes_the_state_a_skip_leaves_it(backend):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = rng.normal(size=(16,)).astype(np.float32)
    branched, single = (ComponentTest(Fit(), SPACES, backend=backend) for _ in range(2))
    before = branched.get_state("fit/model")["params"]["mlp/~/linear_0"]["w"]
    assert branched.test(("update_if", [x, y, np.int32(0)])) == 0.0
    np.testing.assert_array_equal(branched.get_state("fit/model")["params"]["mlp/~/linear_0"]
                                  ["w"], before)
    assert branched.get_state("fit/optimizer")["count"] == 0
    for _ in range(2):
        loss = branched.test(("update_if", [x, y, np.int32(1)]))
        np.testing.assert_allclose(loss, single.test(("update", [x, y])), rtol=1e-6)
    np.testing.assert_allclose(branched.get_state("fit/model")["params"]["mlp/~/linear_0"]["w"],
                               single.get_state("fit/model")["params"]["mlp/~/linear_0"]["w"],
                               rtol=1e-6)
    assert branched.get_state("fit/optimizer")["count"] == 2
    assert branched.test(("update_or_count", [x, y, np.int32(0)])) == -1.0
    assert branched.get_state("fit")["skipped"] == 1
    assert branched.get_state("fit/optimizer")["count"] == 2


def test_branches_of_different_outputs_and_use_outside_a_graph_are_refused():
    with pytest.raises(mg.MetaGraphError, match="mg.cond: both branches must return"):
        ComponentTest(Fit(), SPACES).test(("mismatched", [np.zeros((16, 3), np.float32),
                                                          np.zeros(16, np.float32),
                                                          np.int32(1)]))
    with pytest.raises(mg.MetaGraphError, match="outside a graph"):
        mg.cond(True, lambda: 1, None)
