"""PathReweighting under both executors equals the pure functions; invalid scores are flagged
inside the program; quality functions score whole paths."""

import jax
import numpy as np
import pytest

import metagraph as mg
from components import reweighting as rw
from components.reweighting import PathReweighting, quality
from metagraph.spaces import Box, PRNGKey
from metagraph.testing import BACKENDS, ComponentTest


@pytest.mark.parametrize("backend", BACKENDS)
def test_component_matches_the_pure_functions(backend):
    test = ComponentTest(PathReweighting("proportional", strict=False),
                         {"q": Box((6,)), "key": PRNGKey()}, backend=backend)
    q = np.array([1.0, 2.0, 0.0, 4.0, 1.0, 0.5], np.float32)
    w = rw.weights(q, "proportional")
    test.test(("reweight", q), expected_outputs={
        "weights": w, "bits": rw.information_bits(w), "ess": rw.effective_sample_size(w),
        "valid": True}, decimals=5)
    bad = test.test(("reweight", np.array([1, -1, 0, 0, 0, 0], np.float32)))
    assert not bad["valid"] and np.allclose(bad["weights"], 1 / 6)
    indices = test.test(("resample", [q, np.asarray(jax.random.PRNGKey(0))]))
    assert indices.shape == (6,) and 2 not in indices  # a zero-weight path is never drawn


def test_strict_reweighting_raises_after_the_call():
    test = ComponentTest(PathReweighting("proportional"), {"q": Box((3,))}, apis=["reweight"])
    with pytest.raises(mg.RuntimeCheckError, match=r"path_reweighting: quality scores must be "
                                                   r"finite and >= 0"):
        test.test(("reweight", np.array([1.0, np.nan, 2.0], np.float32)))
    assert test.test(("reweight", np.array([1.0, 1.0, 2.0], np.float32)))["valid"]


def test_quality_functions_score_whole_paths():
    rewards = np.array([[1.0, 1.0, 1.0, 9.0], [2.0, 0.0, 0.0, 0.0]])
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.float32)
    np.testing.assert_allclose(quality.path_return(rewards, mask), [3.0, 2.0])
    np.testing.assert_allclose(quality.path_return(rewards, mask, gamma=0.5), [1.75, 2.0])
    heights = np.array([[0.1, 0.5, 0.2, 0.9], [-0.3, -0.1, 0.7, 0.7]])
    np.testing.assert_allclose(quality.max_over_path(heights, mask), [0.5, -0.1])
    np.testing.assert_allclose(quality.final_value(heights, mask), [0.2, -0.1])
    flags = np.array([[0, 0, 0, 1], [0, 1, 0, 0]])
    np.testing.assert_allclose(quality.success(flags, mask), [0.0, 1.0])
