"""Policy under both executors: its APIs agree with the distribution applied to its own
parameters, greedy actions are the modes, KL of a policy with itself is zero, the value head
has one output per row; bad observations are SpaceErrors naming the policy."""

import jax
import numpy as np
import pytest

import metagraph as mg
from components.policy import Policy
from metagraph.spaces import Box, Discrete, PRNGKey
from metagraph.testing import BACKENDS, ComponentTest

OBS = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
SPACES = {"obs": Box((4,), batch=True), "key": PRNGKey(), "action": Discrete(2, batch=True),
          "old_params": Box((2,), batch=True)}


@pytest.fixture(scope="module", params=BACKENDS)
def policy_test(request):
    return ComponentTest(Policy(Discrete(2), hidden=(16,), value="shared"), SPACES,
                         backend=request.param)


def test_apis_agree_with_the_distribution(policy_test):
    dist = policy_test.component.distribution
    params = policy_test.test(("distribution_params", OBS))
    assert params.shape == (6, 2)
    action, log_prob = policy_test.test(("sample_action", [OBS, np.asarray(jax.random.PRNGKey(0))]))
    np.testing.assert_allclose(log_prob, dist.log_prob(params, action), rtol=1e-5)
    policy_test.test(("log_prob", [OBS, action]), expected_outputs=log_prob, decimals=5)
    policy_test.test(("greedy_action", OBS), expected_outputs=params.argmax(-1))
    policy_test.test(("entropy", OBS), expected_outputs=dist.entropy(params), decimals=5)
    policy_test.test(("kl", [OBS, params]), expected_outputs=np.zeros(6), decimals=5)
    assert policy_test.test(("value", OBS)).shape == (6,)
    evaluated = policy_test.test(("evaluate", [OBS, action]))
    np.testing.assert_allclose(evaluated["log_prob"], log_prob, rtol=1e-5)
    np.testing.assert_allclose(evaluated["entropy"], dist.entropy(params), rtol=1e-5)
    np.testing.assert_allclose(evaluated["value"], policy_test.test(("value", OBS)), rtol=1e-5)


def test_evaluate_passes_a_shared_torso_once():
    """PPO's loss evaluates log-probabilities and values together: with value="shared" the
    torso runs once, so its gradient is taken once (two passes took a CNN's twice)."""
    graph = mg.build(Policy(Discrete(2), hidden=(16,), value="shared"), SPACES,
                     apis=["evaluate"])
    state = graph.init_state(0)
    jaxpr = jax.make_jaxpr(graph.pure("evaluate"))(state, OBS, np.zeros(6, np.int32))
    products = str(jaxpr).count("dot_general")
    assert products == 3  # the torso's layer, the action head, the value head


class Sharpened(Policy):
    """A user's policy that changes `distribution_params` alone (its logits doubled)."""

    @mg.api(polymorphic=True)
    def distribution_params(self, obs):
        return 2.0 * self._distribution_params(obs)


def test_a_subclass_that_changes_an_api_alone_is_evaluated_through_it():
    test = ComponentTest(Sharpened(Discrete(2), hidden=(16,), value="shared"), SPACES,
                         apis=["evaluate", "log_prob", "value"])
    action = np.array([0, 1, 1, 0, 1, 0], np.int32)
    evaluated = test.test(("evaluate", [OBS, action]))
    np.testing.assert_allclose(evaluated["log_prob"], test.test(("log_prob", [OBS, action])),
                               rtol=1e-5)
    np.testing.assert_allclose(evaluated["value"], test.test(("value", OBS)), rtol=1e-5)


def test_continuous_policy_stays_in_bounds():
    test = ComponentTest(Policy(Box((1,), low=-2.0, high=2.0), hidden=(8,)),
                         {"obs": Box((3,), batch=True), "key": PRNGKey()},
                         apis=["sample_action", "greedy_action"])
    action, log_prob = test.test(("sample_action", [np.ones((50, 3), np.float32),
                                                    np.asarray(jax.random.PRNGKey(2))]))
    assert action.shape == (50, 1) and (np.abs(action) <= 2).all()
    assert np.isfinite(log_prob).all()


def test_wrong_observation_is_a_space_error():
    with pytest.raises(mg.SpaceError, match="policy"):
        mg.build(Policy(Discrete(2)), {"obs": Box((4,), dtype=np.int32, batch=True),
                                       "key": PRNGKey()}, apis=["sample_action"])
    with pytest.raises(ValueError, match="value must be one of"):
        Policy(Discrete(2), value="both")
