"""ComponentTest builds one component alone and compares outputs; a wrong expectation fails."""

import numpy as np
import pytest
from toy_components import Linear, Model

from metagraph.spaces import Box
from metagraph.testing import BACKENDS, ComponentTest


@pytest.mark.parametrize("backend", BACKENDS)
def test_linear_component_alone_against_numpy(backend):
    test = ComponentTest(Linear(2), {"x": Box((3,), batch=True)}, backend=backend)
    params = test.get_state()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    test.test(("forward", x), expected_outputs=x @ params["w"] + params["b"], decimals=5)
    test.set_state({"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)})
    test.test(("forward", [x]), expected_outputs=np.repeat(x.sum(1, keepdims=True), 2, 1))
    with pytest.raises(AssertionError, match="linear.forward"):
        test.test(("forward", x), expected_outputs=np.zeros((2, 2), np.float32))


def test_nested_state_is_reachable_by_path():
    test = ComponentTest(Model(), {"x": Box((4,), batch=True)}, apis=["predict"],
                         backend="eager")
    test.test(("predict", np.ones((2, 4), np.float32)))
    np.testing.assert_array_equal(test.get_state("model/norm")["mean"], np.ones(4))
