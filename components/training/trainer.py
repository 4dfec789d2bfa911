"""`train(spec, out)`: a run (`RunSpec`) into a run directory (`RunDir`); `resume(out)`.

`train` records the spec (`config.json`), builds and lowers the algorithm's graph and hands the
executor to a `TrainingLoop` (`loop.py`: the calls, their rows) with its callbacks
(`callbacks.py`: checkpoints, evaluation, the graph's drawing, reporting, and the user's).
Call i of the loop uses the key fold_in(PRNGKey(seed), i) (`keys.py`), so a run resumed from
its checkpoint continues exactly as an uninterrupted one with the same seed.
The trainer knows the algorithm only through `AlgorithmBase` and `Distributed` (`algorithm.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax

from backends import xla
from components.envs.environment import POOL_DOORS
from components.training.algorithm import AlgorithmBase, distributed_form, env_kwargs_of
from components.training.evaluation.periodic_evaluation import Evaluator
from components.training.evaluation.periodic_video import VideoRecorder
from components.training.reporting.reporter import Reporter
from components.training.reporting.wandb_log import login_refusal
from components.training.run.callbacks import (
    Callback,
    CallbackList,
    Checkpoints,
    GraphDrawing,
    Periodic,
    Reporting,
)
from components.training.run.checkpoint_upgrades import older_checkpoint
from components.training.run.evaluation_settings import EvaluationSettings
from components.training.run.executors import lower
from components.training.run.interrupts import Interrupts, deferred_interrupts
from components.training.run.keys import START_INDEX, keys_for, resume_keys
from components.training.run.loop import Counters, NonFiniteError, TrainingLoop
from components.training.run.memory import check_state_fits
from components.training.run.run_dir import RunDir
from components.training.run.run_spec import RunSpec
from metagraph.checks import positive_int
from metagraph.errors import MissingExtraError
from metagraph.graph import MetaGraph
from metagraph.install_hints import install_hint


@dataclasses.dataclass(frozen=True)
class Session:
    """What this process brings to a run, not recorded with it (a resumed run takes it given
    again): the user's callbacks, the progress bar, where the programs go (`device`,
    `actor_device`) and the Ray cluster (`address`); `train`'s arguments of those names."""

    callbacks: Sequence[Callback] = ()
    progress: bool = True
    device: str | None = None
    actor_device: str | None = None
    address: str | None = None


def train(spec: RunSpec, out: str | Path, *, callbacks: Sequence[Callback] = (),
          progress: bool = True, device: str | None = None, actor_device: str | None = None,
          address: str | None = None) -> list[dict[str, Any]]:
    """Train the run `spec` (`RunSpec.make(env_id, algo, config, steps=..., ...)`) into the
    run directory `out` (replacing a run there), and return its metrics rows. With
    `spec.seeds=K` the K seeds train at once in one executable (vmap); each equals its own
    single-seed run, and the metrics are their means.

    `callbacks`: the user's own (`components.training.Callback`), called after the built-in
    checkpoints and evaluation and before the reporting. The other arguments are settings of
    this process, not of the run (a resumed run takes them given again): `progress` shows a
    progress bar; `device` places the learner's programs and state (a name: "cpu", "gpu",
    "gpu:1"; None: JAX's default device, the accelerator where JAX has one; a program that
    steps a native task runs there too: on a CUDA GPU the task steps on the host's threads,
    its buffers copied to and from the GPU at each step, docs/accelerators.md);
    `actor_device` places the samplers' programs (`runner="pipeline"` or `num_samplers`;
    default "cpu"); `address`: the Ray cluster to join with `runner="ray"` (None: start a
    local one).

    With samplers (`spec.num_samplers`), they feed one learner
    (`components.training.distributed`): on Ray actors with `runner="ray"` (each asked for
    `batches_per_request` batches per call, which amortises Ray's cost per call and adds
    policy lag); in threads of this process with `runner="pipeline"`, sampling on
    `actor_device` while the learner learns on `device` (at most one weight version of policy
    lag); else in this process, sampling and learning in turn.

    Raises ValueError (AlgorithmError, LoadError) for settings that cannot run."""
    if not isinstance(spec, RunSpec):
        raise TypeError(f"train: spec must be a RunSpec (RunSpec.make(env_id, algo, config, "
                        f"steps=...)), got {type(spec).__name__}")
    return _open(RunDir(out), spec, Session(callbacks, progress, device, actor_device, address))


