"""Returns, V-trace, TD errors and policy losses against rlax's own implementations (and NumPy
for the weighted NLL), on random time-major batches [T, B]."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax

from components import losses

T, B = 9, 5
rng = np.random.default_rng(0)
REWARDS = jnp.asarray(rng.normal(size=(T, B)), jnp.float32)
DISCOUNTS = jnp.asarray(0.97 * (rng.random((T, B)) > 0.15), jnp.float32)  # some episode ends
VALUES = jnp.asarray(rng.normal(size=(T + 1, B)), jnp.float32)


def columns(fn, *args, **kwargs):
    return jax.vmap(lambda *a: fn(*a, **kwargs), in_axes=1, out_axes=1)(*args)


def test_gae_matches_rlax():
    ours = losses.gae(REWARDS, DISCOUNTS, VALUES, lambda_=0.9)
    ref = columns(lambda r, d, v: rlax.truncated_generalized_advantage_estimation(r, d, 0.9, v),
                  REWARDS, DISCOUNTS, VALUES)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 3, 20])
def test_n_step_returns_match_rlax(n):
    bootstrap = VALUES[1:]
    ours = losses.n_step_returns(REWARDS, DISCOUNTS, bootstrap, n)
    ref = columns(lambda r, d, v: rlax.n_step_bootstrapped_returns(r, d, v, n),
                  REWARDS, DISCOUNTS, bootstrap)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_discounted_returns_are_infinite_step_returns():
    ours = losses.discounted_returns(REWARDS, DISCOUNTS, VALUES[-1])
    ref = columns(lambda r, d, v: rlax.n_step_bootstrapped_returns(r, d, v, T),
                  REWARDS, DISCOUNTS, jnp.broadcast_to(VALUES[-1], (T, B)))
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_vtrace_matches_rlax():
    log_rhos = jnp.asarray(rng.normal(scale=0.7, size=(T, B)), jnp.float32)
    vs, pg_adv = losses.vtrace(VALUES[:-1], VALUES[-1], REWARDS, DISCOUNTS, log_rhos)
    errors = columns(rlax.vtrace, VALUES[:-1], VALUES[1:], REWARDS, DISCOUNTS,
                     jnp.exp(log_rhos))
    np.testing.assert_allclose(vs - VALUES[:-1], errors, rtol=1e-4, atol=1e-5)
    out = columns(rlax.vtrace_td_error_and_advantage, VALUES[:-1], VALUES[1:], REWARDS,
                  DISCOUNTS, jnp.exp(log_rhos))
    np.testing.assert_allclose(pg_adv, out.pg_advantage, rtol=1e-4, atol=1e-5)


def test_q_learning_double_q_learning_and_huber_match_rlax():
    q_tm1, q_t, q_online = (jnp.asarray(rng.normal(size=(B, 4)), jnp.float32) for _ in range(3))
    a_tm1 = jnp.asarray(rng.integers(0, 4, B), jnp.int32)
    r, d = REWARDS[0], DISCOUNTS[0]
    np.testing.assert_allclose(losses.q_learning_td(q_tm1, a_tm1, r, d, q_t),
                               jax.vmap(rlax.q_learning)(q_tm1, a_tm1, r, d, q_t), rtol=1e-6)
    np.testing.assert_allclose(
        losses.double_q_learning_td(q_tm1, a_tm1, r, d, q_t, q_online),
        jax.vmap(rlax.double_q_learning)(q_tm1, a_tm1, r, d, q_t, q_online), rtol=1e-6)
    x = jnp.linspace(-3, 3, 41)
    np.testing.assert_allclose(losses.huber(x, 1.5), rlax.huber_loss(x, 1.5), rtol=1e-6)


def test_policy_losses_match_rlax_and_numpy():
    logits = jnp.asarray(rng.normal(size=(B, 3)), jnp.float32)
    actions = jnp.asarray(rng.integers(0, 3, B), jnp.int32)
    adv = REWARDS[0]
    log_probs = jnp.take_along_axis(jax.nn.log_softmax(logits), actions[:, None], 1)[:, 0]
    np.testing.assert_allclose(losses.policy_gradient(log_probs, adv),
                               rlax.policy_gradient_loss(logits, actions, adv, jnp.ones(B)),
                               rtol=1e-5)
    old = log_probs + jnp.asarray(rng.normal(scale=0.3, size=B), jnp.float32)
    np.testing.assert_allclose(losses.ppo_clipped_surrogate(log_probs, old, adv, 0.2),
                               rlax.clipped_surrogate_pg_loss(jnp.exp(log_probs - old), adv, 0.2),
                               rtol=1e-5)
    w = np.array([0.1, 0.2, 0.3, 0.4, 0.0])
    per_step = rng.normal(size=(B, 7))
    np.testing.assert_allclose(losses.weighted_nll(jnp.asarray(per_step), jnp.asarray(w)),
                               -(w * per_step.sum(1)).sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="must match"):
        losses.weighted_nll(jnp.zeros(4), jnp.zeros(5))


def test_value_loss_clipping_follows_ppo():
    values, targets, old = jnp.array([1.0, 2.0]), jnp.array([0.0, 0.0]), jnp.array([0.5, 0.5])
    np.testing.assert_allclose(losses.value_loss(values, targets), 0.5 * (1 + 4) / 2)
    clipped = np.maximum([1.0, 4.0], np.array([0.7, 0.7]) ** 2)
    np.testing.assert_allclose(losses.value_loss(values, targets, old, clip=0.2),
                               0.5 * clipped.mean(), rtol=1e-6)


def test_misaligned_inputs_are_clear_errors_not_broadcasts():
    with pytest.raises(ValueError, match=r"gae: values must have shape \(10, 5\)"):
        losses.gae(REWARDS, DISCOUNTS, VALUES[:-1])
    with pytest.raises(ValueError, match="vtrace: expected equal shapes"):
        losses.vtrace(VALUES[:-1], VALUES[-1], REWARDS, DISCOUNTS, jnp.zeros((T, 1)))
    with pytest.raises(ValueError, match="bootstrap_value must have shape"):
        losses.vtrace(VALUES[:-1], VALUES[-1, :2], REWARDS, DISCOUNTS, jnp.zeros((T, B)))
    with pytest.raises(ValueError, match="q_learning_td: expected equal shapes"):
        losses.q_learning_td(jnp.zeros((B, 4)), jnp.zeros(B, jnp.int32), jnp.zeros(B),
                             jnp.zeros(1), jnp.zeros((B, 4)))
    with pytest.raises(ValueError, match="ppo_clipped_surrogate: expected equal shapes"):
        losses.ppo_clipped_surrogate(jnp.zeros(B), jnp.zeros(B), jnp.zeros((B, 1)))
    with pytest.raises(ValueError, match="value_loss"):
        losses.value_loss(jnp.zeros(B), jnp.zeros(1))
    with pytest.raises(ValueError, match="n_step_returns: expected equal shapes"):
        losses.n_step_returns(REWARDS, DISCOUNTS, VALUES, 2)


@pytest.mark.parametrize("n", [1, 3, 20])
def test_n_step_terms_that_stop_at_episode_ends_match_rlax_per_episode(n):
    """`n_step_terms(..., stops=done)`: a window ends at an episode's end; a terminated one
    adds nothing after it (discount 0), a truncated one bootstraps from its final state
    (discount gamma). The reference: rlax's n-step returns of each episode alone, with
    the value of the state after each step."""
    gen = np.random.default_rng(3)
    terminated = gen.random((T, B)) < 0.15
    truncated = ~terminated & (gen.random((T, B)) < 0.15)
    discounts = 0.97 * (1.0 - terminated)
    after = gen.normal(size=(T, B)).astype(np.float32)  # V(the state after each step)
    reward_sum, discount, last = losses.n_step_terms(REWARDS, jnp.asarray(discounts), n,
                                                     stops=jnp.asarray(terminated | truncated))
    ours = np.asarray(reward_sum) + np.asarray(discount) * np.take_along_axis(
        after, np.asarray(last), 0)
    for b in range(B):
        start = 0
        for end in [*np.flatnonzero(terminated[:, b] | truncated[:, b]), T - 1]:
            if end < start:
                continue
            segment = slice(start, end + 1)
            want = rlax.n_step_bootstrapped_returns(
                REWARDS[segment, b], jnp.asarray(discounts[segment, b], jnp.float32),
                jnp.asarray(after[segment, b]), n)
            np.testing.assert_allclose(ours[segment, b], want, rtol=1e-5, atol=1e-5)
            start = end + 1
