"""`load`: a run directory's trained agent, ready to act (Stable-Baselines3's `PPO.load`,
RLlib's `Algorithm.from_checkpoint`).

    agent = components.training.load("runs/cartpole")
    action = agent.predict(observation)                    # one observation or a batch
    action = agent.predict(observations, deterministic=False)   # needs an `act` API
    agent.export("policy.mgx")                             # the acting API alone
    agent.executor, agent.graph                            # the whole agent, for the rest

A run of several seeds (`--seeds K`) gives each seed's agent in `agent.per_seed`; `load`
itself returns the first seed's.

`predict` runs the acting API as the pure function of only the state it needs
(`backends.xla.export.needed_state`): the policy and a preprocessor's frozen statistics, no
optimizer or replay, compiled once per observation shape. The acting APIs are the root APIs
`greedy(observation)` (deterministic, every algorithm has it) and `act(observation, key)`
(stochastic, where the algorithm's graph has one).
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.xla.export import export_api, needed_state
from backends.xla.onnx_export import export_onnx
from components.envs import spec as env_spec
from components.training.algorithm import AlgorithmBase
from components.training.run.checkpoint_upgrades import older_checkpoint
from components.training.run.executors import lower
from components.training.run.memory import check_state_fits
from components.training.run.run_dir import RunDir
from components.training.run.run_spec import RunSpec
from metagraph import checkpoint as checkpoints
from metagraph.errors import LoadError
from metagraph.graph import MetaGraph, State
from metagraph.spaces import BATCH, Dict

GREEDY, STOCHASTIC = "greedy", "act"
FORMATS = ("mgx", "onnx")


def acting_api(graph: MetaGraph, deterministic: bool = True, greedy: str = GREEDY) -> str:
    """The root API that acts: `greedy` (the deterministic one: the algorithm's
    `Algorithm.evaluation_api`, "greedy" for the built-in ones), or `act` for stochastic
    actions; ValueError naming what the graph has when it lacks it. Every acting API is
    chosen here: `predict`, `export`, `evaluate` and the trainer's periodic evaluation."""
    api = greedy if deterministic else STOCHASTIC
    if api not in graph.apis:
        form = f"{greedy}(observation)" if deterministic else "act(observation, key)"
        raise ValueError(f"{graph.root.name}: no root API {form} to act "
                         f"{'greedily' if deterministic else 'stochastically'} with "
                         f"(its root APIs: {sorted(graph.apis)})")
    return api


