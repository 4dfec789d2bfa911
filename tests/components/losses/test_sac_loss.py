"""SAC's loss terms against NumPy/SciPy re-derivations (Haarnoja et al. 2018) and distrax:
the tanh-squashed Gaussian's log-probability (also where tanh saturates), the soft Bellman
target with the minimum of the twin target critics, the critic, actor and temperature losses,
the Polyak update; shape errors name the function. (`SACLoss` as a whole is exercised by
tests/components/agents/test_sac_agent.py: without its temperature term, plain SGD leaves
log α where it was, so the critic and actor terms do not reach it.)"""

import distrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from components.losses import (
    polyak_average,
    sac_actor_loss,
    soft_q_loss,
    soft_q_target,
    temperature_loss,
)
from components.policy import DiagGaussian

rng = np.random.default_rng(0)
B, K = 7, 2


def test_squashed_gaussian_log_prob_matches_scipy_and_distrax():
    low, high = np.array([-2.0, -1.0, 0.0]), np.array([2.0, 1.0, 3.0])
    dist = DiagGaussian(3, tuple(low), tuple(high), squash=True)
    mean = rng.normal(size=(B, 3)) * 2.0
    mean[0] = [9.0, -9.0, 12.0]  # tanh saturates in float32
    log_std = rng.uniform(-2.0, 0.5, (B, 3))
    params = np.concatenate([mean, log_std], -1).astype(np.float32)
    key = jax.random.PRNGKey(3)
    action, log_prob = dist.sample_and_log_prob(params, key)
    # the Gaussian sample the draw started from (the same draw of standard normals)
    u = params[:, :3].astype(np.float64) + np.exp(params[:, 3:].astype(np.float64)) * \
        np.asarray(jax.random.normal(key, (B, 3)), np.float64)
    half, mid = (high - low) / 2, (high + low) / 2
    np.testing.assert_allclose(action, mid + half * np.tanh(u), rtol=1e-5, atol=1e-5)
    expected = (stats.norm.logpdf(u, params[:, :3], np.exp(params[:, 3:]))
                - np.log(half * (1.0 - np.tanh(u) ** 2))).sum(-1)
    np.testing.assert_allclose(log_prob, expected, rtol=1e-4, atol=1e-3)
    # distrax's tanh bijector (in [-1, 1]), shifted by the scale's log-Jacobian
    squashed = distrax.Transformed(
        distrax.MultivariateNormalDiag(params[:, :3], np.exp(params[:, 3:])),
        distrax.Block(distrax.Tanh(), 1))
    ok = np.abs(u).max(-1) < 5  # distrax recovers u by arctanh: exact only off saturation
    by_distrax = np.asarray(squashed.log_prob(np.tanh(u).astype(np.float32))) \
        - np.log(half).sum()
    np.testing.assert_allclose(np.asarray(log_prob)[ok], by_distrax[ok], rtol=1e-4, atol=1e-3)
    assert np.isfinite(log_prob).all()


def test_the_squashed_sample_is_reparameterised():
    dist = DiagGaussian(1, (-2.0,), (2.0,), squash=True)
    key = jax.random.PRNGKey(0)
    noise = float(jax.random.normal(key, (1,))[0])

    def action_of(mean):
        return dist.sample_and_log_prob(jnp.stack([mean, -0.5])[None], key)[0][0, 0]

    grad = jax.grad(action_of)(0.3)
    u = 0.3 + np.exp(-0.5) * noise
    assert float(grad) == pytest.approx(2.0 * (1.0 - np.tanh(u) ** 2), rel=1e-5)


def test_an_unsquashed_sample_keeps_its_log_prob():
    dist = DiagGaussian(2)
    params = rng.normal(size=(B, 4)).astype(np.float32)
    action, log_prob = dist.sample_and_log_prob(params, jax.random.PRNGKey(1))
    np.testing.assert_array_equal(action, dist.sample(params, jax.random.PRNGKey(1)))
    np.testing.assert_allclose(log_prob, dist.log_prob(params, action), rtol=1e-6)


