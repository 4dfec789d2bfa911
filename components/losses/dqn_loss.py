"""`DQNLoss`: (double) Q-learning with a Huber loss on n-step transitions, importance-weighted
for prioritised replay. The online network is linked; the target network's Q-values come in."""

from __future__ import annotations

import jax.numpy as jnp

import metagraph as mg
from components.losses.td import double_q_learning_td, huber, q_learning_td


class DQNLoss(mg.Component):
    """The (double) Q-learning loss with a Huber penalty over a linked Q-network.

    Args:
        q_network: The network whose `forward(obs)` gives Q-values (linked, not owned).
        double: Pick the next action with the online network and value it with the target's.
        huber_delta: Where the Huber penalty turns from quadratic to linear; None: the
            squared error throughout (td² / 2, CleanRL's and PureJaxRL's DQN).
        name: The scope name.
    """
    def __init__(self, q_network: mg.Component, double: bool = True,
                 huber_delta: float | None = 1.0, name: str | None = None):
        super().__init__(name)
        self.link("q_network", q_network)
        self.double, self.huber_delta = double, huber_delta

    @mg.api
    def loss(self, obs, action, reward, discount, next_obs, target_q_next, weight):
        """reward: the n-step discounted reward sum; discount: the product of the n
        discounts (0 after termination); target_q_next: the target network at next_obs;
        weight: importance weights (ones without prioritised replay). Returns (loss,
        {"td_error"}) — the TD errors are the new priorities."""
        q = self.q_network.forward(obs)
        if self.double:
            td = double_q_learning_td(q, action, reward, discount, target_q_next,
                                      self.q_network.forward(next_obs))
        else:
            td = q_learning_td(q, action, reward, discount, target_q_next)
        penalty = 0.5 * td**2 if self.huber_delta is None else huber(td, self.huber_delta)
        loss = (weight * penalty).mean()
        return loss, {"td_error": jnp.abs(td)}
