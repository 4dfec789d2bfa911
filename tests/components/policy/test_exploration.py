"""`explore_legal`: with probability p a uniformly random legal move in place of the chosen
one, counted against the expected frequencies (NumPy)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from components.policy import explore_legal

LEGAL = np.array([[True, False, True, True, False],    # legal: 0, 2, 3
                  [False, False, False, False, True]])  # legal: 4 only


def frequencies(probability: float, draws: int = 20000) -> np.ndarray:
    """How often each (row, move) was played over `draws` keys, the chosen move being 2 and 4."""
    chosen = np.array([2, 4], np.int32)
    explore = jax.jit(jax.vmap(lambda key: explore_legal(key, chosen, LEGAL, probability)))
    moves = np.asarray(explore(jax.random.split(jax.random.PRNGKey(0), draws)))
    assert moves.dtype == np.int32
    return np.stack([np.bincount(moves[:, row], minlength=5) / draws for row in range(2)])


def test_a_random_legal_move_with_the_probability():
    seen = frequencies(0.3)
    # row 0: the chosen 2 kept w.p. 0.7, else uniform over {0, 2, 3}
    expected = np.array([[0.1, 0.0, 0.8, 0.1, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]])
    np.testing.assert_allclose(seen, expected, atol=0.015)


def test_never_and_always():
    np.testing.assert_array_equal(frequencies(0.0, 500)[0], [0, 0, 1, 0, 0])
    np.testing.assert_allclose(frequencies(1.0)[0], [1 / 3, 0, 1 / 3, 1 / 3, 0], atol=0.015)


def test_bad_masks_and_probabilities_are_refused():
    chosen = np.array([2, 4], np.int32)
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="legal must be bool"):
        explore_legal(key, chosen, LEGAL.astype(np.float32), 0.5)
    with pytest.raises(ValueError, match="legal must be bool"):
        explore_legal(key, chosen, LEGAL[:1], 0.5)
    with pytest.raises(ValueError, match="probability must be in"):
        explore_legal(key, chosen, LEGAL, 1.5)
