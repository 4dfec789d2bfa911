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
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from components.networks import MLP
from components.policy.distributions import DiagGaussian, distribution_for
from metagraph.spaces import Space

VALUE_MODES = ("separate", "shared", None)
LOG_STD_MODES = ("network", "parameter")
SQRT2 = float(np.sqrt(2.0))
DEFAULTS = {"hidden": (64, 64), "squash": True, "activation": jax.nn.tanh,
            "log_std": "network", "log_std_init": 0.0, "orthogonal": False}
"""A `Policy`'s settings where neither its constructor nor an agent gives them."""


class Policy(mg.Component):
    """A torso, an action distribution chosen from the action space, and a value estimate.

    Every API is polymorphic: the same policy acts on [B, ...] and learns on [T, B, ...].

    A setting of `DEFAULTS` (hidden, squash, activation, log_std, log_std_init, orthogonal)
    that the constructor is not given (left out, or None) is a default, which an agent given
    this policy (`PPOAgent(..., policy=...)`) replaces with its own: the setting its default
    policy has, from its config (`set_defaults`). So `Policy(space, torso=MyTorso())` passed
    to PPO keeps the config's activation, initialisation and log std, and a setting given
    here is kept. Without an agent they are `DEFAULTS`: hidden (64, 64), squash, tanh,
    log_std "network" starting at 0, no orthogonal initialisation. `value` is always the
    constructor's.

    Args:
        action_space: A `Discrete` (categorical) or `Box` (diagonal Gaussian) space.
        hidden: The torso's (and a separate value network's) layer widths.
        value: "separate" (its own MLP), "shared" (a head on the torso) or None (no value).
        squash: Squash Gaussian samples into the Box's bounds with tanh.
        torso: A component with `forward(obs)` replacing the default MLP torso.
        observation_rank: how many trailing axes one observation has (1: vectors; 3: a
            CNN torso's images, which a separate value network reads flattened).
        activation: The activation of the default MLPs.
        log_std: For a Gaussian: "network" (the action head outputs the log standard
            deviations too, state-dependent) or "parameter" (one learned log standard deviation
            per action dimension, independent of the state, as continuous-control PPO has it:
            CleanRL's `actor_logstd`, Stable-Baselines3's `log_std`), starting at
            `log_std_init`.
        log_std_init: The initial state-independent log standard deviation.
        orthogonal: Initialise the default MLPs orthogonally (`MLP(orthogonal=...)`): gain
            sqrt(2) in hidden layers, 0.01 for the action head, 1 for the value output
            (CleanRL's and Stable-Baselines3's PPO).
        name: The scope name.

    Raises:
        ValueError: `value` or `log_std` is not one of the modes, or `log_std="parameter"`
            for an action space without a Gaussian.
    """
    def __init__(self, action_space: Space, hidden: Sequence[int] | None = None,
                 value: str | None = "separate", squash: bool | None = None,
                 torso: mg.Component | None = None, activation=None,
                 log_std: str | None = None, log_std_init: float | None = None,
                 orthogonal: bool | None = None, observation_rank: int = 1,
                 name: str | None = None):
        super().__init__(name)
        self.action_space = action_space
        self.observation_rank = observation_rank
        given = {"hidden": hidden, "squash": squash, "activation": activation,
                 "log_std": log_std, "log_std_init": log_std_init, "orthogonal": orthogonal}
        self.given = {key: v for key, v in given.items() if v is not None}
        self.value_mode = value
        self.own_torso = torso is None
        if torso is not None:
            self.torso = torso
        self._configure({**DEFAULTS, **self.given})

    def set_defaults(self, **settings) -> None:
        """Take `settings` (keywords of the constructor: hidden, squash, activation, log_std,
        log_std_init, orthogonal) for those the constructor was not given: what an
        agent does with a policy passed to it, so that it keeps the config's settings unless
        told otherwise. Only before the policy is built into a graph.

        Raises:
            MetaGraphError: the policy is part of a built graph already.
            TypeError: a keyword that is not a setting.
        """
        unknown = sorted(set(settings) - set(DEFAULTS))
        if unknown:
            raise TypeError(f"Policy.set_defaults: unknown settings {unknown}; known: "
                            f"{sorted(DEFAULTS)}")
        try:
            built = self.scope
        except mg.MetaGraphError:  # not part of a built graph: what set_defaults needs
            built = None
        if built is not None:
            raise mg.MetaGraphError(f"{built}: set_defaults after the policy was built into a "
                                    f"graph; give the policy to the agent unbuilt")
        self._configure({**DEFAULTS, **settings, **self.given})

    def _configure(self, settings: dict) -> None:
        """Check `settings` (every key of `DEFAULTS`) and make the networks they describe."""
        value, log_std = self.value_mode, settings["log_std"]
        if value not in VALUE_MODES:
            raise ValueError(f"Policy: value must be one of {VALUE_MODES}, got {value!r}")
        if log_std not in LOG_STD_MODES:
            raise ValueError(f"Policy: log_std must be one of {LOG_STD_MODES}, got {log_std!r}")
        self.distribution = distribution_for(self.action_space, settings["squash"])
        if log_std == "parameter" and not isinstance(self.distribution, DiagGaussian):
            raise ValueError(f"Policy: log_std='parameter' needs a Box action space (a "
                             f"Gaussian), got {type(self.action_space).__name__}")
        self.settings = settings  # every setting of DEFAULTS, given or default
        self.log_std_mode = log_std
        self.log_std_init = float(settings["log_std_init"])
        hidden, activation = tuple(settings["hidden"]), settings["activation"]

        def gains(hidden_gain: float, output_gain: float) -> tuple[float, float] | None:
            return (hidden_gain, output_gain) if settings["orthogonal"] else None

        if self.own_torso:
            self.torso = MLP(hidden, activation, activate_final=True,
                             orthogonal=gains(SQRT2, SQRT2), input_rank=self.observation_rank)
        head = self.distribution.num_params // (2 if log_std == "parameter" else 1)
        self.action_head = MLP([head], orthogonal=gains(0.01, 0.01))
        if value == "shared":
            self.value_head = MLP([1], orthogonal=gains(1.0, 1.0))
        elif value == "separate":
            self.value_network = MLP([*hidden, 1], activation, orthogonal=gains(SQRT2, 1.0),
                                     input_rank=self.observation_rank)

    @mg.api(polymorphic=True)
    def distribution_params(self, obs):
        """The action distribution's parameters for `obs` (logits, or mean and log std)."""
        return self._distribution_params(obs)

    def _distribution_params(self, obs):
        return self._params_of(self.torso.forward(obs))

    def _params_of(self, features):
        """The distribution's parameters from the torso's `features`."""
        out = self.action_head.forward(features)
        if self.log_std_mode == "network":
            return out
        log_std = self.get_param("log_std", jnp.full((out.shape[-1],), self.log_std_init,
                                                     jnp.float32))
        return jnp.concatenate([out, jnp.broadcast_to(log_std, out.shape)], -1)

    @mg.api(polymorphic=True)
    def sample_action(self, obs, key):
        """An action sampled for `obs` with `key`, and its log-probability (reparameterised
        for a Gaussian: differentiable in the parameters, as SAC's actor loss needs)."""
        return self.distribution.sample_and_log_prob(self.distribution_params(obs), key)

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
        return self._value(obs)

    def _value(self, obs):
        if self.value_mode is None:
            raise mg.MetaGraphError(f"{self.scope}.value: this policy has no value estimate "
                                    f"(built with value=None)")
        if self.value_mode == "shared":
            return self.value_head.forward(self.torso.forward(obs))[..., 0]
        return self.value_network.forward(obs)[..., 0]

    def _shared_pass(self, obs):
        """(the distribution's parameters, the value) of `obs` from one pass of the torso
        they share (value="shared"): its gradient is taken once, where a pass for each would
        take it twice (PPO's update over the Nature CNN took 1.5x as long)."""
        features = self.torso.forward(obs)
        return self._params_of(features), self.value_head.forward(features)[..., 0]

    @mg.api(polymorphic=True)
    def evaluate(self, obs, action):
        """{"log_prob", "entropy"} of `action` at `obs`, and "value" unless value=None."""
        if self.value_mode == "shared" and _passes_once(type(self)):
            params, value = self._shared_pass(obs)
            return {"log_prob": self.distribution.log_prob(params, action),
                    "entropy": self.distribution.entropy(params), "value": value}
        params = self.distribution_params(obs)
        out = {"log_prob": self.distribution.log_prob(params, action),
               "entropy": self.distribution.entropy(params)}
        if self.value_mode is not None:
            out["value"] = self.value(obs)
        return out


def _passes_once(cls: type) -> bool:
    """Whether `evaluate` may feed both heads from one torso pass for a policy of class
    `cls`: where its `distribution_params` and `value` are Policy's, or where it defines its
    own `_shared_pass` beside them (a subclass that changes either API alone is evaluated
    through both, as before)."""
    def owner(name: str) -> type:  # the class whose definition of `name` `cls` uses
        return next(k for k in cls.__mro__ if name in vars(k))

    changed = any(owner(name) is not Policy for name in ("distribution_params", "value"))
    return not changed or owner("_shared_pass") is not Policy
