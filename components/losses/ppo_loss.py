"""`PPOLoss`: PPO's clipped surrogate with value and entropy terms, over a linked policy."""

from __future__ import annotations

import metagraph as mg
from components.losses.policy_losses import ppo_clipped_surrogate, value_loss


class PPOLoss(mg.Component):
    """PPO's loss over a linked policy: clipped surrogate, (optionally clipped) value error,
    entropy bonus.

    Args:
        policy: The policy whose `evaluate` (and `value`) the loss calls (linked, not owned).
        clip: The surrogate's ratio clip epsilon.
        value_coef: The weight of the value term.
        entropy_coef: The weight of the entropy bonus (subtracted).
        value_clip: Clip the value change around the old values by this much (None: no clip).
        name: The scope name.
    """
    def __init__(self, policy: mg.Component, clip: float = 0.2, value_coef: float = 0.5,
                 entropy_coef: float = 0.01, value_clip: float | None = None,
                 name: str | None = None):
        super().__init__(name)
        self.link("policy", policy)
        self.clip, self.value_coef, self.entropy_coef, self.value_clip = \
            clip, value_coef, entropy_coef, value_clip

    @mg.api
    def loss(self, obs, action, old_log_prob, advantage, target_value, old_value):
        """(total, {"policy", "value", "entropy"}) for a minibatch."""
        out = self.policy.evaluate(obs, action)
        policy_term = ppo_clipped_surrogate(out["log_prob"], old_log_prob, advantage, self.clip)
        value_term = value_loss(out["value"], target_value, old_value, self.value_clip)
        entropy = out["entropy"].mean()
        total = policy_term + self.value_coef * value_term - self.entropy_coef * entropy
        return total, {"policy": policy_term, "value": value_term, "entropy": entropy}
