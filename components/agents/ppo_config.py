"""The typed, validated configuration of the PPO agent: PureJaxRL's defaults for CartPole,
and per-environment defaults shipped with the package (`configs/ppo.toml`: the MuJoCo tasks'
continuous-control settings), which `PPOConfig.for_env(env_id)` and `metagraph train ENV --algo
ppo` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from components.agents.config_checks import (
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

ENV_DEFAULTS = Path(__file__).with_name("configs") / "ppo.toml"
LOG_STD_MODES = ("network", "parameter")
ACTIVATIONS = ("tanh", "relu")
VALUE_MODES = ("separate", "shared")


@dataclasses.dataclass(frozen=True)
class PPOConfig(AgentConfig):
    """The hyperparameters of `PPOAgent`: PureJaxRL's CartPole defaults plus `reward_scale`
    and the continuous-control details, off by default (each field's comment says what it
    sets); `from_dict` refuses unknown keys, `for_env` starts from an environment's shipped
    defaults."""
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
    # the value estimate: "separate" (an MLP of `hidden` over the observations) or "shared"
    # (a head on the policy's torso)
    value: str = "separate"
    # convolutions in front of `hidden`: a CNN torso (`components.networks.CNN`, ReLU) over the
    # observation's planes; () for the MLP torso
    cnn_channels: tuple[int, ...] = ()
    cnn_kernel: int | tuple[int, ...] = 3  # the CNN's kernel size (or one per convolution)
    cnn_stride: int | tuple[int, ...] = 1  # the CNN's stride (or one per convolution)
    cnn_padding: str = "SAME"     # the convolutions' padding: SAME or VALID (Atari's Nature CNN)
    activation: str = "tanh"      # of the policy's and value's MLPs: tanh or relu
    orthogonal_init: bool = False  # orthogonal weights (gains sqrt 2, 0.01 policy, 1 value)
    log_std: str = "network"      # Gaussian log std: "network" (state-dependent) or "parameter"
    log_std_init: float = 0.0     # the initial log std with log_std = "parameter"
    normalise_observations: bool = False  # running mean/std observation normaliser in front
    clip_observations: float = 10.0  # bound of the normalised observations
    normalise_rewards: bool = False  # rewards / running std of the discounted return
    clip_rewards: float = 10.0    # bound of the normalised rewards
    clip_actions: bool = False    # clip sampled actions to the Box's bounds at the environment
    bootstrap_truncated: bool = False  # add gamma * V(final obs) to a truncating step's reward
    iterations_per_call: int = 32  # iterations fused into one executable call
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium
    # the environment's keyword arguments (`--env-kwargs KEY=VALUE`), on every door
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    defaults_file: ClassVar[Path] = ENV_DEFAULTS  # `for_env`'s per-environment defaults

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentConfig.rules`)."""
        return {
            "num_envs": NUM_ENVS,
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
            "value": (lambda v: v in VALUE_MODES, f"one of {VALUE_MODES}"),
            "cnn_channels": CNN_CHANNELS,
            "cnn_kernel": CNN_SIZES,
            "cnn_stride": CNN_SIZES,
            "cnn_padding": CNN_PADDING,
            "activation": (lambda v: v in ACTIVATIONS, f"one of {ACTIVATIONS}"),
            "log_std": (lambda v: v in LOG_STD_MODES, f"one of {LOG_STD_MODES}"),
            "clip_observations": POSITIVE,
            "clip_rewards": POSITIVE,
            "iterations_per_call": POSITIVE_INT,
            "door": ENV_DOOR,
        }
