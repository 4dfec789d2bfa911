"""`Policy`: a network torso, an action distribution chosen from the action space, and a value
estimate (a head on the shared torso, or a separate network).

APIs (obs: [B, ...]): `sample_action(obs, key) -> (action, log_prob)`, `greedy_action(obs)`,
`log_prob(obs, action)`, `entropy(obs)`, `distribution_params(obs)`,
`kl(obs, old_params)` = KL(old‖current), `value(obs)`, and `evaluate(obs, action)` returning
log-probability, entropy and value together (what actor-critic losses need). Every API is
polymorphic over leading axes: acting sees [B, ...], learning [T, B, ...].
"""

from __future__ import annotations

from collections.abc import Sequence

import jax

import metagraph as mg
from components.networks import MLP
from components.policy.distributions import distribution_for
from metagraph.spaces import Space

VALUE_MODES = ("separate", "shared", None)


class Policy(mg.Component):
    """A torso, an action distribution chosen from the action space, and a value estimate.

    Every API is polymorphic: the same policy acts on [B, ...] and learns on [T, B, ...].

    Args:
        action_space: A `Discrete` (categorical) or `Box` (diagonal Gaussian) space.
        hidden: The torso's (and a separate value network's) layer widths.
        value: "separate" (its own MLP), "shared" (a head on the torso) or None (no value).
        squash: Squash Gaussian samples into the Box's bounds with tanh.
        torso: A component with `forward(obs)` replacing the default MLP torso.
        activation: The activation of the default MLPs.
        name: The scope name.

    Raises:
        ValueError: `value` is not one of the modes.
    """
    def __init__(self, action_space: Space, hidden: Sequence[int] = (64, 64),
                 value: str | None = "separate", squash: bool = True,
                 torso: mg.Component | None = None, activation=jax.nn.tanh,
                 name: str | None = None):
        super().__init__(name)
        if value not in VALUE_MODES:
            raise ValueError(f"Policy: value must be one of {VALUE_MODES}, got {value!r}")
        self.action_space = action_space
        self.distribution = distribution_for(action_space, squash)
        self.value_mode = value
        self.torso = torso if torso is not None else MLP(hidden, activation, activate_final=True)
        self.action_head = MLP([self.distribution.num_params])
        if value == "shared":
            self.value_head = MLP([1])
        elif value == "separate":
            self.value_network = MLP([*hidden, 1], activation)

    @mg.api(polymorphic=True)
    def distribution_params(self, obs):
        """The action distribution's parameters for `obs` (logits, or mean and log std)."""
        return self.action_head.forward(self.torso.forward(obs))

    @mg.api(polymorphic=True)
    def sample_action(self, obs, key):
        """An action sampled for `obs` with `key`, and its log-probability."""
        params = self.distribution_params(obs)
        action = self.distribution.sample(params, key)
        return action, self.distribution.log_prob(params, action)

    @mg.api(polymorphic=True)
    def greedy_action(self, obs):
        """The distribution's mode for `obs`."""
        return self.distribution.mode(self.distribution_params(obs))

    @mg.api(polymorphic=True)
    def log_prob(self, obs, action):
        """log π(action | obs)."""
        return self.distribution.log_prob(self.distribution_params(obs), action)

    @mg.api(polymorphic=True)
    def entropy(self, obs):
        """The entropy of π(· | obs)."""
        return self.distribution.entropy(self.distribution_params(obs))

    @mg.api(polymorphic=True)
    def kl(self, obs, old_params):
        """KL(old‖new): from the distribution of `old_params` to the current one at `obs`."""
        return self.distribution.kl(old_params, self.distribution_params(obs))

    @mg.api(polymorphic=True)
    def value(self, obs):
        """The value estimate V(obs); raises MetaGraphError for a policy built with value=None."""
        if self.value_mode is None:
            raise mg.MetaGraphError(f"{self.scope}.value: this policy has no value estimate "
                                    f"(built with value=None)")
        if self.value_mode == "shared":
            return self.value_head.forward(self.torso.forward(obs))[..., 0]
        return self.value_network.forward(obs)[..., 0]

    @mg.api(polymorphic=True)
    def evaluate(self, obs, action):
        """{"log_prob", "entropy"} of `action` at `obs`, and "value" unless value=None."""
        params = self.distribution_params(obs)
        out = {"log_prob": self.distribution.log_prob(params, action),
               "entropy": self.distribution.entropy(params)}
        if self.value_mode is not None:
            out["value"] = self.value(obs)
        return out