class TrainedAgent:
    """One trained policy of a run directory (see the module docstring)."""

    def __init__(self, run: RunDir, spec: RunSpec, graph: MetaGraph, state: State, seed: int,
                 per_seed: list | None = None, programs: dict[str, Any] | None = None,
                 executor: str = "xla"):
        self.run, self.spec, self.graph = run, spec, graph
        self.executor_name = executor
        self.state, self.seed = state, seed
        self.env_id: str = spec.env_id
        self.per_seed: list[TrainedAgent] = per_seed if per_seed is not None else [self]
        self._executor: Any = None
        self._programs: dict[str, Any] = {} if programs is None else programs  # seeds share
        self._needed: dict[str, Any] = {}
        self._key = jax.random.PRNGKey(seed)

    @property
    def algorithm(self) -> AlgorithmBase:
        """The run's algorithm (its spec's)."""
        return self.spec.algorithm

    @property
    def config(self) -> Any:
        """The run's config (its spec's; with `load`'s acting overrides)."""
        return self.spec.config

    @property
    def executor(self) -> Any:
        """An executor of the whole graph with this policy's state (made on first use): an
        XLA one, or the eager one when `load(..., executor="eager")`."""
        if self._executor is None:
            self._executor = lower(self.graph, self.executor_name, seed=self.seed,
                                   state=self.state)
        return self._executor

    def acting_api(self, deterministic: bool = True) -> str:
        """The root API this agent acts with: its algorithm's `evaluation_api`, or `act`."""
        return acting_api(self.graph, deterministic, self.algorithm.evaluation_api)

    @property
    def observation_shape(self) -> tuple[int, ...] | dict[str, tuple[int, ...]]:
        """The shape of one observation (the acting API's input without its batch axis: the
        environment's own shape, or a vector where the agent flattens it); a game's, observed
        by name, as {"obs": its observation's shape, "legal": (actions,)}."""
        space = self._acting_input()
        if isinstance(space, Dict):
            return {name: tuple(entry.shape[1:]) for name, entry in space.spaces.items()}
        return tuple(space.shape[1:])

    def _acting_input(self) -> Any:
        """The space of the acting API's observations (with their batch axis)."""
        return self.graph.apis[self.acting_api()].inputs["observation"]

    def _program(self, api: str) -> tuple[Any, Any]:
        """The compiled acting program (one for every seed of the run) and this policy's
        part of the state it needs."""
        if api not in self._programs:
            program, select, _ = needed_state(self.graph, api)
            self._programs[api] = (jax.jit(lambda needed, *inputs: program(needed, *inputs)[1]),
                                   select)
        run, select = self._programs[api]
        if api not in self._needed:
            self._needed[api] = jax.device_put(select(self.state))
        return run, self._needed[api]

    def predict(self, observation: Any, deterministic: bool = True,
                key: jax.Array | None = None) -> np.ndarray:
        """The actions for one observation (shape `observation_shape`, or the environment's
        own shape: MinAtar's bool planes [10, 10, C], flattened here as the agent saw them) or
        a batch of them (a leading axis more); a game's by name, {"obs": its planes (flat or
        [rows, columns, planes]), "legal": its legal moves, bool}. `deterministic=False`
        samples from the policy (`act`), with `key` or else the agent's own key, which
        advances each call."""
        if not isinstance(deterministic, (bool, np.bool_)):
            raise TypeError(f"{self.env_id}: predict's deterministic is True or False, got "
                            f"{deterministic!r}")
        batch, single = self.acting_input(observation)
        api = self.acting_api(deterministic)
        run, needed = self._program(api)
        if deterministic:
            actions = run(needed, batch)
        else:
            if key is None:
                self._key, key = jax.random.split(self._key)
            actions = run(needed, batch, np.asarray(key))
        actions = np.asarray(actions)
        return actions[0] if single else actions

    def acting_input(self, observation: Any) -> tuple[Any, bool]:
        """One observation or a batch of them as the acting API's batch, and whether it was
        one: in the environment's own shape (MinAtar's planes [10, 10, C], a game's planes),
        as a vector of the same elements, or in the shape the agent acts on; bool planes as
        bool or as numbers 0 and 1. A game's by name, {"obs", "legal"}. A ValueError or
        TypeError saying what was expected otherwise; nothing is cast that changes a value."""
        space = self._acting_input()
        if not isinstance(space, Dict):
            return self._batch(observation, space, "an observation")
        shape = self.observation_shape
        if not isinstance(observation, Mapping) or set(observation) != set(shape):
            got = (f"keys {sorted(observation)}" if isinstance(observation, Mapping)
                   else type(observation).__name__)
            raise ValueError(f"{self.env_id}: predict takes a game's observations by name, "
                             f"{{'obs': planes of shape {shape['obs']}, 'legal': bool of shape "
                             f"{shape['legal']}}} (or batches of them), got {got}")
        obs, single = self._batch(observation["obs"], space.spaces["obs"], "'obs'")
        legal = np.asarray(observation["legal"])
        if legal.dtype != np.bool_:
            raise TypeError(f"{self.env_id}: predict takes the legal moves as bool, got "
                            f"{legal.dtype}")
        if single:
            legal = legal[None]
        if legal.shape != (len(obs), *shape["legal"]):
            raise ValueError(f"{self.env_id}: predict takes {{'obs', 'legal'}} of shapes "
                             f"{shape['obs']} and {shape['legal']} (or batches of the same "
                             f"size), got {np.shape(observation['obs'])} and "
                             f"{np.shape(observation['legal'])}")
        return {"obs": obs, "legal": legal}, single

    def _batch(self, observation: Any, space: Any, what: str) -> tuple[np.ndarray, bool]:
        """`observation` (one, or a batch) as a batch of `space` (the acting API's, with its
        batch axis) and whether it was one; see `acting_input`."""
        obs = np.asarray(observation)
        dtype = np.dtype(space.dtype)
        bools = dtype == np.bool_ or self._bool_observations
        kinds, names = (("biuf", "float, int or bool") if bools else ("iuf", "float or int"))
        if obs.dtype.kind not in kinds:
            raise TypeError(f"{self.env_id}: predict takes observations of real numbers "
                            f"({names}), got dtype {obs.dtype}")
        shape = tuple(space.shape[1:])
        layouts = [shape, (int(np.prod(shape)),)] + [
            own for own in (self._own_observation_shape,) if own is not None]
        found = next(((layout, single) for layout in layouts for single in (True, False)
                      if (obs.shape if single else obs.shape[1:]) == layout), None)
        if found is None:
            raise ValueError(f"{self.env_id}: predict takes {what} of shape {shape} or a "
                             f"batch of them, got {obs.shape}")
        single = found[1]
        batch = (obs[None] if single else obs).reshape((-1, *shape))
        if dtype == np.bool_ and batch.dtype != np.bool_:
            if not np.isin(batch, (0, 1)).all():
                raise ValueError(f"{self.env_id}: predict takes bool planes (or 0 and 1), got "
                                 f"other values")
            return batch.astype(np.bool_), single
        return batch.astype(dtype, copy=False), single

    @functools.cached_property
    def _bool_observations(self) -> bool:
        """Whether the environment's own observations are bool (MinAtar's planes, a game's)."""
        try:
            return env_spec(self.env_id).observation_space.dtype == np.bool_
        except (ValueError, TypeError):  # not a registered task (Gymnasium's)
            return False

    @functools.cached_property
    def _own_observation_shape(self) -> tuple[int, ...] | None:
        """The environment's own observation shape where it is not a vector: a registered
        task's images (MinAtar's) or the planes a game's vectors flatten; None otherwise.
        Looked up once."""
        try:
            made = env_spec(self.env_id)
        except (ValueError, TypeError):  # not a registered task (Gymnasium's)
            return None
        shape = tuple(int(d) for d in made.observation_space.shape)
        return shape if len(shape) > 1 else made.planes

    def export(self, path: str | Path | None = None, deterministic: bool = True,
               platforms: tuple[str, ...] | None = None, format: str = "mgx") -> bytes:
        """Write the acting API (`greedy`, or `act` with `deterministic=False`) with only the
        state it needs to `path`, for any batch of observations; returns the bytes. Format
        "mgx": `backends.xla.load` runs it in a process that never imports the agent's
        classes. Format "onnx": an ONNX model (`backends.xla.onnx_export`), for
        `onnxruntime`, deterministic only; `OnnxExportError` names an operation jax2onnx
        cannot convert."""
        if format not in FORMATS:
            raise ValueError(f"export format must be one of {FORMATS}, got {format!r}")
        if format == "onnx" and not deterministic:
            raise ValueError("a stochastic policy cannot be exported to ONNX with the same "
                             "samples (jax2onnx turns JAX's random streams into ONNX's "
                             "RandomUniformLike, which draws others); export it as .mgx")
        api = self.acting_api(deterministic)
        spaces = self.graph.apis[api].inputs
        shape = self.observation_shape
        observation = (jax.ShapeDtypeStruct((BATCH, *shape), np.float32)
                       if not isinstance(shape, dict) else
                       {"obs": jax.ShapeDtypeStruct((BATCH, *shape["obs"]), np.float32),
                        "legal": jax.ShapeDtypeStruct((BATCH, *shape["legal"]), np.bool_)})
        inputs = [observation, *(space.to_abstract(1, 1) for name, space in spaces.items()
                                 if name != "observation")]
        if format == "onnx":
            data = export_onnx(self.graph, api, self.state, inputs)
        else:
            extra = {"env_id": self.env_id, "algo": self.spec.algo, "seed": self.seed,
                     "observation_shape": (list(shape) if not isinstance(shape, dict) else
                                           {k: list(v) for k, v in shape.items()})}
            data = export_api(self.graph, api, self.state, platforms, inputs, extra)
        if path is not None:
            write_export(Path(path), data)
        return data

    def __repr__(self) -> str:
        return (f"TrainedAgent({self.spec.algo} on {self.env_id}, seed {self.seed}, "
                f"{self.run.path})")


