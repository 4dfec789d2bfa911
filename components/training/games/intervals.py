"""Confidence intervals of a proportion (a win rate from a number of games)."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion p = successes / trials (Wilson 1927; Agresti
    & Coull 1998), the 95% interval by default. Unlike the normal approximation it stays
    inside [0, 1] and is not empty at 0 or `trials` successes. `successes` may be fractional
    (a score, a draw counting half a win).

    Raises:
        ValueError: `trials` < 1, or `successes` outside [0, trials].
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"wilson_interval: need 0 <= successes <= trials and trials >= 1, "
                         f"got {successes} of {trials}")
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


__all__ = ["Z95", "wilson_interval"]
