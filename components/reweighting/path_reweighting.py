"""`PathReweighting`: the reweighting maths (`schemes.py`) as a component.

    reweighting = PathReweighting(scheme="exponential", temperature=10.0)
    out = reweighting.reweight(q)      # {"weights", "bits", "ess", "valid"}
    idx = reweighting.resample(q, key) # path indices drawn ∝ w

Scores that break the scheme's requirements (NaN or inf; a negative score or a zero sum under
"proportional") give uniform weights, so nothing downstream learns from them, `valid` False,
and (with `strict=True`, the default) `mg.RuntimeCheckError` from the executor after the call.
"""

from __future__ import annotations

import jax.numpy as jnp

import metagraph as mg
from components.reweighting.schemes import (
    SCHEMES,
    effective_sample_size,
    information_bits,
    resample,
    weights,
)
from metagraph import runtime_checks


class PathReweighting(mg.Component):
    """Weights over sampled paths from their quality scores, with the bits revealed and the
    effective sample size.

    Args:
        scheme: One of `SCHEMES`: "proportional", "exponential", "elite" or "rank".
        temperature: The temperature of the exponential scheme.
        fraction: The elite fraction of the elite scheme.
        resampling: How `resample` draws paths from the weights: "systematic" or "multinomial".
        strict: Refuse invalid quality scores at run time (a `RuntimeCheckError` after the call).
        name: The scope name.

    Raises:
        ValueError: `scheme` is not in `SCHEMES`.
    """
    def __init__(self, scheme: str = "exponential", temperature: float = 1.0,
                 fraction: float = 0.1, resampling: str = "systematic", strict: bool = True,
                 name: str | None = None):
        super().__init__(name)
        if scheme not in SCHEMES:
            raise ValueError(f"PathReweighting: scheme must be one of {SCHEMES}, got {scheme!r}")
        self.scheme, self.temperature, self.fraction, self.resampling = \
            scheme, temperature, fraction, resampling
        self.strict = strict

    def _weights(self, q):
        valid = jnp.isfinite(q).all(-1)
        if self.scheme == "proportional":
            valid = valid & (q >= 0).all(-1) & (q.sum(-1) > 0)
        if self.strict:
            runtime_checks.require(valid.all(), f"{self.scope}: quality scores must be finite"
                                   + (" and >= 0 with a positive sum under the proportional "
                                      "scheme" if self.scheme == "proportional" else ""))
        safe_q = jnp.where(valid[..., None], q, jnp.ones_like(q))
        w = weights(safe_q, self.scheme, self.temperature, self.fraction)
        return w, valid

    @mg.api
    def reweight(self, q):
        """Weights over the last axis of q (the paths), D(Q‖P̂) in bits, the effective sample
        size, and whether q was valid for the scheme."""
        w, valid = self._weights(q)
        return {"weights": w, "bits": information_bits(w), "ess": effective_sample_size(w),
                "valid": valid}

    @mg.api
    def resample(self, q, key, num_samples: int | None = None):
        """`num_samples` path indices (default: as many as paths) drawn ∝ w ("systematic" or
        "multinomial")."""
        return resample(key, self._weights(q)[0], num_samples, method=self.resampling)
