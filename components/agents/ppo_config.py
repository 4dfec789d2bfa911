"""The typed, validated configuration of the PPO agent (PureJaxRL's defaults for CartPole)."""

from __future__ import annotations

import dataclasses

from components.agents.config_checks import AgentConfig, check_fields
from components.envs.environment import BACKENDS


@dataclasses.dataclass(frozen=True)
class PPOConfig(AgentConfig):
    num_envs: int = 4
    num_steps: int = 128          # rollout length per environment and iteration
    epochs: int = 4
    minibatches: int = 4
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 1.0     # rewards are multiplied by this for learning (not reporting)
    hidden: tuple[int, ...] = (64, 64)
    iterations_per_call: int = 32  # iterations fused into one executable call
    backend: str = "native"

    def __post_init__(self) -> None:
        check_fields(self, {
            "num_envs": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "num_steps": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "epochs": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "minibatches": (lambda v: isinstance(v, int) and v >= 1
                            and (self.num_envs * self.num_steps) % v == 0,
                            "an int >= 1 dividing num_envs * num_steps"),
            "learning_rate": (lambda v: v > 0, "a number > 0"),
            "gamma": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
            "gae_lambda": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
            "clip": (lambda v: v > 0, "a number > 0"),
            "entropy_coef": (lambda v: v >= 0, "a number >= 0"),
            "value_coef": (lambda v: v >= 0, "a number >= 0"),
            "max_grad_norm": (lambda v: v > 0, "a number > 0"),
            "reward_scale": (lambda v: v > 0, "a number > 0"),
            "hidden": (lambda v: bool(v) and all(isinstance(h, int) and h >= 1 for h in v),
                       "positive ints"),
            "iterations_per_call": (lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            "backend": (lambda v: v in BACKENDS, f"one of {BACKENDS}"),
        })
