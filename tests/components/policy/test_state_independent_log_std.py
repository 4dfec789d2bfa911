"""`Policy(log_std="parameter")`: one learned log standard deviation per action dimension,
the same for every state, starting at `log_std_init`; its log-probabilities and entropies
equal SciPy's normal distribution's; orthogonal initialisation reaches the policy's MLPs; a
Discrete space refuses the mode."""

import jax
import numpy as np
import pytest
from scipy import stats

from components.policy import Policy
from metagraph.spaces import Box, Discrete, PRNGKey
from metagraph.testing import ComponentTest

DIM = 3
OBS = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)


@pytest.fixture(scope="module")
def policy_test():
    policy = Policy(Box((DIM,), low=-1.0, high=1.0), hidden=(16, 16), squash=False,
                    log_std="parameter", log_std_init=-0.5, orthogonal=True)
    return ComponentTest(policy, {"obs": Box((5,), batch=True), "key": PRNGKey(),
                                  "action": Box((DIM,), batch=True)},
                         apis=["distribution_params", "sample_action", "log_prob", "entropy"])


def test_log_std_is_one_parameter_for_every_state(policy_test):
    params = policy_test.test(("distribution_params", OBS))
    assert params.shape == (7, 2 * DIM)
    np.testing.assert_array_equal(params[:, DIM:], np.full((7, DIM), -0.5, np.float32))
    log_std = policy_test.get_state()["log_std"]
    np.testing.assert_array_equal(log_std, np.full(DIM, -0.5, np.float32))


def test_log_prob_and_entropy_equal_scipy(policy_test):
    params = policy_test.test(("distribution_params", OBS))
    mean, std = params[:, :DIM], np.exp(params[:, DIM:])
    action, log_prob = policy_test.test(("sample_action",
                                         [OBS, np.asarray(jax.random.PRNGKey(3))]))
    expected = stats.norm(mean, std).logpdf(action).sum(-1)
    np.testing.assert_allclose(log_prob, expected, rtol=1e-5, atol=1e-5)
    other = np.random.default_rng(1).normal(size=(7, DIM)).astype(np.float32)
    np.testing.assert_allclose(policy_test.test(("log_prob", [OBS, other])),
                               stats.norm(mean, std).logpdf(other).sum(-1), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(policy_test.test(("entropy", OBS)),
                               stats.norm(mean, std).entropy().sum(-1), rtol=1e-5)


def test_orthogonal_initialisation_reaches_the_heads(policy_test):
    scope = policy_test.graph.scopes.of(policy_test.component.action_head)
    (layer,) = policy_test.get_state(scope)["params"].values()
    head = np.asarray(layer["w"], np.float64)
    # an orthogonal [16, 3] matrix with gain 0.01 has orthonormal columns scaled by 0.01
    assert head.shape == (16, DIM)
    np.testing.assert_allclose(head.T @ head, 1e-4 * np.eye(DIM), atol=1e-9)


def test_discrete_space_refuses_a_state_independent_log_std():
    with pytest.raises(ValueError, match="log_std='parameter' needs a Box action space"):
        Policy(Discrete(2), log_std="parameter")
    with pytest.raises(ValueError, match="log_std must be one of"):
        Policy(Box((2,)), log_std="fixed")
