"""Path reweighting, the project's own algorithm: weights over sampled paths from quality
scores, the information the simulation revealed (bits), the effective sample size, and
resampling; as pure functions and as the `PathReweighting` component."""

from components.reweighting import quality
from components.reweighting.path_reweighting import PathReweighting
from components.reweighting.schemes import (
    SCHEMES,
    effective_sample_size,
    information_bits,
    information_per_step,
    resample,
    weights,
)

__all__ = [
    "SCHEMES", "PathReweighting", "effective_sample_size", "information_bits",
    "information_per_step", "quality", "resample", "weights",
]
