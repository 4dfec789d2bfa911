"""Soft Actor-Critic's loss terms (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and
Applications", eqs. 5-7, 11 and 18), as pure functions over a batch [B] with k critics
([B, k]), and `SACLoss`, their sum over a linked SAC model (what one `Optimizer` step
minimises: critics, actor and temperature in one update):

- `soft_q_target(reward, discount, next_q, next_log_prob, alpha)`:
  r + d (min_k Q'_k(s', a') - α log π(a'|s')), a' ~ π(s'), Q' the target critics;
- `soft_q_loss(q, target)`: ½ Σ_k mean_B (Q_k(s, a) - target)² (Stable-Baselines3's);
- `sac_actor_loss(q_pi, log_prob, alpha)`: mean_B (α log π(ã|s) - min_k Q_k(s, ã)),
  ã ~ π(s) reparameterised;
- `temperature_loss(log_alpha, log_prob, target_entropy)`:
  -mean_B log α (log π(ã|s) + H̄), H̄ the target entropy (-|A| in the paper);
- `polyak_average(online, target, tau)`: τ online + (1 - τ) target, leaf by leaf (the target
  critics' update after each gradient step).

The discount `d` is γ (1 - terminated): an episode cut by the time limit is bootstrapped.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from components.losses.shapes import require_same_shape


def _check_critics(where: str, q: jax.Array, **rows: jax.Array) -> None:
    if jnp.ndim(q) != 2:
        raise ValueError(f"{where}: Q-values must be [B, critics], got shape {jnp.shape(q)}")
    require_same_shape(where, rows_of_q=q[:, 0], **rows)


def soft_q_target(reward: jax.Array, discount: jax.Array, next_q: jax.Array,
                  next_log_prob: jax.Array, alpha: jax.Array | float) -> jax.Array:
    """The soft Bellman target r + d (min_k next_q[:, k] - α next_log_prob) [B], its gradient
    stopped (eq. 3 with the clipped double-Q minimum of Fujimoto et al. 2018)."""
    _check_critics("soft_q_target", next_q, reward=reward, discount=discount,
                   next_log_prob=next_log_prob)
    soft_value = next_q.min(-1) - alpha * next_log_prob
    return jax.lax.stop_gradient(reward + discount * soft_value)


def soft_q_loss(q: jax.Array, target: jax.Array) -> jax.Array:
    """½ Σ_k mean_B (q[:, k] - target)²: every critic regressed on the same target (eq. 5)."""
    _check_critics("soft_q_loss", q, target=target)
    return 0.5 * ((q - target[:, None]) ** 2).mean(0).sum()


def sac_actor_loss(q_pi: jax.Array, log_prob: jax.Array, alpha: jax.Array | float
                   ) -> jax.Array:
    """mean_B (α log π(ã|s) - min_k q_pi[:, k]) for reparameterised actions ã (eq. 7);
    `q_pi` carries the gradient to the actor through ã, not to the critics' parameters."""
    _check_critics("sac_actor_loss", q_pi, log_prob=log_prob)
    return (alpha * log_prob - q_pi.min(-1)).mean()


def temperature_loss(log_alpha: jax.Array, log_prob: jax.Array, target_entropy: float
                     ) -> jax.Array:
    """-mean_B log α (log π(ã|s) + H̄) (eq. 18 in log α, as Stable-Baselines3 and CleanRL
    learn it): α grows while the policy's entropy is below the target H̄."""
    if jnp.ndim(log_alpha) != 0:
        raise ValueError(f"temperature_loss: log_alpha must be a scalar, got shape "
                         f"{jnp.shape(log_alpha)}")
    return -(log_alpha * jax.lax.stop_gradient(log_prob + target_entropy)).mean()


def polyak_average(online: Any, target: Any, tau: float) -> Any:
    """τ online + (1 - τ) target for every leaf of two pytrees of one structure."""
    if jax.tree.structure(online) != jax.tree.structure(target):
        raise ValueError(f"polyak_average: online and target parameters differ in structure: "
                         f"{jax.tree.structure(online)} vs {jax.tree.structure(target)}")
    return jax.tree.map(lambda o, t: tau * o + (1.0 - tau) * t, online, target)


class SACLoss(mg.Component):
    """SAC's three losses summed over a linked model, each term reaching only its own
    parameters (the others' are constants in it): one gradient step updates the critics, the
    actor and log α together.

    The model (`components.agents.sac_agent.SACModel`, or a user's) has an `actor` with
    `sample_action(obs, key) -> (action, log_prob)` (reparameterised), a `critic` with
    `forward(x) -> Q [B, k]` of x = concat(obs, action), `current_params(x)` and
    `forward_with(params, x)` (every `HaikuNetwork` has them), and an API `log_alpha()`.

    Args:
        model: The model (linked, not owned).
        target_entropy: H̄, the entropy α is tuned towards (-|A| in Haarnoja et al.).
        autotune: Learn log α; False keeps it constant (no temperature term).
        name: The scope name.
    """
    def __init__(self, model: mg.Component, target_entropy: float, autotune: bool = True,
                 name: str | None = None):
        super().__init__(name)
        self.link("model", model)
        self.target_entropy, self.autotune = float(target_entropy), autotune

    @mg.api
    def loss(self, obs, action, reward, discount, target_q_next, next_log_prob, key):
        """reward, discount [B]; target_q_next [B, k]: the target critics at (s', a'), a' ~
        π(s'); next_log_prob [B]: log π(a'|s'); key: for ã ~ π(s). Returns (total,
        {"critic", "actor", "temperature", "alpha", "entropy", "q"})."""
        critic, actor = self.model.critic, self.model.actor
        log_alpha = self.model.log_alpha()
        alpha = jnp.exp(jax.lax.stop_gradient(log_alpha))
        target = soft_q_target(reward, discount, target_q_next, next_log_prob, alpha)
        x = jnp.concatenate([obs, action], -1)
        q = critic.forward(x)
        critic_term = soft_q_loss(q, target)
        new_action, log_prob = actor.sample_action(obs, key)
        frozen = jax.lax.stop_gradient(critic.current_params(x))
        q_pi = critic.forward_with(frozen, jnp.concatenate([obs, new_action], -1))
        actor_term = sac_actor_loss(q_pi, log_prob, alpha)
        temperature_term = (temperature_loss(log_alpha, log_prob, self.target_entropy)
                            if self.autotune else jnp.zeros(()))
        total = critic_term + actor_term + temperature_term
        return total, {"critic": critic_term, "actor": actor_term,
                       "temperature": temperature_term, "alpha": alpha,
                       "entropy": -log_prob.mean(), "q": q.mean()}
