"""The typed, validated configuration of the SAC agent: Stable-Baselines3's SAC defaults
(256-256 ReLU networks, Adam 3e-4, batch 256, τ 0.005, γ 0.99, one gradient step per
environment step, automatic entropy tuning towards -|A|), and per-environment defaults shipped
with the package (`configs/sac.toml`: Pendulum's and the MuJoCo tasks' settings), which
`SACConfig.for_env(env_id)` and `metagraph train ENV --algo sac` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from components.agents import config_checks as checks
from components.agents.agent_settings import AgentSettings
from components.agents.config_checks import Rule, is_int

ENV_DEFAULTS = Path(__file__).with_name("configs") / "sac.toml"


@dataclasses.dataclass(frozen=True)
class SACConfig(AgentSettings):
    """The hyperparameters of `SACAgent` (each field's comment says what it sets); `from_dict`
    refuses unknown keys, `for_env` starts from an environment's shipped defaults. The
    update-to-data ratio is `updates_per_iteration / (num_envs * rollout)` gradient steps per
    environment step (1 by default, as Stable-Baselines3's and CleanRL's SAC)."""
    defaults_file: ClassVar[Path] = ENV_DEFAULTS  # `for_env`'s per-environment defaults
    num_envs: int = 1
    rollout: int = 1              # environment steps per environment and iteration
    updates_per_iteration: int = 1  # gradient steps (critic, actor, α, target) per iteration
    learning_starts: int = 5_000  # environment steps of uniformly random actions, no updates
    buffer_size: int = 1_000_000
    batch_size: int = 256
    gamma: float = 0.99
    tau: float = 0.005            # Polyak averaging of the target critics, per gradient step
    learning_rate: float = 3e-4   # Adam's, for the actor, the critics and log α
    max_grad_norm: float = 0.0    # unclipped, as Stable-Baselines3's SAC
    hidden: tuple[int, ...] = (256, 256)  # actor's and each critic's ReLU layers
    critics: int = 2              # Q-networks in the critic; their minimum is used
    autotune: bool = True         # learn α towards the target entropy; false: α stays alpha_init
    alpha_init: float = 1.0       # the initial entropy temperature α
    target_entropy_scale: float = 1.0  # target entropy = -scale * |A| (1: Haarnoja et al.'s)
    iterations_per_call: int = 1_000  # iterations fused into one executable call

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "learning_starts": (lambda v: is_int(v) and v >= 0, "an int >= 0"),
            "buffer_size": (lambda v: is_int(v) and self.num_envs * self.rollout <= v
                            <= checks.MAX_BUFFER, f"an int >= num_envs * rollout (one iteration's "
                            f"transitions) and <= {checks.MAX_BUFFER}"),
            "batch_size": (lambda v: is_int(v) and 1 <= v <= self.buffer_size,
                           "an int in [1, buffer_size] (a batch is sampled from the buffer)"),
            "tau": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "critics": checks.POSITIVE_INT,
            "alpha_init": checks.POSITIVE,
            "target_entropy_scale": checks.NON_NEGATIVE,
        }
