"""The typed, validated configuration of the DQN agent."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from components.agents.config_checks import (
    BUFFER_SIZE,
    CNN_CHANNELS,
    CNN_PADDING,
    CNN_SIZES,
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
class DQNConfig(AgentConfig):
    """The hyperparameters of `DQNAgent` (each field's comment says what it sets); `from_dict`
    refuses unknown keys."""
    num_envs: int = 4
    rollout: int = 8              # environment steps per environment and iteration
    n_step: int = 3
    gamma: float = 0.99
    buffer_size: int = 50_000
    batch_size: int = 64
    updates_per_iteration: int = 4
    learning_starts: int = 0      # environment steps before the first update
    learning_rate: float = 5e-4
    anneal_lr: bool = False       # the rate falls linearly to 0 over the run's updates
    max_grad_norm: float = 10.0
    target_every: int = 125       # iterations between target-network copies
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_fraction: float = 0.3  # of the training steps over which epsilon decays
    alpha: float = 0.6            # prioritised replay exponents
    beta: float = 0.4
    priority_eps: float = 1e-3
    double: bool = True
    bootstrap_truncated: bool = False  # a step cut by the time limit bootstraps (not terminal)
    td_loss: str = "huber"        # the TD error's penalty: "huber" (delta 1) or "squared"
    hidden: tuple[int, ...] = (64, 64)
    # convolutions in front of `hidden`: the Q-network a `components.networks.CNN` (ReLU) over
    # the observation's planes, its last layer linear; () for the MLP
    cnn_channels: tuple[int, ...] = ()
    cnn_kernel: int | tuple[int, ...] = 3  # the CNN's kernel size (or one per convolution)
    cnn_stride: int | tuple[int, ...] = 1  # the CNN's stride (or one per convolution)
    cnn_padding: str = "SAME"     # the convolutions' padding: SAME or VALID (Atari's Nature CNN)
    iterations_per_call: int = 64
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium
    # the environment's keyword arguments (`--env-kwargs KEY=VALUE`), on every door
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    # `for_env`'s per-environment defaults (CartPole's and MinAtar's recipes)
    defaults_file: ClassVar[Path] = Path(__file__).with_name("configs") / "dqn.toml"

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentConfig.rules`)."""
        return {
            "num_envs": NUM_ENVS, "rollout": POSITIVE_INT, "n_step": POSITIVE_INT,
            "buffer_size": BUFFER_SIZE, "batch_size": POSITIVE_INT,
            "updates_per_iteration": POSITIVE_INT, "target_every": POSITIVE_INT,
            "learning_starts": (lambda v: v >= 0, "an int >= 0"),
            "iterations_per_call": POSITIVE_INT,
            "gamma": UNIT, "epsilon_start": UNIT, "epsilon_end": UNIT, "beta": UNIT,
            "epsilon_fraction": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "learning_rate": POSITIVE,
            "max_grad_norm": POSITIVE,
            "alpha": NON_NEGATIVE,
            "priority_eps": POSITIVE,
            "double": (lambda v: isinstance(v, bool), "a bool"),
            "bootstrap_truncated": (lambda v: isinstance(v, bool), "a bool"),
            "td_loss": (lambda v: v in ("huber", "squared"), "'huber' or 'squared'"),
            "hidden": HIDDEN,
            "cnn_channels": CNN_CHANNELS,
            "cnn_kernel": CNN_SIZES,
            "cnn_stride": CNN_SIZES,
            "cnn_padding": CNN_PADDING,
            "door": ENV_DOOR,
        }
