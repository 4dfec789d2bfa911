"""The typed, validated configuration of the IMPALA agent (`ImpalaAgent`)."""

from __future__ import annotations

import dataclasses

from components.agents.config_checks import AgentConfig, check_fields
from components.envs.environment import BACKENDS


@dataclasses.dataclass(frozen=True)
class ImpalaConfig(AgentConfig):
    num_envs: int = 32            # environments per sampler
    num_steps: int = 64           # unroll length: a batch is num_steps x num_envs steps
    learning_rate: float = 5e-4
    gamma: float = 0.99
    clip_rho: float = 1.0         # ρ̄ of the V-trace targets
    clip_c: float = 1.0           # c̄ of the V-trace traces
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 1.0     # rewards are multiplied by this for learning (not reporting)
    hidden: tuple[int, ...] = (64, 64)
    backend: str = "native"

    def __post_init__(self) -> None:
        check_fields(self, {
            "num_envs": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "num_steps": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "learning_rate": (lambda v: v > 0, "a number > 0"),
            "gamma": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
            "clip_rho": (lambda v: v > 0, "a number > 0"),
            "clip_c": (lambda v: v > 0, "a number > 0"),
            "entropy_coef": (lambda v: v >= 0, "a number >= 0"),
            "value_coef": (lambda v: v >= 0, "a number >= 0"),
            "max_grad_norm": (lambda v: v > 0, "a number > 0"),
            "reward_scale": (lambda v: v > 0, "a number > 0"),
            "hidden": (lambda v: bool(v) and all(isinstance(h, int) and h >= 1 for h in v),
                       "positive ints"),
            "backend": (lambda v: v in BACKENDS, f"one of {BACKENDS}"),
        })
