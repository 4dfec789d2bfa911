"""The typed, validated configuration of the path-reweighting agent, with per-environment
defaults shipped with the package (`configs/reweight.toml`: the games' self-play settings),
which `ReweightConfig.for_env(env_id)` and `metagraph train ENV --algo reweight` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from components.agents import config_checks as checks
from components.agents.agent_settings import AgentSettings
from components.agents.config_checks import Rule, is_int
from components.agents.renamed_fields import renamed_fields
from components.reweighting import SCHEMES

QUALITIES = ("return", "max_height", "return_and_height", "quick_outcome", "margin")


@renamed_fields({"num_paths": "num_envs"})
@dataclasses.dataclass(frozen=True)
class ReweightConfig(AgentSettings):
    """The hyperparameters of `ReweightAgent` (each field's comment says what it sets);
    `from_dict` refuses unknown keys."""
    # `for_env`'s per-environment defaults (the games')
    defaults_file: ClassVar[Path] = Path(__file__).with_name("configs") / "reweight.toml"
    num_envs: int = 128           # N paths (environments) per iteration, one episode each
    scheme: str = "elite"         # reweighting scheme (components.reweighting.SCHEMES)
    fraction: float = 0.15        # elite fraction
    temperature: float = 1.0      # exponential scheme: w ∝ exp(q / (temperature · std q))
    # q(p): the path's return; (MountainCar) the highest position it reached; or the return
    # plus 100 x that height (ranks failed paths by height, successful ones by speed); games:
    # "return" is the outcome for the learner, "quick_outcome" ranks wins by speed too,
    # "margin" by the final stone margin (Othello's disc margin)
    quality: str = "return"
    learning_rate: float = 3e-3
    fit_steps: int = 20           # gradient steps of weighted maximum likelihood per iteration
    fit_paths: int = 32           # M paths resampled from Q (∝ w) for the fit
    max_grad_norm: float = 1.0
    # self-play on a game: earlier policies kept as opponents, one taken every snapshot_every
    # iterations
    pool_size: int = 4
    snapshot_every: int = 10
    explore: float = 0.1          # self-play: probability of a uniformly random legal move
    fit_explored: bool = True     # self-play: fit the learner's random (explore) moves too
    # self-play: the learner's moves chosen by a search of this many simulations (Gumbel
    # MuZero) with the policy as its prior and `search_rollouts` random playouts valuing each
    # position it expands (`components.agents.policy_search`); 0: the policy's own samples
    search_simulations: int = 0
    search_rollouts: int = 4

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "num_envs": (lambda v: is_int(v) and 2 <= v <= checks.MAX_ENVS,
                          f"an int in [2, {checks.MAX_ENVS}]"),
            "scheme": (lambda v: v in SCHEMES, f"one of {SCHEMES}"),
            "fraction": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
            "temperature": checks.POSITIVE,
            "quality": (lambda v: v in QUALITIES, f"one of {QUALITIES}"),
            "fit_steps": checks.POSITIVE_INT,
            "fit_paths": (lambda v: isinstance(v, int) and 1 <= v <= self.num_envs,
                          f"an int in [1, num_envs={self.num_envs}]"),
            "pool_size": checks.POSITIVE_INT,
            "snapshot_every": checks.POSITIVE_INT,
            "explore": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
            "search_simulations": (lambda v: is_int(v) and 0 <= v <= 4096,
                                   "an int in [0, 4096]"),
            "search_rollouts": (lambda v: checks.PLAYOUTS[0](v) and v >= 1,
                                f"{checks.PLAYOUTS[1].replace('[0,', '[1,')}"),
        }
