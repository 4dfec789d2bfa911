"""AlphaZero's loss (Silver et al. 2018): the network's policy fitted to the search's improved
policy by cross-entropy, its value to the game's outcome by squared error, plus an L2 penalty
on the weights. `policy_value_loss` is the pure function; `AlphaZeroLoss` the component over a
linked `PolicyValueNetwork` that an `Optimizer` minimises."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import metagraph as mg
from components.losses.shapes import require_same_shape, require_shape


def policy_value_loss(logits: jax.Array, value: jax.Array, target_policy: jax.Array,
                      target_value: jax.Array, weight: jax.Array
                      ) -> tuple[jax.Array, jax.Array]:
    """(policy cross-entropy, value squared error), each the `weight`-weighted mean over a
    batch: logits and target_policy [B, A] (a distribution per row), value, target_value and
    weight [B] (0 for a sample not to learn from). The cross-entropy is
    -sum_a pi(a) log softmax(logits)(a) (rlax's `categorical_cross_entropy`); the value error
    (v - z)^2."""
    require_same_shape("policy_value_loss", logits=logits, target_policy=target_policy)
    require_same_shape("policy_value_loss", value=value, target_value=target_value,
                       weight=weight)
    require_shape("policy_value_loss", "value", value, logits.shape[:1])
    total = jnp.maximum(weight.sum(), 1e-8)
    # the target is 0 on illegal actions: the product is 0 there, whatever their log-prob
    cross_entropy = -jnp.sum(jnp.where(target_policy > 0, target_policy
                                       * jax.nn.log_softmax(logits), 0.0), -1)
    return (weight * cross_entropy).sum() / total, (weight * (value - target_value) ** 2
                                                   ).sum() / total


class AlphaZeroLoss(mg.Component):
    """The AlphaZero loss of a linked network with `forward(planes) -> (logits, value)`:
    cross-entropy + `value_coef` x squared error + `l2` x the sum of the squared weights.

    Args:
        network: the network (linked, not owned).
        value_coef: the value error's weight.
        l2: the L2 penalty's coefficient (0: none).
        name: the scope name.
    """

    def __init__(self, network: mg.Component, value_coef: float = 1.0, l2: float = 1e-4,
                 name: str | None = None):
        super().__init__(name)
        self.link("network", network)
        self.value_coef, self.l2 = value_coef, l2

    @mg.api
    def loss(self, planes, target_policy, target_value, weight):
        """planes [B, rows, columns, planes], target_policy [B, A], target_value and weight
        [B]: (total, {"policy_loss", "value_loss", "l2"})."""
        logits, value = self.network.forward(planes)
        policy_loss, value_loss = policy_value_loss(logits, value, target_policy,
                                                    target_value, weight)
        params = self.network.current_params(planes)
        penalty = sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
        total = policy_loss + self.value_coef * value_loss + self.l2 * penalty
        return total, {"policy_loss": policy_loss, "value_loss": value_loss, "l2": penalty}
