"""`train`: any `Algorithm` into a run directory (`RunDir`).

Call i of the training loop uses the key fold_in(PRNGKey(seed), i) (`keys.py`). A checkpoint
is written every CHECKPOINT_SECONDS (less often when writing it takes more than
CHECKPOINT_SHARE of that time, so that a 1M-step replay buffer is not rewritten every half
minute) and when training stops (finished, or interrupted: Ctrl-C is held back until the
executable call under way has returned, `interrupts.py`), so a run resumed from its
checkpoint continues exactly as an uninterrupted one with the same seed. A call that fails,
or whose loss is not finite, is never saved: the last good checkpoint stays.
The trainer knows the algorithm only through `Algorithm` and `Distributed` (`algorithm.py`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from backends import xla
from components.envs import canonical_id
from components.training.algorithm import Algorithm
from components.training.background import Background
from components.training.interrupts import deferred_interrupts
from components.training.keys import START_INDEX, check_seed, keys_for
from components.training.periodic_evaluation import EvaluationSettings, Evaluator
from components.training.registry import record, resolve
from components.training.reporter import Reporter
from components.training.run_dir import RunDir
from components.training.trusted_code import algorithm_of_run, code_record
from metagraph.checks import positive_int

CHECKPOINT_SECONDS = 30.0  # 0: after every call
CHECKPOINT_SHARE = 0.05
IN_GRAPH_DOORS = ("native", "jax")


def algorithm_spec(algo: str | Algorithm) -> str:
    """The name or MODULE:ATTRIBUTE a run directory records for `algo` (an instance is
    recorded by its class, which must be importable to evaluate or resume the run)."""
    if isinstance(algo, Algorithm):
        cls = type(algo)
        return f"{cls.__module__}:{cls.__qualname__}"
    return record(algo)


def train(env_id: str, out: str | Path, algo: str | Algorithm | None, config: Any,
          seed: int = 0, steps: int = 1_000_000, resume: bool = False, progress: bool = True,
          seeds: int | None = None, runner: str = "local", num_samplers: int | None = None,
          address: str | None = None, batches_per_request: int = 1, trust_code: bool = False,
          evaluation: EvaluationSettings | None = None, track: str | None = None
          ) -> list[dict[str, Any]]:
    """Train `algo` (a built-in name, MODULE:ATTRIBUTE, PATH.py:ATTRIBUTE or an `Algorithm`)
    on `env_id` into the run directory `out`, for `steps` environment steps; returns the
    metrics rows. With `seeds=K`, seeds `seed` ... `seed + K - 1` train at once in one
    executable (vmap); each equals its own single-seed run, and the metrics are their means.

    With `num_samplers=K` (or an algorithm that is only distributed), K samplers feed one
    learner (`components.training.distributed`): on Ray actors with `runner="ray"` (joining
    the cluster at `address`, or starting a local one; each actor asked for
    `batches_per_request` batches per call, which amortises Ray's cost per call and adds
    policy lag), else in this process. `resume=True`
    continues the run in `out` from its checkpoint with the settings it recorded; a user's
    algorithm file it names is imported only when `algo` names it again or `trust_code`
    (`trusted_code.py`). `evaluation`: evaluate the deterministic policy while training
    (`periodic_evaluation.py`; a resumed run keeps the settings it recorded). `track`: a
    Weights & Biases project to log the run to (`wandb_log.py`).

    Raises ValueError (AlgorithmError, LoadError) for settings that cannot run."""
    run = RunDir(out)
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
    from components.training.distributed import check_batches_per_request

    try:
        positive_int(steps, "steps")
        if seeds is not None:
            positive_int(seeds, "seeds")
        check_seed(seed, seeds)
        check_batches_per_request(batches_per_request, runner)
    except ValueError as error:
        raise ValueError(f"{where}{error}") from None
    if resume:  # a run directory is data: its user code only when named again or trusted
        alg = algorithm_of_run(run, saved, named, trust_code)
        config = alg.config_class.from_dict(saved["config"])
    else:
        alg = algo if isinstance(algo, Algorithm) else resolve(algo)
    door = alg.door(config)
    if door != "gymnasium":  # native ids, with or without the metagraph/ prefix
        env_id = canonical_id(env_id)
    distributed = runner == "ray" or num_samplers is not None or alg.only_distributed
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
                      **code_record(spec_text), **(evaluation.record() if evaluation else {})})
    reporter = Reporter(run.path, track)  # its imports run while this process compiles
    try:
        _train(run, reporter, alg, spec_text, env_id, config, seed, steps, resume, progress,
               seeds, runner, num_samplers if distributed else None, batches_per_request,
               evaluation)
    except BaseException:
        reporter.close()
        raise
    reporter.finish(run.metrics_path, run.curve_path, f"{spec_text} on {env_id}, seed {seed}")
    return run.metrics()


def _train(run: RunDir, reporter: Reporter, alg: Algorithm, spec_text: str, env_id: str,
           config: Any, seed: int, steps: int, resume: bool, progress: bool,
           seeds: int | None, runner: str, num_samplers: int | None,
           batches_per_request: int, evaluation: EvaluationSettings | None = None) -> None:
    graph = alg.build(env_id, config, steps, 1)
    if "greedy" not in graph.apis:
        raise ValueError(f"{spec_text}: the graph its build() returns has no root API "
                         f"'greedy(observation)', which evaluation needs (built: "
                         f"{list(graph.apis)})")
    parts = alg.distributed if num_samplers is not None else None
    # a distributed learner with several local devices splits its batches over all of them
    batch_axes = parts.batch_axes(graph) if parts is not None else None
    data_parallel = (xla.DataParallel(batch_axes=batch_axes)
                     if batch_axes is not None and jax.local_device_count() > 1 else None)
    # the APIs the loop calls first compile on a worker thread while the state initialises
    exe = xla.lower(graph, seed=seed, seeds=seeds, data_parallel=data_parallel,
                    precompile=() if parts is not None else alg.precompile)
    # after the tracing (which needs Python's lock), while XLA compiles
    background = Background(lambda: graph.render(run.path / "graph.svg"),
                            lambda: graph.render(run.path / "graph.html"))
    meta = {"call": 0, "iteration": 0, "env_steps": 0, "wall": 0.0, "streams": 0}
    if resume:
        meta.update(exe.load_checkpoint(run.checkpoint_path))
    elif parts is None:
        alg.start(exe, keys_for(seed, seeds, START_INDEX))
    per_iteration = alg.steps_per_iteration(config)
    # algorithms of whole iterations do exactly the ones `steps` asks for; others (reweighting:
    # episodes of any length) go on until they have taken `steps` steps
    total = None if per_iteration is None else max(1, steps // per_iteration)
    call, iteration, env_steps = meta["call"], meta["iteration"], meta["env_steps"]
    if parts is not None:
        from components.training.distributed import open_learner

        # every sampler ever started gets its own stream of keys, after a resume too
        learner = open_learner(spec_text, parts, exe, config, env_id, seed, runner,
                               num_samplers, meta["streams"], call,
                               lambda version: keys_for(seed, None, version),
                               batches_per_request)

        def next_rows(call: int) -> list[dict[str, Any]]:
            return learner.step(call)
    else:
        learner = None

        def next_rows(call: int) -> list[dict[str, Any]]:
            left = None if total is None else total - iteration
            return alg.run(exe, config, keys_for(seed, seeds, call), left)

    kept = run.keep_metrics(iteration)
    evaluator = None if evaluation is None else Evaluator(  # on environments of its own
        run.path, graph, env_id, alg.door(config), evaluation, seed, kept)
    reporter.restart(kept)  # the TensorBoard events become the kept rows, whatever was lost
    start = time.perf_counter()
    goal = steps if total is None else total * per_iteration
    bar = _progress(goal, env_steps, progress)
    # the last mean return carries over a resume to rows where no episode ended
    last_return = kept[-1].get("episode_return_mean") if kept else None
    saved_call, last_save, save_every = call, start, CHECKPOINT_SECONDS
    whole = True  # whether exe.state is the state after `call` whole, good calls
    before = exe.state

    def save() -> None:
        nonlocal whole
        if bad := non_finite_state(exe.state):
            whole = False
            raise NonFiniteError(f"{spec_text}: training diverged: {bad} after call {call}; "
                                 f"not saved, {saved_text()}")
        exe.save_checkpoint(run.checkpoint_path, meta={
            "call": call, "iteration": iteration, "env_steps": env_steps,
            "wall": meta["wall"] + time.perf_counter() - start,
            "streams": learner.streams if learner is not None else 0})

    def saved_text() -> str:
        return (f"{run.checkpoint_path} keeps the state after call {saved_call}"
                if run.checkpoint_path.exists() else "no checkpoint was written")

    with deferred_interrupts() as interrupts:  # Ctrl-C: stop between two calls, then save
        try:
            while (iteration < total) if total is not None else (env_steps < steps):
                whole, before = False, exe.state  # until the call returned good rows
                rows = next_rows(call)
                if not rows:
                    raise ValueError(f"{spec_text}: run() returned no metrics rows; it must "
                                     f"return one per iteration done (at least one)")
                if bad := non_finite_loss(rows, iteration):
                    raise NonFiniteError(f"{spec_text}: training diverged: {bad}; the state "
                                         f"of call {call + 1} is not saved, {saved_text()}")
                call += 1
                whole = True
                wall = meta["wall"] + time.perf_counter() - start
                written = []
                for row in rows:
                    env_steps += row.pop("steps")
                    if row["episode_return_mean"] is None:  # no episode ended this iteration
                        row["episode_return_mean"] = last_return
                    last_return = row["episode_return_mean"]
                    written.append({"iteration": iteration, "env_steps": env_steps,
                                    "wall_time": round(wall, 3), **row})
                    iteration += 1
                if evaluator is not None:
                    evaluator.after_call(exe, written)
                run.append_metrics(written)
                reporter.add(written)
                if time.perf_counter() - last_save >= save_every:
                    before_save = time.perf_counter()
                    save()
                    saved_call, last_save = call, time.perf_counter()
                    save_every = (max(CHECKPOINT_SECONDS, (last_save - before_save)
                                      / CHECKPOINT_SHARE) if CHECKPOINT_SECONDS else 0.0)
                if bar is not None:
                    bar.update(min(env_steps, goal) - bar.n)
                    bar.set_postfix({k: f"{v:.2f}" for k, v in rows[-1].items()
                                     if k in ("episode_return_mean", "bits", "policy_lag")
                                     and v is not None})
                if interrupts.received:
                    raise KeyboardInterrupt
        finally:  # also on Ctrl-C (held back until the call returned) and on errors
            # a call that failed before it replaced the state left the state whole
            whole = whole or (exe.state is before and exe.state_lost is None)
            try:
                if call != saved_call and whole:
                    save()
            finally:
                if learner is not None:
                    learner.close()
                if evaluator is not None:
                    evaluator.close()
                if bar is not None:
                    bar.close()
                background.join()


class NonFiniteError(ValueError):
    """Training produced a NaN or infinite loss, or NaN in its state: the run stops and the
    last good checkpoint is kept."""


def non_finite_loss(rows: list[dict[str, Any]], iteration: int) -> str | None:
    """A description of the first row (counted from `iteration`) whose `loss` is not a finite
    number (per seed too), or None."""
    for i, row in enumerate(rows):
        loss = row.get("loss")
        if loss is not None and not np.isfinite(np.asarray(loss, np.float64)).all():
            return f"iteration {iteration + i} has loss {loss}"
    return None


def non_finite_state(state: Any) -> str | None:
    """A description of the state entries holding NaN (an infinity can be legitimate, e.g.
    an empty min-tree), or None."""
    bad = [jax.tree_util.keystr(path) for path, leaf in jax.tree_util.tree_leaves_with_path(state)
           if jnp.issubdtype(leaf.dtype, jnp.inexact) and bool(jnp.isnan(leaf).any())]
    return None if not bad else f"NaN in the state ({', '.join(bad[:3])}" \
        f"{f' and {len(bad) - 3} more' if len(bad) > 3 else ''})"


def _progress(total: int, done: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=min(done, total), unit="step", unit_scale=True,
                dynamic_ncols=True)