def load(out: str | Path, algo: str | AlgorithmBase | None = None, trust_code: bool = False,
         eval_envs: int = 1, checkpoint: str = "checkpoint.npz", executor: str = "xla",
         overrides: Mapping[str, Any] | None = None, env_module: str | None = None
         ) -> TrainedAgent:
    """The trained agent of run directory `out`: its last checkpoint, or another file of it
    (`checkpoint="best.npz"`: the best evaluated state, `train --save-best`).

    A run trained with a user's algorithm file (`--algo my_module:MyAlgorithm`) names that
    file in its config.json; a run directory is data, so that file is imported only when
    `algo` names it again (or is the `AlgorithmBase` itself), or with `trust_code=True`, and only
    while its SHA-256 is the one recorded at training (`trusted_code.py`). `eval_envs`: the
    batch of the graph's own `greedy` (the executor's; `predict` takes any batch).
    `executor`: the kind of `TrainedAgent.executor`, "xla" or "eager" (`executors.py`).
    `overrides`: config settings that replace the run's own, for how the agent acts (e.g.
    `{"eval_simulations": 400}`: a search agent's simulations a move); a setting that is not
    one of the algorithm's `acting_settings` is a `LoadError`. `env_module`: the module that
    registers a user's environment, named again (`env_module.py`; or `trust_code`).

    Raises:
        LoadError: `out` is not a run directory with a checkpoint, or its checkpoint does
            not fit the graph.
        UntrustedCodeError: the run's algorithm is a user's file not named again, or changed;
            or its environment id names a module (`module:Env-v0`) and not `trust_code`.
    """
    run = RunDir(out, create=False)
    spec = RunSpec.read(run, algo, trust_code, env_module)
    alg = spec.algorithm
    ignored = sorted(set(overrides or {}) - set(alg.acting_settings))
    if ignored:
        allowed = ", ".join(alg.acting_settings) or "none"
        raise LoadError(f"{run.path}: --set {', '.join(ignored)}: not a setting of how "
                        f"{spec.algo} acts (those: {allowed}); the rest of the config "
                        f"is the run's own")
    if overrides:
        try:
            spec = spec.replace(config=alg.config_class.from_dict(
                {**spec.config.to_dict(), **overrides}))
        except (TypeError, ValueError) as error:
            given = " ".join(f"{key}={value!r}" for key, value in overrides.items())
            raise LoadError(f"{run.path}: --set {given}: {error}") from None
    path = run.path / checkpoint
    if not path.is_file():
        raise LoadError(f"{run.path}: no checkpoint ({checkpoint}) to load")
    graph = alg.build(spec.env_id, spec.config, spec.steps, eval_envs)
    acting_api(graph, greedy=alg.evaluation_api)
    check_state_fits(graph, spec.algo, spec.seeds or 1)  # before allocating
    like = jax.tree.map(lambda x: np.zeros(x.shape, x.dtype), graph.state_spec)
    if spec.seeds is None:
        state, _ = checkpoints.load(path, like=like, upgrade=older_checkpoint)
        return TrainedAgent(run, spec, graph, state, spec.seed, executor=executor)
    stacked_like = jax.tree.map(lambda x: np.zeros((spec.seeds, *x.shape), x.dtype), like)
    stacked, _ = checkpoints.load(path, like=stacked_like, upgrade=older_checkpoint)
    agents: list[TrainedAgent] = []
    make = functools.partial(TrainedAgent, run, spec, graph, per_seed=agents, programs={},
                             executor=executor)
    agents.extend(make(jax.tree.map(lambda x, k=k: x[k], stacked), spec.seed + k)
                  for k in range(spec.seeds))
    return agents[0]


def write_export(path: Path, data: bytes) -> None:
    """Write an export to `path` whole or not at all (a temporary file renamed over it: a
    killed export leaves an existing file as it was), creating missing folders; a directory
    or a place that cannot be written is an OSError naming the path and why."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"export: {path} is a directory; give a file "
                                f"path, e.g. {path / 'policy.mgx'}")
    try:
        checkpoints.write_atomically(path, lambda f: f.write(data))
    except OSError as error:
        raise type(error)(error.errno, f"export: cannot write {path} "
                                       f"({error.strerror or error})") from None

