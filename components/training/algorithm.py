"""`Algorithm`, `DistributedAlgorithm` and `Distributed`: the whole contract between an
algorithm and what runs it.

The trainer (`train`), `evaluate`, the `metagraph` command and the distributed runner know an
algorithm only through these classes: they call the methods below and nothing else. An
`Algorithm` runs its own calls (`build`, `run`, an optional `start`: path reweighting, PPO,
DQN, SAC, AlphaZero), and may have a distributed form (`distributed()`: a `Distributed`,
samplers and a learner); a `DistributedAlgorithm` only runs as samplers and a learner
(IMPALA). Both derive from `AlgorithmBase`, what every algorithm declares. The built-in
algorithms are ordinary subclasses, and a user's own algorithm, in the user's own module, runs
everywhere they do:

    metagraph train CartPole-v1 --algo mypackage.module:MyAlgorithm --out runs/mine
    metagraph evaluate runs/mine
    metagraph train CartPole-v1 --algo path/to/my_algorithm.py:MyAlgorithm --out runs/mine

A run is a loop of calls: `start(exe, key)` once at the beginning of a new run (not on
resume), then `run(exe, config, key, iterations)` until the run's steps are taken, each call
returning one metrics row per iteration it did. `exe` is the executor of the graph that
`build` returned (see `backends.xla.lower`); its state is what the checkpoints hold.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import jax

from components.training.metrics import Row
from metagraph.graph import MetaGraph


class AlgorithmConfig(Protocol):
    """What a config class offers (the agents' configs do, by deriving from
    `components.agents.AgentConfig`): construction from a dict of JSON/TOML values, with
    unknown keys refused, and back; `door` names the door its environments are stepped
    through ("native", "jax", "host" or "gymnasium"). A config may also hold `env_kwargs`,
    the environment's keyword arguments (`metagraph train --env-kwargs KEY=VALUE`), which
    `evaluate`, videos and `--eval-every` make their environments with (`env_kwargs_of`)."""

    door: str

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> AlgorithmConfig:
        """The config from a dict (a run directory's, the command line's), unknown keys
        refused."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-serialisable dict (`from_dict`'s inverse)."""
        ...


class Executor(Protocol):
    """What an algorithm is given as `exe`: an executor of the graph its `build` returned
    (`backends.xla.XlaExecutor`, `backends.eager.EagerExecutor`, a distributed learner's). It
    holds the state; each root API is a method (`exe.train(key, iterations)`), or
    `exe.call(name, ...)`. With `--seeds K`, `seeds` is K and every input and output has a
    leading seed axis; else it is None."""

    graph: MetaGraph
    seeds: int | None
    state: Any

    def call(self, api: str, *args: Any, **kwargs: Any) -> Any:
        """Call root API `api`; the state is swapped for the new one."""
        ...

    def get_state(self, path: str | None = None) -> Any:
        """The state (of the component at scope `path`), as host arrays."""
        ...

    def get_states(self, path: Any) -> dict[str, Any]:
        """The states of a component and of every component inside it, by scope."""
        ...

    def __getattr__(self, api: str) -> Callable[..., Any]:
        """Root API `api` as a method."""
        ...


def env_kwargs_of(config: Any) -> dict[str, Any]:
    """The environment's keyword arguments `config` holds (its `env_kwargs`), or {} for a
    config without them (a user's algorithm whose environments take none)."""
    return dict(getattr(config, "env_kwargs", None) or {})


