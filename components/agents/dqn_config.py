"""The typed, validated configuration of the DQN agent."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from components.agents import config_checks as checks
from components.agents.agent_settings import ConvolutionSettings
from components.agents.config_checks import Rule


@dataclasses.dataclass(frozen=True)
class DQNConfig(ConvolutionSettings):
    """The hyperparameters of `DQNAgent` (each field's comment says what it sets); `from_dict`
    refuses unknown keys."""
    # `for_env`'s per-environment defaults (CartPole's and MinAtar's recipes)
    defaults_file: ClassVar[Path] = Path(__file__).with_name("configs") / "dqn.toml"
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
    replay_frames: bool = False   # observations that stack frames (Atari's [4, 84, 84]) kept
    #                               one frame a step (`FrameStackReplay`): an eighth of the
    #                               memory; a uniform replay (alpha 0) of the rollout's steps
    td_loss: str = "huber"        # the TD error's penalty: "huber" (delta 1) or "squared"
    iterations_per_call: int = 64

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "n_step": checks.POSITIVE_INT,
            "buffer_size": checks.BUFFER_SIZE,
            "target_every": checks.POSITIVE_INT,
            "learning_starts": (lambda v: v >= 0, "an int >= 0"),
            "epsilon_start": checks.UNIT, "epsilon_end": checks.UNIT,
            "beta": checks.UNIT,
            "epsilon_fraction": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "alpha": checks.NON_NEGATIVE,
            "priority_eps": checks.POSITIVE,
            "double": (lambda v: isinstance(v, bool), "a bool"),
            "bootstrap_truncated": (lambda v: isinstance(v, bool), "a bool"),
            "td_loss": (lambda v: v in ("huber", "squared"), "'huber' or 'squared'"),
            "replay_frames": (lambda v: not v or (self.alpha == 0
                                                  and not self.bootstrap_truncated),
                              "false with alpha > 0 or bootstrap_truncated (frames shared "
                              "between transitions: a uniform replay of the rollout's own "
                              "next observations)"),
        }
