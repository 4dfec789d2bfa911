"""`VTraceLoss`: IMPALA's off-policy actor-critic loss with V-trace targets, over a linked
policy, on time-major trajectories [T, B] collected by a behaviour policy μ."""

from __future__ import annotations

import jax.numpy as jnp

import metagraph as mg
from components.losses.policy_losses import policy_gradient, ppo_clipped_surrogate, value_loss
from components.losses.vtrace import vtrace


class VTraceLoss(mg.Component):
    """IMPALA's loss over a linked policy: V-trace targets and advantages for off-policy
    batches.

    Args:
        policy: The policy whose `evaluate` (and `value`) the loss calls (linked, not owned).
        gamma: The discount.
        value_coef: The weight of the value term.
        entropy_coef: The weight of the entropy bonus (subtracted).
        clip_rho: V-trace's rho-bar (importance weight clip of the targets).
        clip_c: V-trace's c-bar (trace cutting).
        clip_ratio: When given (ε), the policy term is PPO's clipped surrogate of the ratio
            π/μ to the behaviour policy, with V-trace's advantages (asynchronous PPO, as in
            RLlib's APPO): a stale batch cannot push the policy further than 1 ± ε from the
            policy that sampled it. None: V-trace's policy gradient.
        name: The scope name.
    """
    def __init__(self, policy: mg.Component, gamma: float = 0.99, value_coef: float = 0.5,
                 entropy_coef: float = 0.01, clip_rho: float = 1.0, clip_c: float = 1.0,
                 clip_ratio: float | None = None, name: str | None = None):
        super().__init__(name)
        self.link("policy", policy)
        self.gamma, self.value_coef, self.entropy_coef = gamma, value_coef, entropy_coef
        self.clip_rho, self.clip_c, self.clip_ratio = clip_rho, clip_c, clip_ratio

    @mg.api
    def loss(self, obs, action, reward, terminated, behaviour_log_prob, last_obs):
        """(total, {"policy", "value", "entropy", "mean_rho"}) for a batch of unrolls.

        obs/action/reward/terminated/behaviour_log_prob are [T, B, ...]: what the samplers'
        behaviour policy did and the log-probabilities it had; last_obs [B, ...] bootstraps.
        """
        out = self.policy.evaluate(obs, action)
        discounts = self.gamma * (1.0 - terminated.astype(reward.dtype))
        vs, advantages = vtrace(out["value"], self.policy.value(last_obs), reward, discounts,
                                out["log_prob"] - behaviour_log_prob, self.clip_rho,
                                self.clip_c)
        policy_term = (policy_gradient(out["log_prob"], advantages) if self.clip_ratio is None
                       else ppo_clipped_surrogate(out["log_prob"], behaviour_log_prob,
                                                  advantages, self.clip_ratio))
        value_term = value_loss(out["value"], vs)
        entropy = out["entropy"].mean()
        total = policy_term + self.value_coef * value_term - self.entropy_coef * entropy
        return total, {"policy": policy_term, "value": value_term, "entropy": entropy,
                       "mean_rho": jnp.exp(out["log_prob"] - behaviour_log_prob).mean()}