def resume(out: str | Path, *, steps: int | None = None, algo: str | AlgorithmBase | None = None,
           trust_code: bool = False, env_module: str | None = None,
           evaluation: EvaluationSettings | None = None, callbacks: Sequence[Callback] = (),
           progress: bool = True, device: str | None = None, actor_device: str | None = None,
           address: str | None = None) -> list[dict[str, Any]]:
    """Continue the run in `out` from its checkpoint, with the spec it recorded
    (`RunSpec.read`), for `steps` environment steps in all (None, or fewer than recorded:
    the recorded steps); returns all its metrics rows. A user's algorithm or environment
    module the run names is imported only when `algo` / `env_module` name it again or
    `trust_code` (`trusted_code.py`). `evaluation` replaces the recorded evaluation settings.
    The other arguments are `train`'s."""
    run = RunDir(out)
    lock = run.lock()  # RunDirLocked while another run writes `out`
    try:
        spec = RunSpec.read(run, algo, trust_code, env_module)
        if not run.checkpoint_path.is_file():
            raise ValueError(f"{run.path}: cannot resume: {run.checkpoint_path.name} is "
                             f"missing (nothing to continue from; train without --resume to "
                             f"start again, which replaces {run.metrics_path.name})")
        if steps is not None:
            positive_int(steps, "resume: steps")
        spec = spec.replace(steps=max(steps or 0, spec.steps),
                            evaluation=evaluation or spec.evaluation)
    except BaseException:
        lock.release()
        raise
    return _open(run, spec, Session(callbacks, progress, device, actor_device, address),
                 resuming=True, lock=lock)


def _open(run: RunDir, spec: RunSpec, session: Session, *, resuming: bool = False,
          lock: Any = None) -> list[dict[str, Any]]:
    """Check the process's settings, record the spec, train; a run that failed at once
    leaves no empty directory."""
    lock = lock or run.lock()
    from components.training.distributed import check_num_samplers, connect

    try:
        where = f"{run.config_path}: " if resuming else ""
        try:
            xla.resolve_device(session.device, "--device")
            xla.resolve_device(session.actor_device, "--actor-device")
            if spec.num_samplers is not None:
                check_num_samplers(spec.num_samplers, spec.runner, session.address)
        except ValueError as error:
            raise ValueError(f"{where}{error}") from None
        if session.actor_device is not None and not spec.distributed:
            raise ValueError(f"--actor-device={session.actor_device}: it places the samplers' "
                             f"programs, and this run has none (--runner pipeline or "
                             f"--num-samplers K runs samplers; --device places a run's "
                             f"programs)")
        # the user's callbacks checked before anything starts
        session = dataclasses.replace(session,
                                      callbacks=CallbackList(session.callbacks).callbacks)
        if spec.runner == "ray":  # before XLA's threads start: Ray forks its processes
            connect(session.address)
        if spec.track is not None:  # before anything is written or compiled
            refusal = login_refusal()
            if refusal == "install":
                raise MissingExtraError(f"--track logs to Weights & Biases: "
                                        f"{install_hint('track')}")
            if refusal:
                raise ValueError(f"--track (the run's W&B project {spec.track!r}): {refusal}")
        run.write_config(spec.record())
        reporter = Reporter(run.path, spec.track)  # its imports run while this process compiles
        title = f"{spec.algo} on {spec.env_id}, seed {spec.seed}"
        try:
            _train(run, spec, session, resuming=resuming, reporting=Reporting(reporter, title))
        except BaseException:
            reporter.close()  # stopped before the loop, or after its end closed it: harmless
            raise
        return run.metrics()
    except BaseException:
        run.remove_if_unwritten()
        raise
    finally:
        lock.release()


def learner_data_parallel(batch_axes: Any, device: str | None,
                          executor: str = "xla") -> xla.DataParallel | None:
    """How a distributed learner splits its batches: over every local device where there
    are several and the user named none (`--device`: the learner's programs and state go
    there alone), None otherwise (one device)."""
    if (batch_axes is None or device is not None or executor != "xla"
            or jax.local_device_count() < 2):
        return None
    return xla.DataParallel(batch_axes=batch_axes)


def _train(run: RunDir, spec: RunSpec, session: Session, *, resuming: bool,
           reporting: Reporting) -> None:
    """Build and lower the graph, then run the loop of calls (`TrainingLoop`) with the
    callbacks in their order (the module docstring of `callbacks.py`)."""
    with deferred_interrupts() as startup:  # Ctrl-C while it starts: stop between phases
        startup.calling = True  # (a second Ctrl-C ends the process: nothing to save yet)
        _start_and_run(run, spec, session, resuming=resuming, reporting=reporting,
                       startup=startup)


