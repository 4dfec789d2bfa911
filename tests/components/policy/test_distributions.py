"""Action distributions against SciPy/NumPy formulas: log-probabilities, entropies, KL; the
squashed Gaussian's density (change of variables) integrates to one inside its bounds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from components.policy import Categorical, DiagGaussian, distribution_for
from metagraph.spaces import Box, Discrete

rng = np.random.default_rng(0)


def test_categorical_matches_numpy():
    logits = rng.normal(size=(6, 4)).astype(np.float32)
    actions = rng.integers(0, 4, 6).astype(np.int32)
    dist = Categorical(4)
    p = special.softmax(logits, -1)
    np.testing.assert_allclose(dist.log_prob(logits, actions), np.log(p[np.arange(6), actions]),
                               rtol=1e-5)
    np.testing.assert_allclose(dist.entropy(logits), stats.entropy(p, axis=-1), rtol=1e-5)
    other = rng.normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_allclose(dist.kl(logits, other),
                               stats.entropy(p, special.softmax(other, -1), axis=-1), rtol=1e-4)
    np.testing.assert_array_equal(dist.mode(logits), logits.argmax(-1))
    draws = dist.sample(jnp.tile(logits[:1], (20000, 1)), jax.random.PRNGKey(0))
    counts = np.bincount(np.asarray(draws), minlength=4)
    probabilities = p[0].astype(np.float64)
    expected = probabilities / probabilities.sum() * counts.sum()
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_gaussian_matches_scipy():
    params = rng.normal(size=(5, 4)).astype(np.float32)  # 2-d mean and log std
    mean, log_std = params[:, :2], params[:, 2:]
    actions = rng.normal(size=(5, 2)).astype(np.float32)
    dist = DiagGaussian(2)
    np.testing.assert_allclose(dist.log_prob(params, actions),
                               stats.norm.logpdf(actions, mean, np.exp(log_std)).sum(-1),
                               rtol=1e-5)
    np.testing.assert_allclose(dist.entropy(params),
                               stats.norm.entropy(mean, np.exp(log_std)).sum(-1), rtol=1e-5)
    other = rng.normal(size=(5, 4)).astype(np.float32)
    m2, s2 = other[:, :2], np.exp(other[:, 2:])
    s1 = np.exp(log_std)
    kl = (np.log(s2 / s1) + (s1**2 + (mean - m2) ** 2) / (2 * s2**2) - 0.5).sum(-1)
    np.testing.assert_allclose(dist.kl(params, other), kl, rtol=1e-4, atol=1e-6)


def test_squashed_gaussian_density_and_bounds():
    dist = DiagGaussian(1, (-2.0,), (2.0,), squash=True)
    params = np.array([0.3, -0.2], np.float32)

    grid = np.linspace(-2, 2, 200_001)[1:-1]
    density = np.exp(np.asarray(dist.log_prob(params, grid[:, None].astype(np.float32)),
                                np.float64))
    assert integrate.trapezoid(density, grid) == pytest.approx(1.0, abs=2e-3)
    u = 0.7
    a = 2.0 * np.tanh(u)
    expected = stats.norm.logpdf(u, 0.3, np.exp(-0.2)) - np.log(2.0 * (1 - np.tanh(u) ** 2))
    assert float(dist.log_prob(params, np.array([a], np.float32))) == pytest.approx(expected,
                                                                                  rel=1e-4)
    samples = dist.sample(jnp.tile(params, (1000, 1)), jax.random.PRNGKey(1))
    assert (np.abs(np.asarray(samples)) <= 2.0).all()


def test_distribution_from_the_action_space():
    assert distribution_for(Discrete(3)) == Categorical(3)
    squashed = distribution_for(Box((2,), low=-1.0, high=1.0))
    assert squashed.squash and squashed.dim == 2
    assert not distribution_for(Box((1,))).squash  # unbounded: plain Gaussian
    with pytest.raises(TypeError, match="no action distribution"):
        distribution_for(object())
    with pytest.raises(ValueError, match="must have one axis"):
        distribution_for(Box((2, 2)))
