"""The typed, validated configuration of the PPO agent (PureJaxRL's defaults for CartPole)."""

from __future__ import annotations

import dataclasses

from components.agents.config_checks import (
    ENV_DOOR,
    HIDDEN,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    UNIT,
    AgentConfig,
    check_fields,
)


@dataclasses.dataclass(frozen=True)
class PPOConfig(AgentConfig):
    """The hyperparameters of `PPOAgent`: PureJaxRL's CartPole defaults plus `reward_scale`
    (each field's comment says what it sets); `from_dict` refuses unknown keys."""
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
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium

    def __post_init__(self) -> None:
        check_fields(self, {
            "num_envs": POSITIVE_INT,
            "num_steps": POSITIVE_INT,
            "epochs": POSITIVE_INT,
            "minibatches": (lambda v: isinstance(v, int) and v >= 1
                            and (self.num_envs * self.num_steps) % v == 0,
                            "an int >= 1 dividing num_envs * num_steps"),
            "learning_rate": POSITIVE,
            "gamma": UNIT,
            "gae_lambda": UNIT,
            "clip": POSITIVE,
            "entropy_coef": NON_NEGATIVE,
            "value_coef": NON_NEGATIVE,
            "max_grad_norm": POSITIVE,
            "reward_scale": POSITIVE,
            "hidden": HIDDEN,
            "iterations_per_call": POSITIVE_INT,
            "door": ENV_DOOR,
        })
