"""The typed, validated configuration of the SAC agent: Stable-Baselines3's SAC defaults
(256-256 ReLU networks, Adam 3e-4, batch 256, τ 0.005, γ 0.99, one gradient step per
environment step, automatic entropy tuning towards -|A|), and per-environment defaults shipped
with the package (`configs/sac.toml`: Pendulum's and the MuJoCo tasks' settings), which
`SACConfig.for_env(env_id)` and `metagraph train ENV --algo sac` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from components.agents.config_checks import (
    ENV_DOOR,
    HIDDEN,
    MAX_BUFFER,
    NON_NEGATIVE,
    NUM_ENVS,
    POSITIVE,
    POSITIVE_INT,
    UNIT,
    AgentConfig,
    Rule,
    is_int,
)

ENV_DEFAULTS = Path(__file__).with_name("configs") / "sac.toml"


@dataclasses.dataclass(frozen=True)
class SACConfig(AgentConfig):
    """The hyperparameters of `SACAgent` (each field's comment says what it sets); `from_dict`
    refuses unknown keys, `for_env` starts from an environment's shipped defaults. The
    update-to-data ratio is `updates_per_iteration / (num_envs * rollout)` gradient steps per
    environment step (1 by default, as Stable-Baselines3's and CleanRL's SAC)."""
    num_envs: int = 1
    rollout: int = 1              # environment steps per environment and iteration
    updates_per_iteration: int = 1  # gradient steps (critic, actor, α, target) per iteration
    learning_starts: int = 5_000  # environment steps of uniformly random actions, no updates
    buffer_size: int = 1_000_000
    batch_size: int = 256
    gamma: float = 0.99
    tau: float = 0.005            # Polyak averaging of the target critics, per gradient step
    learning_rate: float = 3e-4   # Adam's, for the actor, the critics and log α
    hidden: tuple[int, ...] = (256, 256)  # actor's and each critic's ReLU layers
    critics: int = 2              # Q-networks in the critic; their minimum is used
    autotune: bool = True         # learn α towards the target entropy; false: α stays alpha_init
    alpha_init: float = 1.0       # the initial entropy temperature α
    target_entropy_scale: float = 1.0  # target entropy = -scale * |A| (1: Haarnoja et al.'s)
    iterations_per_call: int = 1_000  # iterations fused into one executable call
    door: str = "native"          # environment door: native (FFI), jax, host, gymnasium
    # the environment's keyword arguments (`--env-kwargs KEY=VALUE`), on every door
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    defaults_file: ClassVar[Path] = ENV_DEFAULTS  # `for_env`'s per-environment defaults

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentConfig.rules`)."""
        return {
            "num_envs": NUM_ENVS,
            "rollout": POSITIVE_INT,
            "updates_per_iteration": POSITIVE_INT,
            "learning_starts": (lambda v: is_int(v) and v >= 0, "an int >= 0"),
            "buffer_size": (lambda v: is_int(v) and self.num_envs * self.rollout <= v
                            <= MAX_BUFFER, f"an int >= num_envs * rollout (one iteration's "
                            f"transitions) and <= {MAX_BUFFER}"),
            "batch_size": (lambda v: is_int(v) and 1 <= v <= self.buffer_size,
                           "an int in [1, buffer_size] (a batch is sampled from the buffer)"),
            "gamma": UNIT,
            "tau": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "learning_rate": POSITIVE,
            "hidden": HIDDEN,
            "critics": POSITIVE_INT,
            "alpha_init": POSITIVE,
            "target_entropy_scale": NON_NEGATIVE,
            "iterations_per_call": POSITIVE_INT,
            "door": ENV_DOOR,
        }
