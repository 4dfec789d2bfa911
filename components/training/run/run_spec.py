"""`RunSpec`: one training run, worked out once and recorded.

    from components.training import RunSpec, train, resume
    spec = RunSpec.make("CartPole-v1", "ppo", {"num_envs": 8}, steps=100_000, seed=1)
    train(spec, "runs/ppo")               # writes runs/ppo/config.json from spec.record()
    resume("runs/ppo", steps=200_000)      # RunSpec.read(...) of that file, then the loop

`RunSpec.make` is the only place that resolves a run's algorithm (a built-in name,
MODULE:ATTRIBUTE, PATH.py:ATTRIBUTE or an `Algorithm`), its config (the algorithm's defaults for
the environment, updated by a dict of settings, or a config object as given), the canonical id
of its environment (OpenSpiel's names and `metagraph/` prefixes resolved, its `env_kwargs`
checked against it) and its door, and that checks every setting, before anything is built:
`metagraph train` and Python make the same spec the same way. The spec is frozen: the trainer,
the loop and the callbacks read it and never work any of it out again. `record()` is what
`config.json` holds; `RunSpec.read` makes the spec back from it for `--resume`, `load` and
`evaluate`, importing a user's code only when it is named again or trusted (`trusted_code.py`,
`env_module.py`).

Settings of the process, not of the run, are `train`'s own arguments: the devices, the Ray
cluster's address, the progress bar.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.envs import canonical_id
from components.envs import spec as env_spec
from components.envs.engine.catalogue import num_players, resolved_id
from components.envs.functional_doors import IN_GRAPH_DOORS
from components.training.algorithm import (
    AlgorithmBase,
    DistributedAlgorithm,
    distributed_form,
    env_kwargs_of,
)
from components.training.registry import record, resolve
from components.training.run.env_module import (
    env_module_of_run,
    env_module_record,
    import_env_module,
)
from components.training.run.evaluation_settings import EvaluationSettings
from components.training.run.executors import EXECUTORS
from components.training.run.keys import check_seed
from components.training.run.run_dir import RunDir
from components.training.run.trusted_code import (
    algorithm_of_run,
    check_environment_code,
    code_record,
)
from metagraph.checks import positive_int
from metagraph.errors import LoadError


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """Everything that decides what a run computes (see the module docstring). Make one with
    `RunSpec.make` (or `read`); the constructor takes the worked-out values as they are."""

    env_id: str
    """The canonical id (`CartPole-v1`, `ConnectFour-v0`; a Gymnasium id for door
    "gymnasium")."""
    algorithm: AlgorithmBase
    algo: str
    """How the run directory records the algorithm: a built-in name or MODULE:ATTRIBUTE."""
    config: Any
    """The algorithm's config object (`Algorithm.config_class`)."""
    steps: int = 1_000_000
    seed: int = 0
    seeds: int | None = None
    """K seeds `seed` ... `seed + K - 1` trained at once in one executable (vmap), or None."""
    runner: str = "local"
    num_samplers: int | None = None
    """Samplers feeding one learner (a distributed run), or None: the algorithm's `run`."""
    batches_per_request: int = 1
    evaluation: EvaluationSettings | None = None
    track: str | None = None
    """A Weights & Biases project the run is logged to (`wandb_log.py`), or None."""
    executor: str = "xla"
    env_module: str | None = None
    """The module or `.py` file that registers a user's environment (`env_module.py`)."""

    @classmethod
    def make(cls, env_id: str, algo: str | AlgorithmBase = "reweight", config: Any = None, *,
             steps: int = 1_000_000, seed: int = 0, seeds: int | None = None,
             runner: str = "local", num_samplers: int | None = None,
             batches_per_request: int = 1, evaluation: EvaluationSettings | None = None,
             track: str | None = None, executor: str = "xla",
             env_module: str | None = None) -> RunSpec:
        """The spec of a new run of `algo` on `env_id` for `steps` environment steps.
        `config`: the algorithm's config object, or a dict of settings over the algorithm's
        defaults for `env_id` (`metagraph train --set`), or None for those defaults; its
        `env_kwargs` (`--env-kwargs`) are checked against the environment here. `seeds=K`:
        K seeds at once (in-graph doors only). `runner` "ray" or "pipeline", or
        `num_samplers`, or an algorithm that is only distributed: samplers feed one learner
        (two unless `num_samplers` says). `env_module` is imported first: it registers a
        user's environment.

        Raises ValueError (AlgorithmError) naming the setting that cannot run."""
        if env_module is not None:  # the user's environment registers itself
            import_env_module(env_module)
        algorithm = algo if isinstance(algo, AlgorithmBase) else resolve(algo)
        if config is None or isinstance(config, Mapping):  # the defaults for env_id
            config = algorithm.config(resolved_id(env_id), dict(config or {}))
        made = cls(env_id, algorithm, _recorded(algo), config, steps, seed, seeds, runner,
                   num_samplers, batches_per_request, evaluation, track, executor, env_module)
        return made._checked("")

    @classmethod
    def read(cls, out: str | Path | RunDir, algo: str | AlgorithmBase | None = None,
             trust_code: bool = False, env_module: str | None = None) -> RunSpec:
        """The spec a run directory recorded (`config.json`). A user's algorithm or
        environment module it names is imported only when `algo` / `env_module` name it again
        or `trust_code`, and only while its file is the one trained with.

        Raises:
            LoadError: no readable config.json.
            UntrustedCodeError: user code neither named again nor trusted, or changed.
            ValueError: a recorded setting that cannot run (named with the file)."""
        run = out if isinstance(out, RunDir) else RunDir(out, create=False)
        saved = run.read_config()
        check_environment_code(run, saved, trust_code)
        env_module_of_run(run, saved, env_module, trust_code)
        algorithm = algorithm_of_run(run, saved, algo, trust_code)
        try:
            made = cls(saved["env_id"], algorithm, saved["algo"],
                       algorithm.config_class.from_dict(saved["config"]), saved["steps"],
                       saved["seed"], saved.get("seeds"), saved.get("runner", "local"),
                       saved.get("num_samplers"), saved.get("batches_per_request", 1),
                       EvaluationSettings.from_saved(saved), saved.get("track"),
                       saved.get("executor", "xla"), saved.get("env_module"))
            return made._checked(f"{run.config_path}: ")
        except (TypeError, AttributeError, KeyError) as error:  # an entry of the wrong shape
            raise LoadError(f"{run.config_path}: corrupt ({type(error).__name__}: "
                            f"{error})") from None
        except ValueError as error:
            message = str(error)
            if str(run.config_path) in message:
                raise
            raise ValueError(f"{run.config_path}: {message}") from None

    def record(self) -> dict[str, Any]:
        """What config.json holds (JSON values): `read`'s inverse, with the SHA-256 of a
        user's algorithm and environment files."""
        return {"env_id": self.env_id, "algo": self.algo, "seed": self.seed,
                "seeds": self.seeds, "steps": self.steps, "runner": self.runner,
                "num_samplers": self.num_samplers,
                "batches_per_request": self.batches_per_request,
                "config": self.config.to_dict(), "track": self.track, "executor": self.executor,
                **code_record(self.algo), **env_module_record(self.env_module),
                **(self.evaluation.record() if self.evaluation else {})}

    def replace(self, **changes: Any) -> RunSpec:
        """A copy with `changes` (e.g. `steps`, `evaluation`), checked again."""
        return dataclasses.replace(self, **changes)._checked("")

    @property
    def door(self) -> str:
        """The door the run's environments are stepped through (`Algorithm.door`)."""
        return self.algorithm.door(self.config)

    @property
    def distributed(self) -> bool:
        """Whether samplers feed a learner (`num_samplers` is then set)."""
        return self.num_samplers is not None

    def _checked(self, where: str) -> RunSpec:
        """This spec with the canonical id and the samplers worked out, every setting checked;
        ValueError prefixed with `where` otherwise."""
        try:
            positive_int(self.steps, "steps")
            if self.seeds is not None:
                positive_int(self.seeds, "seeds")
            check_seed(self.seed, self.seeds)
            if self.runner not in RUNNERS:
                raise ValueError(f"unknown runner {self.runner!r}; expected one of {RUNNERS}")
            check_batches_per_request(self.batches_per_request, self.runner)
            if self.executor not in EXECUTORS:
                raise ValueError(f"unknown executor {self.executor!r}; expected one of "
                                 f"{EXECUTORS}")
            if self.num_samplers is not None:
                positive_int(self.num_samplers, "num_samplers")
        except ValueError as error:
            raise ValueError(f"{where}{error}") from None
        env_id = self.env_id
        if self.door != "gymnasium":  # native ids, with or without the metagraph/ prefix
            env_id = canonical_id(resolved_id(env_id))
            check_env_kwargs(env_id, env_kwargs_of(self.config))
        if self.evaluation is not None and num_players(env_id) > 1:
            raise ValueError(f"--eval-every / --video-every: {env_id} is a two-player game, whose "
                             f"strength is measured against an opponent: after training, "
                             f"`metagraph evaluate RUN --opponent random|mcts:N`")
        num_samplers = self.num_samplers
        if self.runner in ("ray", "pipeline") or num_samplers is not None \
                or isinstance(self.algorithm, DistributedAlgorithm):
            num_samplers = 2 if num_samplers is None else num_samplers
            if self.seeds is not None:
                raise ValueError(f"seeds={self.seeds}: several seeds at once are not supported "
                                 f"with samplers; run one seed per job")
            parts = distributed_form(self.algorithm)
            if parts is None:
                raise ValueError(f"{self.algo} has no distributed form (its "
                                 f"Algorithm.distributed() is None); run it without samplers")
            parts.check(self.config, num_samplers)
        if self.seeds is not None and self.door not in IN_GRAPH_DOORS:
            raise ValueError(f"seeds={self.seeds}: vmap over seeds needs an in-graph environment "
                             f"(door {' or '.join(IN_GRAPH_DOORS)}), not {self.door!r}")
        if (env_id, num_samplers) == (self.env_id, self.num_samplers):
            return self
        return dataclasses.replace(self, env_id=env_id, num_samplers=num_samplers)


