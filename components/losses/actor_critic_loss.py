"""`ActorCriticLoss`: policy gradient with GAE advantages, a value regression and an entropy
bonus, over a linked policy, on time-major rollouts [T, B]."""

from __future__ import annotations

import jax

import metagraph as mg
from components.losses.policy_losses import policy_gradient, value_loss
from components.losses.returns import gae


class ActorCriticLoss(mg.Component):
    """Advantage actor-critic loss over a linked policy: policy gradient with GAE advantages,
    squared value error, entropy bonus.

    Args:
        policy: The policy whose `evaluate` (and `value`) the loss calls (linked, not owned).
        gamma: The discount.
        lambda_: The GAE lambda.
        value_coef: The weight of the value term.
        entropy_coef: The weight of the entropy bonus (subtracted).
        name: The scope name.
    """
    def __init__(self, policy: mg.Component, gamma: float = 0.99, lambda_: float = 0.95,
                 value_coef: float = 0.5, entropy_coef: float = 0.01, name: str | None = None):
        super().__init__(name)
        self.link("policy", policy)
        self.gamma, self.lambda_, self.value_coef, self.entropy_coef = \
            gamma, lambda_, value_coef, entropy_coef

    @mg.api
    def loss(self, obs, action, reward, terminated, last_obs):
        """obs/action/reward/terminated: [T, B, ...]; last_obs [B, ...] bootstraps."""
        out = self.policy.evaluate(obs, action)
        last_value = self.policy.value(last_obs)
        values = jax.numpy.concatenate([out["value"], last_value[None]], 0)
        discounts = self.gamma * (1.0 - terminated.astype(reward.dtype))
        advantages = gae(reward, discounts, jax.lax.stop_gradient(values), self.lambda_)
        targets = advantages + jax.lax.stop_gradient(values[:-1])
        policy_term = policy_gradient(out["log_prob"], advantages)
        value_term = value_loss(out["value"], targets)
        entropy = out["entropy"].mean()
        total = policy_term + self.value_coef * value_term - self.entropy_coef * entropy
        return total, {"policy": policy_term, "value": value_term, "entropy": entropy}
