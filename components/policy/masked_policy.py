"""`MaskedPolicy`: a categorical `Policy` whose observations carry a legal-action mask by name,
{"obs": features, "legal": bool mask} (what the `Environment` component of a game gives).
The networks see the features only; illegal actions get
logits of -1e9, so they are never sampled nor chosen greedily, and log-probabilities,
entropies and KLs are those of the distribution over the legal actions (what PPO's ratio
and weighted maximum likelihood need: every loss over observations sees the mask without
being told)."""

from __future__ import annotations

from collections.abc import Mapping

import jax.numpy as jnp

import metagraph as mg
from components.policy.policy import Policy
from metagraph.spaces import Discrete

ILLEGAL_LOGIT = -1e9
"""The logit of an illegal action: exp underflows to exactly 0 in float32 (no NaN in
entropies, unlike -inf)."""


class MaskedPolicy(Policy):
    """A `Policy` over `Discrete(n)` actions whose observations are {"obs": [..., features],
    "legal": bool [..., n]} (see the module docstring). Arguments as `Policy`'s."""

    def __init__(self, action_space: Discrete, *args, **kwargs):
        if not isinstance(action_space, Discrete):
            raise TypeError(f"MaskedPolicy: a legal-action mask needs a Discrete action "
                            f"space, got {action_space!r}")
        super().__init__(action_space, *args, **kwargs)
        self.num_actions = int(action_space.n)

    def split(self, obs):
        """(the features, the legal mask as bool) of observations {"obs", "legal"}; a
        TypeError for anything else."""
        if not isinstance(obs, Mapping) or set(obs) != {"obs", "legal"}:
            got = f"keys {sorted(obs)}" if isinstance(obs, Mapping) else type(obs).__name__
            raise TypeError(f"MaskedPolicy ({self.scope}): observations must be "
                            f"{{'obs': features, 'legal': bool mask}} (a game's Environment "
                            f"gives them), got {got}")
        return obs["obs"], obs["legal"].astype(bool)

    @mg.api(polymorphic=True)
    def distribution_params(self, obs):
        """The logits over the legal actions (illegal ones at `ILLEGAL_LOGIT`)."""
        features, legal = self.split(obs)
        return jnp.where(legal, self._distribution_params(features), ILLEGAL_LOGIT)

    @mg.api(polymorphic=True)
    def value(self, obs):
        """V of the board (the mask is not an input of the value network)."""
        return self._value(self.split(obs)[0])

    def _shared_pass(self, obs):
        """The masked logits and V from one pass of the shared torso."""
        features, legal = self.split(obs)
        params, value = super()._shared_pass(features)
        return jnp.where(legal, params, ILLEGAL_LOGIT), value