def _start_and_run(run: RunDir, spec: RunSpec, session: Session, *, resuming: bool,
                   reporting: Reporting, startup: Interrupts) -> None:
    """`_train`'s body: `startup` says whether Ctrl-C came while the run started."""
    alg, config, seed, seeds = spec.algorithm, spec.config, spec.seed, spec.seeds
    device = session.device
    parts = distributed_form(alg) if spec.distributed else None
    graph = (alg.build(spec.env_id, config, spec.steps, 1) if parts is None
             else parts.build_learner(alg, spec.env_id, config, spec.steps, 1))
    evaluation_api(alg, spec.algo, graph)
    check_state_fits(graph, spec.algo, seeds or 1)  # before anything is allocated
    startup.stop_if_received()
    batch_axes = parts.batch_axes(graph) if parts is not None else None
    data_parallel = learner_data_parallel(batch_axes, device, spec.executor)
    # the APIs the loop calls first compile on a worker thread while the state initialises
    exe = lower(graph, spec.executor, seed=seed, seeds=seeds, data_parallel=data_parallel,
                precompile=() if parts is not None else alg.precompile,
                device=None if data_parallel is not None else device)
    # after the tracing (which needs Python's lock), while XLA compiles
    drawing = GraphDrawing(lambda: graph.render(run.path / "graph.svg"),
                           lambda: graph.render(run.path / "graph.html"))
    startup.stop_if_received()
    counters = Counters()
    if resuming:
        counters = Counters.from_meta(
            exe.load_checkpoint(run.checkpoint_path, upgrade=older_checkpoint))
        if parts is None and spec.door in POOL_DOORS:
            # the checkpoint holds no state of a pool's environments: this process's are new,
            # and the running episodes (their observations, returns so far) start again
            alg.start(exe, resume_keys(seed, seeds, counters.iteration))
    elif parts is None:
        alg.start(exe, keys_for(seed, seeds, START_INDEX))
    per_iteration = alg.steps_per_iteration(config)
    # algorithms of whole iterations do exactly the ones `steps` asks for; others (reweighting:
    # episodes of any length) go on until they have taken `steps` steps
    total = None if per_iteration is None else max(1, spec.steps // per_iteration)
    built: list[Callback] = [Checkpoints()]
    settings, env_kwargs = spec.evaluation, env_kwargs_of(config)
    if settings is not None and settings.every is not None:  # on environments of its own
        built.append(Periodic(lambda kept: Evaluator(
            run.path, graph, spec.env_id, spec.door, settings, seed, kept,
            api=alg.evaluation_api, env_kwargs=env_kwargs)))
    if settings is not None and settings.video_every is not None:
        built.append(Periodic(lambda kept: VideoRecorder(
            run.path, graph, spec.env_id, spec.door, settings.video_every, kept,
            api=alg.evaluation_api, env_kwargs=env_kwargs)))
    callback = CallbackList([*built, *session.callbacks, drawing, reporting])
    shown = ("episode_return_mean", *alg.progress_metrics)
    goals = {"goal_steps": spec.steps if total is None else total * per_iteration,
             "goal_iterations": total, "progress": session.progress}
    if parts is None:
        def run_call(call: int) -> Any:  # the iterations the run has left, when they count
            left = None if total is None else total - counters.iteration
            return alg.run(exe, config, keys_for(seed, seeds, call), left)

        loop = TrainingLoop(spec.algo, exe, run, callback, run_call, counters, shown=shown,
                            **goals)
        startup.calling = False  # (the loop holds Ctrl-C back itself, and saves)
        startup.stop_if_received()
        loop.run()
        return
    from components.training.distributed import open_learner

    # every sampler ever started gets its own stream of keys, after a resume too
    learner = open_learner(spec, parts, exe, first_stream=counters.streams,
                           version=counters.call, actor_device=session.actor_device)
    try:
        loop = TrainingLoop(spec.algo, exe, run, callback, learner.step, counters,
                            source="Distributed.update()", shown=(*shown, "policy_lag"),
                            streams=lambda: learner.streams, **goals)
        startup.calling = False
        startup.stop_if_received()
        loop.run()
    finally:
        learner.close()


def evaluation_api(alg: AlgorithmBase, spec_text: str, graph: MetaGraph) -> str:
    """The root API `evaluate` acts with (`Algorithm.evaluation_api`), checked to be one of
    `graph`'s; ValueError naming what the graph has otherwise."""
    name = alg.evaluation_api
    if name not in graph.apis:
        raise ValueError(f"{spec_text}: the graph its build() returns has no root API "
                         f"{name!r} (its Algorithm.evaluation_api), which evaluation calls "
                         f"with a batch of observations (built: {list(graph.apis)})")
    return name


__all__ = ["NonFiniteError", "evaluation_api", "resume", "train"]
