"""`train`: any `Algorithm` into a run directory (`RunDir`).

`train` checks the run's settings, records them, builds and lowers the algorithm's graph and
hands the executor to a `TrainingLoop` (`loop.py`: the calls, their rows, the checkpoints).
Call i of the loop uses the key fold_in(PRNGKey(seed), i) (`keys.py`), so a run resumed from
its checkpoint continues exactly as an uninterrupted one with the same seed.
The trainer knows the algorithm only through `Algorithm` and `Distributed` (`algorithm.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax

from backends import xla
from components.envs import canonical_id
from components.envs import spec as env_spec
from components.envs.engine.catalogue import num_players, resolved_id
from components.training.algorithm import Algorithm, env_kwargs_of
from components.training.background import Background
from components.training.env_module import (
    env_module_of_run,
    env_module_record,
    import_env_module,
)
from components.training.executors import EXECUTORS, lower
from components.training.keys import START_INDEX, check_seed, keys_for
from components.training.loop import Counters, NonFiniteError, TrainingLoop
from components.training.memory import check_state_fits
from components.training.periodic_evaluation import EvaluationSettings, Evaluator
from components.training.registry import record, resolve
from components.training.reporter import Reporter
from components.training.run_dir import RunDir
from components.training.trusted_code import algorithm_of_run, check_environment_code, code_record
from metagraph.checks import positive_int
from metagraph.graph import MetaGraph

IN_GRAPH_DOORS = ("native", "jax")


def algorithm_spec(algo: str | Algorithm) -> str:
    """The name or MODULE:ATTRIBUTE a run directory records for `algo` (an instance is
    recorded by its class, which must be importable to evaluate or resume the run)."""
    if isinstance(algo, Algorithm):
        cls = type(algo)
        return f"{cls.__module__}:{cls.__qualname__}"
    return record(algo)


def check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """A ValueError naming `env_kwargs` when native environment `env_id` does not take them
    (an unknown name, a value out of its range), before anything is built."""
    try:
        env_spec(env_id, **env_kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"env_kwargs {env_kwargs}: {error}") from None


def train(env_id: str, out: str | Path, algo: str | Algorithm | None, config: Any = None,
          seed: int = 0, steps: int = 1_000_000, resume: bool = False, progress: bool = True,
          seeds: int | None = None, runner: str = "local", num_samplers: int | None = None,
          address: str | None = None, batches_per_request: int = 1, trust_code: bool = False,
          evaluation: EvaluationSettings | None = None, track: str | None = None,
          executor: str = "xla", device: str | None = None, actor_device: str | None = None,
          env_module: str | None = None) -> list[dict[str, Any]]:
    """Train `algo` (a built-in name, MODULE:ATTRIBUTE, PATH.py:ATTRIBUTE or an `Algorithm`)
    on `env_id` into the run directory `out`, for `steps` environment steps; returns the
    metrics rows. With `seeds=K`, seeds `seed` ... `seed + K - 1` train at once in one
    executable (vmap); each equals its own single-seed run, and the metrics are their means.
    `config`: the algorithm's config object, or a dict of settings over the algorithm's
    defaults for `env_id` (`metagraph train`'s `--set`), or None for those defaults; its
    `env_kwargs` are the environment's keyword arguments (`--env-kwargs`), checked against
    the environment before anything is built and recorded with the config.

    With `num_samplers=K` (or an algorithm that is only distributed), K samplers feed one
    learner (`components.training.distributed`): on Ray actors with `runner="ray"` (joining
    the cluster at `address`, or starting a local one; each actor asked for
    `batches_per_request` batches per call, which amortises Ray's cost per call and adds
    policy lag); in threads of this process with `runner="pipeline"`, sampling on
    `actor_device` (default "cpu") while the learner learns on `device` (at most one weight
    version of policy lag); else in this process, sampling and learning in turn. `resume=True`
    continues the run in `out` from its checkpoint with the settings it recorded; a user's
    algorithm file it names is imported only when `algo` names it again or `trust_code`
    (`trusted_code.py`). `evaluation`: evaluate the deterministic policy while training
    (`periodic_evaluation.py`; a resumed run keeps the settings it recorded). `track`: a
    Weights & Biases project to log the run to (`wandb_log.py`).
    `executor="eager"` runs the learner's graph op by op without jit (`executors.py`): slow,
    for stepping through a short run in pdb; its results equal the XLA executor's.
    `device` places the learner's programs and state (a name: "cpu", "gpu", "gpu:1"; None:
    JAX's default device, the accelerator where JAX has one). A program that steps a native
    task runs there too: on a CUDA GPU the task steps on the host's threads, its buffers
    copied to and from the GPU at each step (docs/accelerators.md). It is a setting of this
    process, not of the run: a resumed run takes the `device` given again. `env_module`: a
    module path or `.py` file that registers `env_id` (a user's own environment) when
    imported; the run records it and imports it again on `resume` only when named again or
    `trust_code` (`env_module.py`).

    Raises ValueError (AlgorithmError, LoadError) for settings that cannot run."""
    run = RunDir(out)
    lock = run.lock()  # RunDirLocked while another run writes `out`
    try:
        if resume:
            saved = run.read_config()
            if not run.checkpoint_path.is_file():
                raise ValueError(f"{run.path}: cannot resume: {run.checkpoint_path.name} is "
                                 f"missing (nothing to continue from; train without --resume to "
                                 f"start again, which replaces {run.metrics_path.name})")
            named, algo, env_id, seed, steps = algo, saved["algo"], saved["env_id"], \
                saved["seed"], max(steps, saved["steps"])
            seeds, runner = saved.get("seeds"), saved.get("runner", "local")
            num_samplers = saved.get("num_samplers")
            batches_per_request = saved.get("batches_per_request", 1)
            evaluation = evaluation or EvaluationSettings.from_saved(saved)
        where = f"{run.config_path}: " if resume else ""
        from components.training.distributed import check_batches_per_request, check_num_samplers

        try:
            positive_int(steps, "steps")
            if seeds is not None:
                positive_int(seeds, "seeds")
            check_seed(seed, seeds)
            check_batches_per_request(batches_per_request, runner)
            if executor not in EXECUTORS:
                raise ValueError(f"unknown executor {executor!r}; expected one of {EXECUTORS}")
            xla.resolve_device(device, "--device")
            xla.resolve_device(actor_device, "--actor-device")
            if num_samplers is not None:
                check_num_samplers(num_samplers, runner, address)
        except ValueError as error:
            raise ValueError(f"{where}{error}") from None
        if resume:  # a run directory is data: its user code only when named again or trusted
            check_environment_code(run, saved, trust_code)
            env_module_of_run(run, saved, env_module, trust_code)
            env_module = saved.get("env_module")
            alg = algorithm_of_run(run, saved, named, trust_code)
            config = alg.config_class.from_dict(saved["config"])
        else:
            if env_module is not None:  # the user's environment registers itself
                import_env_module(env_module)
            alg = algo if isinstance(algo, Algorithm) else resolve(algo)
            if config is None or isinstance(config, Mapping):  # the defaults for env_id
                config = alg.config(env_id, dict(config or {}))
        door = alg.door(config)
        if door != "gymnasium":  # native ids, with or without the metagraph/ prefix
            env_id = canonical_id(resolved_id(env_id))
            check_env_kwargs(env_id, env_kwargs_of(config))
        if evaluation is not None and num_players(env_id) > 1:
            raise ValueError(f"--eval-every / --video-every: {env_id} is a two-player game, whose "
                             f"strength is measured against an opponent: after training, "
                             f"`metagraph evaluate RUN --opponent random|mcts:N`")
        distributed = runner in ("ray", "pipeline") or num_samplers is not None \
            or alg.only_distributed
        if actor_device is not None and not distributed:
            raise ValueError(f"--actor-device={actor_device}: it places the samplers' programs, "
                             f"and this run has none (--runner pipeline or --num-samplers K runs "
                             f"samplers; --device places a run's programs)")
        if distributed:
            num_samplers = 2 if num_samplers is None else num_samplers
            if seeds is not None:
                raise ValueError(f"seeds={seeds}: several seeds at once are not supported with "
                                 f"samplers; run one seed per job")
            if alg.distributed is None:
                raise ValueError(f"{algorithm_spec(algo)} has no distributed form (its "
                                 f"Algorithm.distributed is None); run it without samplers")
            alg.distributed.check(config, num_samplers)
            if runner == "ray":  # before XLA's threads start: Ray forks its processes
                from components.training.distributed import connect

                connect(address)
        if seeds is not None and door not in IN_GRAPH_DOORS:
            raise ValueError(f"seeds={seeds}: vmap over seeds needs an in-graph environment "
                             f"(door {' or '.join(IN_GRAPH_DOORS)}), not {door!r}")
        spec_text = algorithm_spec(algo)
        run.write_config({"env_id": env_id, "algo": spec_text, "seed": seed, "seeds": seeds,
                          "steps": steps, "runner": runner, "num_samplers": num_samplers,
                          "batches_per_request": batches_per_request, "config": config.to_dict(),
                          **code_record(spec_text), **env_module_record(env_module),
                          **(evaluation.record() if evaluation else {})})
        reporter = Reporter(run.path, track)  # its imports run while this process compiles
        try:
            _train(run, reporter, alg, spec_text, env_id, config, seed, steps, resume, progress,
                   seeds, runner, num_samplers if distributed else None, batches_per_request,
                   executor, evaluation, device, actor_device)
        except KeyboardInterrupt:  # stopped by the user: the curve of what was trained
            title = f"{spec_text} on {env_id}, seed {seed} (interrupted)"
            with contextlib.suppress(Exception):  # the interrupt is the error to see
                reporter.finish(run.metrics_path, run.curve_path, title)
            reporter.close()
            raise
        except BaseException:
            reporter.close()
            raise
        reporter.finish(run.metrics_path, run.curve_path, f"{spec_text} on {env_id}, seed {seed}")
        return run.metrics()
    except BaseException:
        run.remove_if_unwritten()  # a run that failed at once leaves no empty directory
        raise
    finally:
        lock.release()


def _train(run: RunDir, reporter: Reporter, alg: Algorithm, spec_text: str, env_id: str,
           config: Any, seed: int, steps: int, resume: bool, progress: bool,
           seeds: int | None, runner: str, num_samplers: int | None,
           batches_per_request: int, executor: str,
           evaluation: EvaluationSettings | None = None, device: str | None = None,
           actor_device: str | None = None) -> None:
    """Build and lower the graph, then run the loop of calls (`TrainingLoop`)."""
    parts = alg.distributed if num_samplers is not None else None
    graph = (alg.build(env_id, config, steps, 1) if parts is None
             else parts.build_learner(alg, env_id, config, steps, 1))
    evaluation_api(alg, spec_text, graph)
    check_state_fits(graph, spec_text, seeds or 1)  # before anything is allocated
    # a distributed learner with several local devices splits its batches over all of them
    batch_axes = parts.batch_axes(graph) if parts is not None else None
    data_parallel = (xla.DataParallel(batch_axes=batch_axes)
                     if batch_axes is not None and jax.local_device_count() > 1
                     and executor == "xla" else None)
    # the APIs the loop calls first compile on a worker thread while the state initialises
    exe = lower(graph, executor, seed=seed, seeds=seeds, data_parallel=data_parallel,
                precompile=() if parts is not None else alg.precompile,
                device=None if data_parallel is not None else device)
    # after the tracing (which needs Python's lock), while XLA compiles
    background = Background(lambda: graph.render(run.path / "graph.svg"),
                            lambda: graph.render(run.path / "graph.html"))
    counters = Counters()
    if resume:
        counters = Counters.from_meta(exe.load_checkpoint(run.checkpoint_path))
    elif parts is None:
        alg.start(exe, keys_for(seed, seeds, START_INDEX))
    per_iteration = alg.steps_per_iteration(config)
    # algorithms of whole iterations do exactly the ones `steps` asks for; others (reweighting:
    # episodes of any length) go on until they have taken `steps` steps
    total = None if per_iteration is None else max(1, steps // per_iteration)
    evaluator = None if evaluation is None else Evaluator(  # on environments of its own
        run.path, graph, env_id, alg.door(config), evaluation, seed,
        run.keep_metrics(counters.iteration), api=alg.evaluation_api,
        env_kwargs=env_kwargs_of(config))

    def close() -> None:
        try:
            if evaluator is not None:
                evaluator.close()
        finally:
            background.join()

    loop = TrainingLoop(spec_text, exe, run, reporter, None, counters,
                        goal_steps=steps if total is None else total * per_iteration,
                        goal_iterations=total, progress=progress, on_close=close,
                        shown=("episode_return_mean", *alg.progress_metrics),
                        after_call=None if evaluator is None else
                        lambda rows: evaluator.after_call(exe, rows))
    if parts is None:
        def run_call(call: int) -> Any:  # the iterations the run has left, when they count
            left = None if total is None else total - counters.iteration
            return alg.run(exe, config, keys_for(seed, seeds, call), left)

        loop.next_rows = run_call
        loop.run()
        return
    from components.training.distributed import open_learner

    # every sampler ever started gets its own stream of keys, after a resume too
    learner = open_learner(spec_text, parts, exe, config, env_id, seed, runner, num_samplers,
                           counters.streams, counters.call,
                           lambda version: keys_for(seed, None, version), batches_per_request,
                           executor, actor_device)
    loop.next_rows, loop.source = learner.step, "Distributed.update()"
    loop.streams, loop.shown = lambda: learner.streams, (*loop.shown, "policy_lag")
    try:
        loop.run()
    finally:
        learner.close()


def evaluation_api(alg: Algorithm, spec_text: str, graph: MetaGraph) -> str:
    """The root API `evaluate` acts with (`Algorithm.evaluation_api`), checked to be one of
    `graph`'s; ValueError naming what the graph has otherwise."""
    name = alg.evaluation_api
    if name not in graph.apis:
        raise ValueError(f"{spec_text}: the graph its build() returns has no root API "
                         f"{name!r} (its Algorithm.evaluation_api), which evaluation calls "
                         f"with a batch of observations (built: {list(graph.apis)})")
    return name


__all__ = ["NonFiniteError", "algorithm_spec", "evaluation_api", "train"]
