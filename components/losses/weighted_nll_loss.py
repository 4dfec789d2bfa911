"""`WeightedNLLLoss`: the path-reweighting loss, fitting a linked policy to the reweighted path
distribution Q by weighted maximum likelihood."""

from __future__ import annotations

import metagraph as mg
from components.losses.policy_losses import weighted_nll


class WeightedNLLLoss(mg.Component):
    """The weighted negative log-likelihood of whole paths, the path-reweighting update.

    Args:
        policy: The policy whose `evaluate` (and `value`) the loss calls (linked, not owned).
        name: The scope name.
    """
    def __init__(self, policy: mg.Component, name: str | None = None):
        super().__init__(name)
        self.link("policy", policy)

    @mg.api
    def loss(self, obs, action, mask, weight):
        """obs/action/mask: [N, T, ...] paths (mask: the steps inside each path), weight [N]
        summing to 1. Returns (-Σ_i w_i Σ_t log π(a_it|s_it), {"mean_log_prob"})."""
        log_probs = self.policy.log_prob(obs, action) * mask
        loss = weighted_nll(log_probs, weight)
        steps = mask.sum()
        return loss, {"mean_log_prob": log_probs.sum() / steps}
