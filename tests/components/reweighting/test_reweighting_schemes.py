"""The reweighting maths against NumPy/SciPy written independently, with the edge cases the
algorithm relies on: all-equal scores reveal 0 bits, one dominant path log2 N bits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from components import reweighting as rw

Q = np.random.default_rng(0).normal(size=(3, 50)) * 4


def reference_weights(q, scheme, temperature=1.0, fraction=0.1):
    if scheme == "proportional":
        return q / q.sum(-1, keepdims=True)
    if scheme == "exponential":
        return special.softmax(q / temperature, axis=-1)
    if scheme == "elite":
        k = max(1, int(np.ceil(fraction * q.shape[-1])))
        out = []
        for row in q:
            cut = np.sort(row)[::-1][k - 1]
            chosen = (row >= cut).astype(float)
            out.append(chosen / chosen.sum())
        return np.array(out)
    ranks = stats.rankdata(q, axis=-1)  # average ranks for ties
    return ranks / ranks.sum(-1, keepdims=True)


@pytest.mark.parametrize("scheme", rw.SCHEMES)
@pytest.mark.parametrize("as_jax", [False, True])
def test_weights_match_the_reference(scheme, as_jax):
    q = np.abs(Q) if scheme == "proportional" else Q
    kwargs = {"temperature": 2.5} if scheme == "exponential" else {}
    kwargs.update({"fraction": 0.2} if scheme == "elite" else {})
    w = rw.weights(jnp.asarray(q) if as_jax else q, scheme, **kwargs)
    assert isinstance(w, jax.Array) == as_jax
    expected = reference_weights(q, scheme, **kwargs)
    np.testing.assert_allclose(np.asarray(w), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(w).sum(-1), 1.0, rtol=1e-6)
    # bits and effective sample size, from their definitions
    bits = np.sum(np.where(expected > 0, expected * np.log2(50 * np.where(expected > 0,
                                                                          expected, 1)), 0), -1)
    np.testing.assert_allclose(np.asarray(rw.information_bits(w)), bits, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(rw.effective_sample_size(w)),
                               1 / (expected**2).sum(-1), rtol=1e-4)


def test_exponential_is_stable_for_huge_scores():
    w = rw.weights(np.array([1e6, 1e6 - 1.0, -1e6]), "exponential")
    np.testing.assert_allclose(w, special.softmax([1.0, 0.0, -2e6]), rtol=1e-12)


@pytest.mark.parametrize("scheme", rw.SCHEMES)
def test_all_equal_scores_reveal_nothing(scheme):
    w = rw.weights(np.full(16, 3.0), scheme)
    np.testing.assert_allclose(w, 1 / 16)
    assert abs(rw.information_bits(w)) < 1e-12
    assert rw.effective_sample_size(w) == pytest.approx(16)


@pytest.mark.parametrize("scheme,kwargs", [("proportional", {}), ("exponential", {}),
                                           ("elite", {"fraction": 1 / 32})])
def test_one_dominant_path_reveals_log2_n_bits(scheme, kwargs):
    q = np.zeros(32)
    q[7] = 1e4 if scheme == "exponential" else 1.0
    w = rw.weights(q, scheme, **kwargs)
    assert w[7] == pytest.approx(1.0)
    assert rw.information_bits(w) == pytest.approx(5.0)
    assert rw.effective_sample_size(w) == pytest.approx(1.0)


def test_bad_scores_are_clear_errors():
    with pytest.raises(ValueError, match="proportional.*≥ 0"):
        rw.weights(np.array([1.0, -0.5, 2.0]), "proportional")
    with pytest.raises(ValueError, match="must be finite"):
        rw.weights(np.array([1.0, np.nan]), "proportional")
    with pytest.raises(ValueError, match="must be finite"):
        rw.weights(jnp.array([1.0, jnp.inf]), "exponential")
    with pytest.raises(ValueError, match="scheme must be one of"):
        rw.weights(np.ones(3), "softmax")
    with pytest.raises(ValueError, match="temperature"):
        rw.weights(np.ones(3), "exponential", temperature=0.0)


@pytest.mark.parametrize("method", ["systematic", "multinomial"])
def test_resampling_frequencies_follow_the_weights(method):
    w = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625])
    draws = np.asarray(rw.resample(jax.random.PRNGKey(0), jnp.tile(w, (2000, 1)),
                                   num_samples=40, method=method)).ravel()
    counts = np.bincount(draws, minlength=5)
    assert stats.chisquare(counts, w * draws.size).pvalue > 1e-3
    if method == "systematic":  # low variance: each row holds ⌊40 w⌋ or ⌈40 w⌉ copies
        rows = np.asarray(rw.resample(jax.random.PRNGKey(1), jnp.tile(w, (50, 1)), 40))
        for row in rows:
            assert (np.abs(np.bincount(row, minlength=5) - 40 * w) < 1).all()


def test_information_decomposes_over_steps():
    rng = np.random.default_rng(1)
    w = rw.weights(rng.normal(size=8), "exponential")
    log_ratios = rng.normal(size=(8, 5))
    per_step = rw.information_per_step(w, log_ratios)
    np.testing.assert_allclose(per_step, (w[:, None] * log_ratios).sum(0))
    np.testing.assert_allclose(per_step.sum(), np.sum(w * log_ratios.sum(1)))


def test_bad_weights_and_sample_counts_are_clear_errors():
    with pytest.raises(ValueError, match="information_bits: weights must be finite and >= 0"):
        rw.information_bits(np.array([0.5, -0.5, 1.0]))
    with pytest.raises(ValueError, match="effective_sample_size"):
        rw.effective_sample_size(np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="num_samples must be a positive int"):
        rw.resample(jax.random.PRNGKey(0), jnp.ones(4) / 4, num_samples=0)
