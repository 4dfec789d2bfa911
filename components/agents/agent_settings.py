"""`AgentSettings`: what every built-in agent's config has, declared and checked once;
`ConvolutionSettings`: the same with a CNN in front of the hidden layers (PPO's and DQN's)."""

from __future__ import annotations

import dataclasses
from typing import Any

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

# The rules of the fields several agents name alike, one meaning each: an agent's config that
# declares one of these fields gets its rule (its own `rules()` may narrow it).
NAMED_RULES: dict[str, Rule] = {
    "num_steps": POSITIVE_INT,            # steps of every environment (or game) an iteration
    "rollout": POSITIVE_INT,              # the same for the off-policy agents
    "gamma": UNIT,                        # the discount
    "batch_size": POSITIVE_INT,           # samples an update
    "updates_per_iteration": POSITIVE_INT,
    "iterations_per_call": POSITIVE_INT,  # iterations fused into one executable call
    "entropy_coef": NON_NEGATIVE,
    "value_coef": NON_NEGATIVE,
    "reward_scale": POSITIVE,
}


@dataclasses.dataclass(frozen=True)
class AgentSettings(AgentConfig):
    """The settings every built-in agent has: how many environments it steps at once (the
    batch: PPO's environments, path reweighting's N paths, AlphaZero's self-play games), their
    door and keyword arguments, its optimizer's rate and gradient clipping (optax's `adam` after
    `clip_by_global_norm`), its networks' widths. An agent's config derives from it, adds its
    own fields, and changes a default by declaring the field again with another value (the
    field keeps its place); its `rules()` extend these (`{**super().rules(), ...}`).
    """
    num_envs: int = 4             # environments stepped at once (path reweighting's N paths,
    #                               AlphaZero's self-play games; an off-policy agent's per
    #                               sampler)
    learning_rate: float = 2.5e-4  # Adam's step size
    max_grad_norm: float = 0.5    # gradients clipped to this global norm first (0: unclipped)
    hidden: tuple[int, ...] = (64, 64)  # the networks' hidden layers' widths
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium
    # the environment's keyword arguments (`--env-kwargs KEY=VALUE`), on every door
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    frame_stack: int = 1          # the last k observations stacked (`FrameStack`); 1: none
    action_repeat: int = 1        # each action taken k times (`ActionRepeat`); 1: once

    def rules(self) -> dict[str, Rule]:
        """The shared fields' rules (`AgentConfig.rules`), and `NAMED_RULES`' for the fields
        of those names this config declares."""
        fields = {field.name for field in dataclasses.fields(self)}
        return {"num_envs": NUM_ENVS, "learning_rate": POSITIVE,
                "max_grad_norm": NON_NEGATIVE, "hidden": HIDDEN, "door": ENV_DOOR,
                "frame_stack": POSITIVE_INT, "action_repeat": POSITIVE_INT,
                **{name: rule for name, rule in NAMED_RULES.items() if name in fields}}


@dataclasses.dataclass(frozen=True)
class ConvolutionSettings(AgentSettings):
    """`AgentSettings` with convolutions in front of `hidden`: the torso a
    `components.networks.CNN` (ReLU) over the observation's planes where `cnn_channels` has
    any, else an MLP."""
    cnn_channels: tuple[int, ...] = ()  # the convolutions' channels; (): no CNN
    cnn_kernel: int | tuple[int, ...] = 3  # the CNN's kernel size (or one per convolution)
    cnn_stride: int | tuple[int, ...] = 1  # the CNN's stride (or one per convolution)
    cnn_padding: str = "SAME"     # the convolutions' padding: SAME or VALID (Atari's Nature CNN)

    def rules(self) -> dict[str, Rule]:
        """The shared fields' rules and the CNN's."""
        return {**super().rules(), "cnn_channels": CNN_CHANNELS, "cnn_kernel": CNN_SIZES,
                "cnn_stride": CNN_SIZES, "cnn_padding": CNN_PADDING}