RUNNERS = ("local", "ray", "pipeline")
"""Where a run's samplers and learner run (`components.training.distributed`): "local" (no
samplers unless asked for, or in this process, sampling and learning in turn), "ray",
"pipeline" (threads of this process)."""

MAX_BATCHES_PER_REQUEST = 1024


def check_batches_per_request(batches_per_request: int, runner: str) -> None:
    """ValueError unless `batches_per_request` is an int in [1, MAX_BATCHES_PER_REQUEST] (a
    sampler actor holds that many batches in its queue and again in the reply it packs), and
    1 unless `runner` is "ray" (in-process samplers run each batch when it is asked for)."""
    positive_int(batches_per_request, "batches_per_request")
    if batches_per_request > MAX_BATCHES_PER_REQUEST:
        raise ValueError(f"batches_per_request={batches_per_request}: at most "
                         f"{MAX_BATCHES_PER_REQUEST} (each sampler holds that many batches "
                         f"in its queue and again in one reply)")
    if batches_per_request != 1 and runner != "ray":
        raise ValueError(f"batches_per_request={batches_per_request} needs runner 'ray' "
                         f"(in-process samplers sample each batch when it is asked for); "
                         f"got runner {runner!r}")



def check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """A ValueError naming `env_kwargs` when native environment `env_id` does not take them
    (an unknown name, a value out of its range), before anything is built."""
    try:
        env_spec(env_id, **env_kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"env_kwargs {env_kwargs}: {error}") from None


def _recorded(algo: str | AlgorithmBase) -> str:
    """The name or MODULE:ATTRIBUTE a run directory records for `algo` (an instance is
    recorded by its class, which must be importable to evaluate or resume the run)."""
    if isinstance(algo, AlgorithmBase):
        cls = type(algo)
        return f"{cls.__module__}:{cls.__qualname__}"
    return record(algo)


__all__ = ["MAX_BATCHES_PER_REQUEST", "RUNNERS", "RunSpec", "check_batches_per_request",
           "check_env_kwargs"]
