"""Losses, as pure functions (returns, V-trace, TD errors, policy losses) and as components
over a linked policy or Q-network (what an `Optimizer` minimises)."""

from components.losses.actor_critic_loss import ActorCriticLoss
from components.losses.alphazero_loss import AlphaZeroLoss, policy_value_loss
from components.losses.dqn_loss import DQNLoss
from components.losses.policy_losses import (
    policy_gradient,
    ppo_clipped_surrogate,
    value_loss,
    weighted_nll,
)
from components.losses.ppo_loss import PPOLoss
from components.losses.returns import (
    discounted_returns,
    gae,
    game_outcomes,
    n_step_returns,
    n_step_terms,
    negamax_gae,
    turn_discounts,
)
from components.losses.sac_loss import (
    SACLoss,
    polyak_average,
    sac_actor_loss,
    soft_q_loss,
    soft_q_target,
    temperature_loss,
)
from components.losses.td import double_q_learning_td, huber, q_learning_td
from components.losses.truncation import bootstrap_truncated, truncated_values
from components.losses.vtrace import vtrace
from components.losses.vtrace_loss import VTraceLoss
from components.losses.weighted_nll_loss import WeightedNLLLoss

__all__ = [
    "ActorCriticLoss", "AlphaZeroLoss", "DQNLoss", "PPOLoss", "SACLoss", "VTraceLoss",
    "WeightedNLLLoss", "bootstrap_truncated", "discounted_returns", "double_q_learning_td",
    "gae", "game_outcomes", "huber", "n_step_returns", "n_step_terms", "negamax_gae",
    "policy_value_loss", "turn_discounts", "polyak_average", "policy_gradient",
    "ppo_clipped_surrogate", "q_learning_td", "sac_actor_loss", "soft_q_loss",
    "soft_q_target", "temperature_loss", "truncated_values", "value_loss", "vtrace",
    "weighted_nll",
]
