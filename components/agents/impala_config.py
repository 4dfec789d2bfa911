"""The typed, validated configuration of the IMPALA agent (`ImpalaAgent`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from components.agents.config_checks import (
    ENV_DOOR,
    HIDDEN,
    NON_NEGATIVE,
    NUM_ENVS,
    POSITIVE,
    POSITIVE_INT,
    UNIT,
    AgentConfig,
    Rule,
)


@dataclasses.dataclass(frozen=True)
class ImpalaConfig(AgentConfig):
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
    max_grad_norm: float = 0.5
    reward_scale: float = 0.1     # rewards are multiplied by this for learning (not reporting)
    bootstrap_truncated: bool = False  # add gamma * V(final obs) to a truncating step's reward
    hidden: tuple[int, ...] = (64, 64)
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium
    # the environment's keyword arguments (`--env-kwargs KEY=VALUE`), on every door
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentConfig.rules`)."""
        return {
            "num_envs": NUM_ENVS,
            "num_steps": POSITIVE_INT,
            "learning_rate": POSITIVE,
            "gamma": UNIT,
            "clip_rho": POSITIVE,
            "clip_c": POSITIVE,
            "clip_ratio": NON_NEGATIVE,
            "entropy_coef": NON_NEGATIVE,
            "value_coef": NON_NEGATIVE,
            "max_grad_norm": POSITIVE,
            "reward_scale": POSITIVE,
            "hidden": HIDDEN,
            "door": ENV_DOOR,
        }
