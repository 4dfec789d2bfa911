"""The typed, validated configuration of the DQN agent."""

from __future__ import annotations

import dataclasses

from components.agents.config_checks import AgentConfig, check_fields
from components.envs.environment import BACKENDS


@dataclasses.dataclass(frozen=True)
class DQNConfig(AgentConfig):
    num_envs: int = 4
    rollout: int = 8              # environment steps per environment and iteration
    n_step: int = 3
    gamma: float = 0.99
    buffer_size: int = 50_000
    batch_size: int = 64
    updates_per_iteration: int = 4
    learning_rate: float = 5e-4
    max_grad_norm: float = 10.0
    target_every: int = 125       # iterations between target-network copies
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_fraction: float = 0.3  # of the training steps over which epsilon decays
    alpha: float = 0.6            # prioritised replay exponents
    beta: float = 0.4
    priority_eps: float = 1e-3
    double: bool = True
    hidden: tuple[int, ...] = (64, 64)
    iterations_per_call: int = 64
    backend: str = "native"

    def __post_init__(self) -> None:
        positive_int = (lambda v: isinstance(v, int) and v >= 1, "an int >= 1")
        unit = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
        check_fields(self, {
            "num_envs": positive_int, "rollout": positive_int, "n_step": positive_int,
            "buffer_size": positive_int, "batch_size": positive_int,
            "updates_per_iteration": positive_int, "target_every": positive_int,
            "iterations_per_call": positive_int,
            "gamma": unit, "epsilon_start": unit, "epsilon_end": unit, "beta": unit,
            "epsilon_fraction": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "learning_rate": (lambda v: v > 0, "a number > 0"),
            "max_grad_norm": (lambda v: v > 0, "a number > 0"),
            "alpha": (lambda v: v >= 0, "a number >= 0"),
            "priority_eps": (lambda v: v > 0, "a number > 0"),
            "double": (lambda v: isinstance(v, bool), "a bool"),
            "hidden": (lambda v: bool(v) and all(isinstance(h, int) and h >= 1 for h in v),
                       "positive ints"),
            "backend": (lambda v: v in BACKENDS, f"one of {BACKENDS}"),
        })
