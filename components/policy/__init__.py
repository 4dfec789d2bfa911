"""Policies: `Policy` (torso, action distribution from the action space, value estimate) and
the distributions `Categorical` and `DiagGaussian`."""

from components.policy.distributions import Categorical, DiagGaussian, distribution_for
from components.policy.policy import Policy

__all__ = ["Categorical", "DiagGaussian", "Policy", "distribution_for"]
