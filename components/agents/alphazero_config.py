"""The typed, validated configuration of the AlphaZero agent (Gumbel MuZero self-play on the
native two-player games), with per-game defaults shipped with the package
(`configs/alphazero.toml`: each game's playouts), which
`AlphaZeroConfig.for_env(env_id)` and `metagraph train GAME --algo alphazero` start from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from components.agents import config_checks as checks
from components.agents.agent_settings import AgentSettings
from components.agents.config_checks import Rule
from components.agents.renamed_fields import renamed_fields
from components.networks.policy_value_network import TORSOS

DOORS = ("native",)  # the search steps the games through the in-graph door
MAX_SIMULATIONS = 65_536
SIMULATIONS: Rule = (lambda v: 1 <= v <= MAX_SIMULATIONS,
                     f"an int in [1, {MAX_SIMULATIONS:,}] (the search tree holds every "
                     f"simulation's node for every game at once)")


@renamed_fields({"num_games": "num_envs"})
@dataclasses.dataclass(frozen=True)
class AlphaZeroConfig(AgentSettings):
    """The hyperparameters of `AlphaZeroAgent` (each field's comment says what it sets);
    `from_dict` refuses unknown keys, and a bad value is refused naming its field."""
    # `for_env`'s per-game defaults (each game's playouts)
    defaults_file: ClassVar[Path] = Path(__file__).with_name("configs") / "alphazero.toml"
    num_envs: int = 64            # self-play games stepped at once
    num_steps: int = 48           # moves of every game per iteration
    num_simulations: int = 32     # search simulations per self-play move
    eval_simulations: int = 64    # search simulations per move when playing a trained agent
    #                               (0: the network alone, its greedy legal move, no search)
    max_considered_actions: int = 16  # actions sequential halving considers at the root
    eval_max_considered_actions: int | None = None  # the same when playing (None: as above)
    eval_prior_temperature: float = 1.0  # when playing, the network's logits divided by it
    #                               before the search reads them (> 1: a flatter prior)
    rollouts: int = 0             # native random playouts mixed into each expanded node's
    eval_rollouts: int = 0        #   value in self-play's search / when playing (0: none)
    rollout_weight: float = 0.5   # the playouts' share of those values (AlphaGo's lambda)
    eval_rollout_weight: float | None = None  # the same when playing (None: rollout_weight)
    gumbel_scale: float = 1.0     # Gumbel noise of self-play's root (exploration)
    explore: float = 0.0          # self-play: probability of playing a uniformly random legal
    #                               move instead of the search's (its policy still recorded)
    buffer_size: int = 65536      # positions the replay keeps
    batch_size: int = 256         # positions per update
    updates_per_iteration: int = 32
    augment: bool = False         # learn each sampled position under a random one of its
    #                               board's symmetries (the game's EnvSpec.symmetries) or
    #                               as it is (AlphaGo Zero's data augmentation)
    learning_rate: float = 1e-3
    anneal_lr: bool = False       # the rate falls linearly to 0 over the run's updates
    max_grad_norm: float = 1.0
    value_coef: float = 1.0       # weight of the value's squared error
    search_value: float = 0.0     # the search's root value's share in the value target:
    #                               (1 - w) x the game's outcome + w x the search's value; with
    #                               w > 0 a position whose game goes on past the iteration is
    #                               learnt too, from the search's value alone (0: AlphaZero's
    #                               outcome, such positions not learnt)
    l2: float = 1e-4              # L2 penalty on the network's weights
    torso: str = "mlp"            # the network's torso: "mlp" or "residual" (conv tower)
    hidden: tuple[int, ...] = (128, 128)  # MLP widths (a residual torso's dense layer: last)
    channels: int = 32            # residual torso's channels
    blocks: int = 2               # residual torso's blocks
    iterations_per_call: int = 1  # iterations fused into one executable call
    door: str = "native"          # the games' door: only the in-graph native one

    def rules(self) -> dict[str, Rule]:
        """Each field's rule beyond its type (`AgentSettings.rules` and its own)."""
        return {
            **super().rules(),
            "num_simulations": SIMULATIONS,
            "eval_simulations": (lambda v: v == 0 or SIMULATIONS[0](v),
                                 f"0 (the network alone) or {SIMULATIONS[1]}"),
            "max_considered_actions": (lambda v: v >= 2, "an int >= 2"),
            "eval_max_considered_actions": (lambda v: v is None or v >= 2,
                                            "None (as max_considered_actions) or an int >= 2"),
            "eval_prior_temperature": checks.POSITIVE,
            "rollouts": checks.PLAYOUTS,
            "eval_rollouts": checks.PLAYOUTS,
            "rollout_weight": checks.UNIT,
            "eval_rollout_weight": (lambda v: v is None or checks.UNIT[0](v),
                                    f"None (as rollout_weight) or {checks.UNIT[1]}"),
            "gumbel_scale": checks.NON_NEGATIVE,
            "explore": checks.UNIT,
            "buffer_size": (lambda v: checks.BUFFER_SIZE[0](v)
                            and v >= self.num_envs * self.num_steps,
                            f"{checks.BUFFER_SIZE[1]}, at least num_envs * num_steps (an "
                            f"iteration's positions)"),
            "search_value": checks.UNIT,
            "l2": checks.NON_NEGATIVE,
            "torso": (lambda v: v in TORSOS, f"one of {TORSOS}"),
            "channels": checks.POSITIVE_INT,
            "blocks": (lambda v: v >= 0, "an int >= 0"),
            "door": (lambda v: v in DOORS, f"one of {DOORS} (the search steps the games "
                                           f"inside the program)"),
        }