def batch():
    return (rng.normal(size=B).astype(np.float32),                       # reward
            (0.99 * (rng.random(B) > 0.3)).astype(np.float32),            # discount
            rng.normal(size=(B, K)).astype(np.float32),                   # target Q [B, k]
            rng.normal(size=B).astype(np.float32))                        # next log-prob


def test_soft_q_target_uses_the_smaller_critic_and_the_entropy_bonus():
    reward, discount, next_q, next_log_prob = batch()
    alpha = 0.37
    expected = np.array([reward[b] + discount[b] * (min(next_q[b]) - alpha * next_log_prob[b])
                         for b in range(B)])
    np.testing.assert_allclose(soft_q_target(reward, discount, next_q, next_log_prob, alpha),
                               expected, rtol=1e-5)
    grad = jax.grad(lambda q: soft_q_target(reward, discount, q, next_log_prob, alpha).sum())
    np.testing.assert_array_equal(grad(next_q), 0.0)  # a target: no gradient


def test_critic_actor_and_temperature_losses_match_numpy():
    q = rng.normal(size=(B, K)).astype(np.float32)
    target = rng.normal(size=B).astype(np.float32)
    # Stable-Baselines3: 0.5 * sum over critics of F.mse_loss(current_q, target_q)
    expected = 0.5 * sum(np.mean((q[:, k] - target) ** 2) for k in range(K))
    assert float(soft_q_loss(q, target)) == pytest.approx(expected, rel=1e-5)

    log_prob = rng.normal(size=B).astype(np.float32)
    alpha = 0.2
    expected = np.mean(alpha * log_prob - q.min(-1))
    assert float(sac_actor_loss(q, log_prob, alpha)) == pytest.approx(expected, rel=1e-5)
    # the actor's gradient reaches the log-probabilities with weight alpha / B
    grad = jax.grad(lambda lp: sac_actor_loss(q, lp, alpha))(log_prob)
    np.testing.assert_allclose(grad, np.full(B, alpha / B), rtol=1e-6)

    log_alpha, entropy_target = np.float32(np.log(0.5)), -3.0
    expected = -np.mean(log_alpha * (log_prob + entropy_target))
    assert float(temperature_loss(log_alpha, log_prob, entropy_target)) == \
        pytest.approx(expected, rel=1e-5)
    # d/d log α = -(mean log π + H̄): α shrinks while the entropy exceeds the target
    grad = jax.grad(temperature_loss)(log_alpha, log_prob, entropy_target)
    assert float(grad) == pytest.approx(-(log_prob.mean() + entropy_target), rel=1e-5)
    np.testing.assert_array_equal(
        jax.grad(temperature_loss, 1)(log_alpha, log_prob, entropy_target), 0.0)


def test_polyak_average_matches_numpy():
    online = {"a": {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}}
    target = {"a": {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}}
    out = polyak_average(online, target, 0.005)
    for name in ("w", "b"):
        np.testing.assert_allclose(out["a"][name], 0.005 * online["a"][name]
                                   + 0.995 * target["a"][name], rtol=1e-12)
    with pytest.raises(ValueError, match="polyak_average: online and target"):
        polyak_average(online, {"a": {"w": target["a"]["w"]}}, 0.005)


def test_shape_errors_name_the_function():
    reward, discount, next_q, next_log_prob = batch()
    with pytest.raises(ValueError, match=r"soft_q_target: expected equal shapes"):
        soft_q_target(reward[:3], discount, next_q, next_log_prob, 0.1)
    with pytest.raises(ValueError, match=r"soft_q_loss: Q-values must be \[B, critics\]"):
        soft_q_loss(next_q[:, 0], reward)
    with pytest.raises(ValueError, match=r"sac_actor_loss: expected equal shapes"):
        sac_actor_loss(next_q, next_log_prob[:2], 0.1)
    with pytest.raises(ValueError, match="temperature_loss: log_alpha must be a scalar"):
        temperature_loss(np.zeros(2, np.float32), next_log_prob, -1.0)