class AlgorithmBase(abc.ABC):
    """What every algorithm declares, as the trainer, `evaluate`, `load`, the CLI and the
    distributed runner see it: its config (`config_class`), its learner's graph (`build`) and
    how it acts; the other members have the defaults documented on them. Subclass `Algorithm`
    (an algorithm that runs its own calls: `run`) or `DistributedAlgorithm` (one that only
    runs as samplers and a learner: `distributed()`), not this class.

    The graph `build` returns must have the root API named by `evaluation_api` (`greedy` by
    default), taking a batch of `eval_envs` observations (float32[eval_envs, *obs_shape]) and
    returning their actions: `evaluate`, `metagraph evaluate`, `load(...).predict`,
    `metagraph export` and evaluation while training act with it. A root API
    `act(observation, key)` giving sampled actions is optional: `--stochastic` and
    `predict(deterministic=False)` use it where it exists.
    """

    config_class: ClassVar[type]
    """The config dataclass (`AlgorithmConfig`): `metagraph train --config/--set` make one
    with `config_class.from_dict(values)`, and the run directory records `to_dict()`."""

    evaluation_api: ClassVar[str] = "greedy"
    """The root API that acts in evaluation: `api(observation) -> action` for a batch of
    observations. The trainer checks the graph has it before training."""

    progress_metrics: ClassVar[tuple[str, ...]] = ()
    """Names of row numbers the progress bar shows beside the mean return (`bits` for path
    reweighting); the trainer knows no algorithm's metrics otherwise."""

    precompile: ClassVar[tuple[str, ...]] = ()
    """Root APIs the trainer compiles on a worker thread while the state initialises, in the
    order the loop first calls them (`backends.xla.lower(precompile=...)`)."""

    acting_settings: ClassVar[tuple[str, ...]] = ()
    """Config settings that change how a trained agent acts and nothing it learned (a search
    agent's simulations a move): the only ones `load(overrides=...)` and `metagraph
    evaluate/play --set` take; any other would change nothing (gamma) or act with another
    network than the one trained (activation)."""

    def config(self, env_id: str, values: dict[str, Any]) -> Any:
        """The config `metagraph train ENV` runs with, from the `--config` / `--set` values:
        by default `config_class.for_env(env_id, values)` where the class has it (an
        `AgentConfig`: the environment's shipped defaults from its `defaults_file`, PPO's
        MuJoCo settings, the games' recipes, under the user's values), else
        `config_class.from_dict(values)`."""
        for_env = getattr(self.config_class, "for_env", None)
        return for_env(env_id, values) if for_env is not None \
            else self.config_class.from_dict(values)

    @abc.abstractmethod
    def build(self, env_id: str, config: Any, total_steps: int, eval_envs: int) -> MetaGraph:
        """The learner's meta-graph (`mg.build(agent, spaces, apis=[...])`) for a run of
        `total_steps` environment steps; `greedy`'s observations are a batch of `eval_envs`."""

    def steps_per_iteration(self, config: Any) -> int | None:
        """The environment steps of one iteration, when fixed: a run of S steps then does
        exactly max(1, S // steps_per_iteration) whole iterations. None (the default): the
        run goes on until its rows have counted S steps (episodes of any length)."""
        return None

    def game_player(self, agent: Any, deterministic: bool = True) -> Any:
        """How this algorithm's trained agent plays a two-player game (`metagraph evaluate RUN
        --opponent ...`): a `GamePlayer` (`components.training.game_player`), a function
        `(state, key) -> int32[n]` giving a legal action for the player to move in each game
        of `state`, a `components.envs.games.self_play.GameState` batch (with `env_state`, the
        native in-graph state a search can step from, `observation`, `current_player` and
        `legal_action_mask`). `agent` is the run's `TrainedAgent` (`load(RUN)`: its `graph`,
        `state`, `config`, `executor`, `predict`). Default (`policy_player`): the acting API
        (`evaluation_api`, or `act` when not `deterministic`) on the games' observations by
        name (`game_player.game_observation`: {"obs": the planes flattened, "legal": the legal
        mask}), i.e. the argmax of the masked logits of the self-play policy agents. A search
        agent overrides it to search from `state.env_state`."""
        from components.training.game_player import policy_player

        return policy_player(agent, deterministic)

    def distributed(self) -> Distributed | None:
        """The distributed form (samplers and a learner, `Distributed`), or None (the
        default): the algorithm then refuses `--num-samplers`, `--runner ray` and `--runner
        pipeline` with a clear error. The built-ins' samplers build `self.agent(...)`."""
        return None

    def door(self, config: Any) -> str:
        """The door the run's environments are stepped through: decides the environments
        `evaluate` uses (the native host pool, or Gymnasium's for "gymnasium") and whether
        several seeds can train in one vmapped executable (only in-graph doors, "native" and
        "jax"). Default: `config.door`."""
        return config.door


class Algorithm(AlgorithmBase):
    """An algorithm that runs its own calls: `build` and `run`, and an optional `start` (the
    built-in path reweighting, PPO, DQN, SAC and AlphaZero). It may also have a distributed
    form, its `distributed()` (`--runner ray|pipeline`, `--num-samplers K`)."""

    @abc.abstractmethod
    def run(self, exe: Executor, config: Any, key: jax.Array, iterations: int | None
            ) -> list[Row]:
        """Train for one call of the loop and return one metrics row per iteration done (at
        least one). `iterations` is how many iterations the run has left when
        `steps_per_iteration` is not None (do at most that many), else None. Each row is a
        `Row` (`components.training.metrics`): `steps` (the environment steps the iteration
        took, all seeds' mean, an int >= 1), `episode_return_mean` (None when no episode
        ended), and any other numbers to record in `extra` (`loss`, `bits`, ...); a dict
        with those keys is accepted too. The trainer checks every row before it counts it
        and stops with one line naming the row otherwise. `key` is the call's key (one per
        seed with `--seeds`)."""

    def start(self, exe: Executor, key: jax.Array) -> None:
        """Called once before the first `run` of a new run: e.g. reset the environments held
        in the state. On resume it is called again only where the run's door keeps its
        environments in a pool ("host", "gymnasium": the checkpoint cannot hold their state,
        so the running episodes start again); in-graph doors continue from the checkpoint.
        Default: nothing."""
        return None


