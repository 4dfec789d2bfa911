"""The typed, validated configuration of the IMPALA agent (`ImpalaAgent`)."""

from __future__ import annotations

import dataclasses

from components.agents import config_checks as checks
from components.agents.agent_settings import AgentSettings
from components.agents.config_checks import Rule


@dataclasses.dataclass(frozen=True)
class ImpalaConfig(AgentSettings):
    """The hyperparameters of `ImpalaAgent` (each field's comment says what it sets);
    `from_dict` refuses unknown keys."""
    num_envs: int = 32            # environments per sampler
    num_steps: int = 64           # unroll length: a batch is num_steps x num_envs steps
    learning_rate: float = 1e-3
    anneal_lr: bool = True        # the rate falls linearly to 0 over the run's updates
    gamma: float = 0.99
    clip_rho: float = 1.0         # ρ̄ of the V-trace targets
    clip_c: float = 1.0           # c̄ of the V-trace traces
    clip_ratio: float = 0.2       # ε of PPO's clipped surrogate of π/μ (APPO); 0: V-trace's PG
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    reward_scale: float = 0.1     # rewards are multiplied by this for learning (not reporting)
    bootstrap_truncated: bool = False  # add gamma * V(final obs) to a truncating step's reward

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "clip_rho": checks.POSITIVE,
            "clip_c": checks.POSITIVE,
            "clip_ratio": checks.NON_NEGATIVE,
        }
