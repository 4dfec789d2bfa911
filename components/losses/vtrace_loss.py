"""`VTraceLoss`: IMPALA's off-policy actor-critic loss with V-trace targets, over a linked
policy, on time-major trajectories [T, B] collected by a behaviour policy μ."""

from __future__ import annotations

import jax.numpy as jnp

import metagraph as mg
from components.losses.policy_losses import policy_gradient, value_loss
from components.losses.vtrace import vtrace


class VTraceLoss(mg.Component):
    def __init__(self, policy: mg.Component, gamma: float = 0.99, value_coef: float = 0.5,
                 entropy_coef: float = 0.01, clip_rho: float = 1.0, clip_c: float = 1.0,
                 name: str | None = None):
        super().__init__(name)
        self.link("policy", policy)
        self.gamma, self.value_coef, self.entropy_coef = gamma, value_coef, entropy_coef
        self.clip_rho, self.clip_c = clip_rho, clip_c

    @mg.api
    def loss(self, obs, action, reward, terminated, behaviour_log_prob, last_obs):
        out = self.policy.evaluate(obs, action)
        discounts = self.gamma * (1.0 - terminated.astype(reward.dtype))
        vs, advantages = vtrace(out["value"], self.policy.value(last_obs), reward, discounts,
                                out["log_prob"] - behaviour_log_prob, self.clip_rho,
                                self.clip_c)
        policy_term = policy_gradient(out["log_prob"], advantages)
        value_term = value_loss(out["value"], vs)
        entropy = out["entropy"].mean()
        total = policy_term + self.value_coef * value_term - self.entropy_coef * entropy
        return total, {"policy": policy_term, "value": value_term, "entropy": entropy,
                       "mean_rho": jnp.exp(out["log_prob"] - behaviour_log_prob).mean()}
