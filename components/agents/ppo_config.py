"""The typed, validated configuration of the PPO agent: PureJaxRL's defaults for CartPole,
and per-environment defaults shipped with the package (`configs/ppo.toml`: the MuJoCo tasks'
continuous-control settings), which `PPOConfig.for_env(env_id)` and `metagraph train ENV --algo
ppo` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from components.agents import config_checks as checks
from components.agents.agent_settings import ConvolutionSettings
from components.agents.config_checks import Rule

ENV_DEFAULTS = Path(__file__).with_name("configs") / "ppo.toml"
LOG_STD_MODES = ("network", "parameter")
ACTIVATIONS = ("tanh", "relu")
VALUE_MODES = ("separate", "shared")


@dataclasses.dataclass(frozen=True)
class PPOConfig(ConvolutionSettings):
    """The hyperparameters of `PPOAgent`: PureJaxRL's CartPole defaults plus `reward_scale`
    and the continuous-control details, off by default (each field's comment says what it
    sets); `from_dict` refuses unknown keys, `for_env` starts from an environment's shipped
    defaults."""
    defaults_file: ClassVar[Path] = ENV_DEFAULTS  # `for_env`'s per-environment defaults
    num_steps: int = 128          # rollout length per environment and iteration
    epochs: int = 4
    minibatches: int = 4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    reward_scale: float = 1.0     # rewards are multiplied by this for learning (not reporting)
    # the value estimate: "separate" (an MLP of `hidden` over the observations) or "shared"
    # (a head on the policy's torso)
    value: str = "separate"
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

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "epochs": checks.POSITIVE_INT,
            "minibatches": (lambda v: isinstance(v, int) and v >= 1
                            and (self.num_envs * self.num_steps) % v == 0,
                            "an int >= 1 dividing num_envs * num_steps"),
            "gae_lambda": checks.UNIT,
            "clip": checks.POSITIVE,
            "value": (lambda v: v in VALUE_MODES, f"one of {VALUE_MODES}"),
            "activation": (lambda v: v in ACTIVATIONS, f"one of {ACTIVATIONS}"),
            "log_std": (lambda v: v in LOG_STD_MODES, f"one of {LOG_STD_MODES}"),
            "clip_observations": checks.POSITIVE,
            "clip_rewards": checks.POSITIVE,
        }
