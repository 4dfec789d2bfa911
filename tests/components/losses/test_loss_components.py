"""The loss components, each over a linked policy (or Q-network) in a small graph, under both
executors: their totals equal the same losses computed by rlax (returns, V-trace, TD errors,
surrogates) and NumPy from the policy's own outputs."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax

import metagraph as mg
from components import losses
from components.networks import MLP
from components.policy import Policy
from metagraph.spaces import Bool, Box, Discrete
from metagraph.testing import BACKENDS, ComponentTest

T, B = 6, 4
rng = np.random.default_rng(0)
OBS = rng.normal(size=(T, B, 3)).astype(np.float32)
ACTION = rng.integers(0, 2, (T, B)).astype(np.int32)
REWARD = rng.normal(size=(T, B)).astype(np.float32)
TERMINATED = rng.random((T, B)) < 0.2
LAST_OBS = rng.normal(size=(B, 3)).astype(np.float32)
NOISE = rng.normal(scale=0.3, size=(T, B)).astype(np.float32)
SPACES = {"obs": Box((T, B, 3)), "action": Discrete(2, shape=(T, B)), "reward": Box((T, B)),
          "terminated": Bool((T, B)), "last_obs": Box((B, 3)), "old_log_prob": Box((T, B)),
          "advantage": Box((T, B)), "target_value": Box((T, B)), "old_value": Box((T, B)),
          "behaviour_log_prob": Box((T, B)), "mask": Box((T, B)), "weight": Box((T,))}


def harness(loss_class, network, **config):
    """A root holding `network` and `loss_class(network)`; its `loss` API has the loss's own
    signature, and `net_*` APIs expose the network for the reference."""

    class Harness(mg.Component):
        def __init__(self):
            self.network = network
            self.objective = loss_class(network, **config)

        @mg.api
        def evaluate(self, obs, action):
            return self.network.evaluate(obs, action)

        @mg.api
        def value(self, last_obs):
            return self.network.value(last_obs)

        @mg.api
        def q(self, obs):
            return self.network.forward(obs)

    def loss(self, *args, **kwargs):
        return self.objective.loss(*args, **kwargs)

    loss.__signature__ = inspect.signature(loss_class.loss)
    loss.__name__ = "loss"
    Harness.loss = mg.api(loss)
    return Harness()


def policy_test(loss_class, backend, **config):
    root = harness(loss_class, Policy(Discrete(2), hidden=(8,)), **config)
    apis = ["loss", "evaluate", "value"]
    return ComponentTest(root, SPACES, backend=backend, apis=apis)


def columns(fn, *args):
    return jax.vmap(fn, in_axes=1, out_axes=1)(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_actor_critic_loss(backend):
    test = policy_test(losses.ActorCriticLoss, backend, gamma=0.9, lambda_=0.8)
    total, stats = test.test(("loss", [OBS, ACTION, REWARD, TERMINATED, LAST_OBS]))
    out = test.test(("evaluate", [OBS, ACTION]))
    values = np.concatenate([out["value"], test.test(("value", LAST_OBS))[None]])
    discounts = 0.9 * (1 - TERMINATED.astype(np.float32))
    adv = columns(lambda r, d, v: rlax.truncated_generalized_advantage_estimation(r, d, 0.8, v),
                  REWARD, discounts, values)
    policy_term = -(out["log_prob"] * adv).mean()
    value_term = 0.5 * ((out["value"] - (adv + values[:-1])) ** 2).mean()
    expected = policy_term + 0.5 * value_term - 0.01 * out["entropy"].mean()
    np.testing.assert_allclose(total, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(stats["value"], value_term, rtol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ppo_loss(backend):
    test = policy_test(losses.PPOLoss, backend, clip=0.2, value_clip=0.3)
    out = test.test(("evaluate", [OBS, ACTION]))
    old_log_prob = out["log_prob"] + NOISE
    old_value = out["value"] + NOISE
    total, stats = test.test(("loss", [OBS, ACTION, old_log_prob, REWARD, REWARD, old_value]))
    surrogate = rlax.clipped_surrogate_pg_loss(np.exp(out["log_prob"] - old_log_prob).ravel(),
                                               REWARD.ravel(), 0.2)
    clipped_value = old_value + np.clip(out["value"] - old_value, -0.3, 0.3)
    value_term = 0.5 * np.maximum((out["value"] - REWARD) ** 2,
                                  (clipped_value - REWARD) ** 2).mean()
    expected = surrogate + 0.5 * value_term - 0.01 * out["entropy"].mean()
    np.testing.assert_allclose(total, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("clip_ratio", [None, 0.2])
def test_vtrace_loss(backend, clip_ratio):
    test = policy_test(losses.VTraceLoss, backend, gamma=0.9, clip_ratio=clip_ratio)
    out = test.test(("evaluate", [OBS, ACTION]))
    behaviour = out["log_prob"] + NOISE
    total, stats = test.test(("loss", [OBS, ACTION, REWARD, TERMINATED, behaviour, LAST_OBS]))
    values_next = np.concatenate([out["value"][1:], test.test(("value", LAST_OBS))[None]])
    discounts = 0.9 * (1 - TERMINATED.astype(np.float32))
    ref = columns(rlax.vtrace_td_error_and_advantage, out["value"], values_next, REWARD,
                  discounts, np.exp(out["log_prob"] - behaviour))
    policy_term = (-(out["log_prob"] * ref.pg_advantage).mean() if clip_ratio is None else
                   rlax.clipped_surrogate_pg_loss(np.exp(out["log_prob"] - behaviour).ravel(),
                                                  ref.pg_advantage.ravel(), clip_ratio))
    expected = (policy_term + 0.5 * 0.5 * (ref.errors**2).mean()
                - 0.01 * out["entropy"].mean())
    np.testing.assert_allclose(total, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_weighted_nll_loss(backend):
    test = policy_test(losses.WeightedNLLLoss, backend)
    mask = (rng.random((T, B)) < 0.8).astype(np.float32)
    weight = np.array([0.1, 0.3, 0.0, 0.2, 0.15, 0.25], np.float32)
    total, stats = test.test(("loss", [OBS, ACTION, mask, weight]))
    log_prob = test.test(("evaluate", [OBS, ACTION]))["log_prob"]
    np.testing.assert_allclose(total, -(weight * (log_prob * mask).sum(1)).sum(), rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("double,delta", [(True, 0.5), (False, 0.5), (False, None)])
def test_dqn_loss(backend, double, delta):
    root = harness(losses.DQNLoss, MLP([8, 2]), double=double, huber_delta=delta)
    spaces = {"obs": Box((B, 3)), "action": Discrete(2, shape=(B,)), "reward": Box((B,)),
              "discount": Box((B,)), "next_obs": Box((B, 3)), "target_q_next": Box((B, 2)),
              "weight": Box((B,))}
    test = ComponentTest(root, spaces, backend=backend, apis=["loss", "q"])
    obs, next_obs = OBS[0], OBS[1]
    target_q = rng.normal(size=(B, 2)).astype(np.float32)
    weight = np.array([1.0, 0.5, 0.25, 1.0], np.float32)
    total, stats = test.test(("loss", [obs, ACTION[0], REWARD[0], np.full(B, 0.9, np.float32),
                                       next_obs, target_q, weight]))
    q, q_next = test.test(("q", obs)), test.test(("q", next_obs))
    discount = jnp.full(B, 0.9)
    td = (jax.vmap(rlax.double_q_learning)(q, ACTION[0], REWARD[0], discount, target_q, q_next)
          if double else jax.vmap(rlax.q_learning)(q, ACTION[0], REWARD[0], discount, target_q))
    np.testing.assert_allclose(stats["td_error"], np.abs(td), rtol=1e-5)
    penalty = rlax.l2_loss(td) if delta is None else rlax.huber_loss(td, delta)
    np.testing.assert_allclose(total, (weight * penalty).mean(), rtol=1e-5)