class DistributedAlgorithm(AlgorithmBase):
    """An algorithm that only runs as samplers and a learner (IMPALA): `build` (the learner's
    graph) and `distributed()`; with no runner asked for, its samplers run in this process,
    sampling and learning in turn."""

    @abc.abstractmethod
    def distributed(self) -> Distributed:
        """Its samplers and learner (`Distributed`)."""


class Distributed(abc.ABC):
    """The distributed form of an algorithm: K samplers, each with its own graph, executable
    and environments (in this process or as Ray actors), feed one learner.

    The learner's executor is the one of `Algorithm.build`'s graph. After each update the
    runner publishes the state of the learner's component at `shared` (an attribute path
    from the root, e.g. "policy"), and each sampler loads it into the component at the same
    path of its own graph before it samples again.
    """

    sample_api: ClassVar[str]
    """The sampler graph's root API that takes a key and returns a batch (a dict of arrays)."""

    shared: ClassVar[str | tuple[str, ...]] = "policy"
    """The attribute path (from the root component) of the component whose state the
    learner sends to the samplers, or several (a policy and its observation statistics); a
    path whose attribute is None in a configuration (no preprocessor) is left out."""

    synchronous: ClassVar[bool] = False
    """True: every update takes one batch from every sampler, all sampled with the current
    weights (on-policy). False: an update per batch, in the order they arrive, each maybe a
    few weight versions old (the runner reports the policy lag)."""

    @abc.abstractmethod
    def build_sampler(self, env_id: str, config: Any, num_samplers: int) -> MetaGraph:
        """One sampler's meta-graph, with the API `sample_api`."""

    @abc.abstractmethod
    def update(self, exe: Executor, config: Any, batches: list[dict[str, Any]],
               key: jax.Array) -> list[Row]:
        """Learn from `batches` (one with `synchronous=False`, one per sampler in sampler
        order with `synchronous=True`) and return metrics rows, as `Algorithm.run` does.
        `components.training.inputs_for(exe.graph, api, batch)` picks an API's
        inputs out of a batch by the names of its `ApiSignature`."""

    def check(self, config: Any, num_samplers: int) -> None:
        """Raise ValueError for settings this algorithm cannot run with `num_samplers`
        samplers. Default: accept all."""
        return None

    def build_learner(self, algorithm: AlgorithmBase, env_id: str, config: Any, total_steps: int,
                      eval_envs: int) -> MetaGraph:
        """The learner's meta-graph, which must hold the same state as `algorithm.build`'s
        (its checkpoints are loaded by `load` through `build`). Default: `algorithm.build`,
        whose graph then has the APIs `update` calls; override it to add them only to
        distributed runs."""
        return algorithm.build(env_id, config, total_steps, eval_envs)

    def start_sampler(self, exe: Executor, key: jax.Array) -> None:
        """Called once when a sampler starts (e.g. reset its environments). Default: nothing."""
        return None

    def batch_axes(self, graph: MetaGraph) -> dict[str, dict[str, int]] | None:
        """The batch axis of each input of the learner's APIs, to split them over several
        local devices (`backends.xla.DataParallel`); None (the default): one device."""
        return None


def distributed_form(algorithm: AlgorithmBase) -> Distributed | None:
    """`algorithm.distributed()`, the algorithm's distributed form or None. An algorithm
    written for the release before, whose `distributed` is the form itself (an attribute or
    property, not a method), still works, with a DeprecationWarning saying what to write."""
    form = algorithm.distributed
    if isinstance(form, Distributed) or form is None:
        warnings.warn(f"{type(algorithm).__name__}.distributed is an attribute; it is a method "
                      f"now: write `def distributed(self): return {type(form).__name__}(...)`. "
                      f"The attribute stops working in the next release.", DeprecationWarning,
                      stacklevel=2)
        return form
    return form()
