"""Policies: `Policy` (torso, action distribution from the action space, value estimate) and
the distributions `Categorical` and `DiagGaussian`; `MaskedPolicy` (a Policy whose
observations carry a legal-action mask by name, {"obs", "legal"}: games); `explore_legal` (a
random legal move in place of the chosen one, with a probability)."""

from components.policy.distributions import Categorical, DiagGaussian, distribution_for
from components.policy.exploration import explore_legal
from components.policy.masked_policy import MaskedPolicy
from components.policy.policy import Policy

__all__ = ["Categorical", "DiagGaussian", "MaskedPolicy", "Policy", "distribution_for",
           "explore_legal"]
