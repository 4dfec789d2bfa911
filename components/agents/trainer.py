"""Training and evaluating any of the `ALGORITHMS` into a run directory (`RunDir`).

Call i of the training loop uses the key fold_in(PRNGKey(seed), i). A checkpoint is written
every CHECKPOINT_SECONDS and when training stops (finished, or interrupted between two calls),
so a run resumed from its checkpoint continues exactly as an uninterrupted one with the same
seed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium.vector import AutoresetMode

from backends import xla
from components.agents.algorithms import ALGORITHMS
from components.agents.background import Background
from components.agents.reporter import Reporter
from components.agents.run_dir import RunDir
from components.envs import make, spec
from metagraph import checkpoint
from metagraph.errors import LoadError

CHECKPOINT_SECONDS = 30.0
START_INDEX = 2**31 - 1  # the key index of `start`, apart from every call's


def algorithm(name: str) -> Any:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; available: {sorted(ALGORITHMS)}")
    return ALGORITHMS[name]


def keys_for(seed: int, seeds: int | None, index: int) -> jax.Array:
    """The key of call `index`: fold_in(PRNGKey(seed), index), or one per seed stacked."""
    if seeds is None:
        return jax.random.fold_in(jax.random.PRNGKey(seed), index)
    return jax.numpy.stack([jax.random.fold_in(jax.random.PRNGKey(seed + k), index)
                            for k in range(seeds)])


def train(env_id: str, out: str | Path, algo: str, config: Any, seed: int = 0,
          steps: int = 1_000_000, resume: bool = False, progress: bool = True,
          seeds: int | None = None, backend: str = "local", num_samplers: int | None = None,
          address: str | None = None) -> list[dict[str, Any]]:
    """Train into `out`. With `seeds=K`, seeds `seed` ... `seed + K - 1` train at once in one
    executable (vmap); each equals its own single-seed run, and the metrics are their means.

    With `num_samplers=K` (or an algorithm that is only distributed, IMPALA), K samplers feed
    one learner (`backends.ray`): on Ray actors with `backend="ray"` (joining the cluster at
    `address`, or starting a local one), else in this process."""
    run = RunDir(out)
    if resume:
        saved = run.read_config()
        algo, env_id, seed, steps = saved["algo"], saved["env_id"], saved["seed"], \
            max(steps, saved["steps"])
        seeds, backend = saved.get("seeds"), saved.get("backend", "local")
        num_samplers = saved.get("num_samplers")
        config = algorithm(algo).config_class.from_dict(saved["config"])
    alg = algorithm(algo)
    if config.backend != "gymnasium":  # native ids, with or without the metagraph/ prefix
        env_id = spec(env_id).env_id
    distributed = backend == "ray" or num_samplers is not None \
        or getattr(alg, "distributed_only", False)
    if distributed:
        num_samplers = 2 if num_samplers is None else num_samplers
        if seeds is not None:
            raise ValueError(f"seeds={seeds}: several seeds at once are not supported with "
                             f"samplers; run one seed per job")
        if not hasattr(alg, "build_sampler"):
            raise ValueError(f"{algo} has no distributed form; with samplers: impala, reweight")
        if backend == "ray":  # before XLA's threads start: Ray forks its processes
            from backends.ray import connect

            connect(address)
    if seeds is not None and config.backend in ("host", "gymnasium"):
        raise ValueError(f"seeds={seeds}: vmap over seeds needs an in-graph environment "
                         f"(backend native or jax), not {config.backend!r}")
    run.write_config({"env_id": env_id, "algo": algo, "seed": seed, "seeds": seeds,
                      "steps": steps, "backend": backend, "num_samplers": num_samplers,
                      "config": config.to_dict()})
    reporter = Reporter(run.path)  # its imports run while this process builds and compiles
    try:
        _train(run, reporter, alg, env_id, config, seed, steps, resume, progress, seeds,
               backend, num_samplers, distributed)
    except BaseException:
        reporter.close()
        raise
    reporter.finish(run.metrics_path, run.curve_path, f"{algo} on {env_id}, seed {seed}")
    return run.metrics()


def _train(run: RunDir, reporter: Reporter, alg: Any, env_id: str, config: Any, seed: int,
           steps: int, resume: bool, progress: bool, seeds: int | None, backend: str,
           num_samplers: int | None, distributed: bool) -> None:
    graph = alg.build(env_id, config, steps, 1)
    # a distributed learner with several local devices splits its batches over all of them
    data_parallel = (xla.DataParallel(batch_axes=graph.root.batch_axes())
                     if distributed and jax.local_device_count() > 1
                     and hasattr(graph.root, "batch_axes") else None)
    # the APIs the loop calls first compile on a worker thread while the state initialises
    precompile = () if distributed else getattr(alg, "precompile", ())
    exe = xla.lower(graph, seed=seed, seeds=seeds, data_parallel=data_parallel,
                    precompile=precompile)
    # after the tracing (which needs Python's lock), while XLA compiles
    background = Background(lambda: graph.render(run.path / "graph.svg"))
    meta = {"call": 0, "iteration": 0, "env_steps": 0, "wall": 0.0, "streams": 0}
    if resume and run.checkpoint_path.exists():
        meta.update(exe.load_checkpoint(run.checkpoint_path))
    elif not distributed:
        alg.start(exe, keys_for(seed, seeds, START_INDEX))
    if distributed:
        from backends.ray import open_learner

        # every sampler ever started gets its own stream of keys, after a resume too
        learner = open_learner(alg, exe, config, env_id, seed, backend, num_samplers,
                               meta["streams"], meta["call"],
                               lambda call: keys_for(seed, None, call))
        next_rows, pool = learner.step, learner.pool
    else:
        pool = None

        def next_rows(call: int) -> list[dict[str, Any]]:
            key = keys_for(seed, seeds, call)
            if total is None:
                return alg.run(exe, config, key)
            return alg.run(exe, config, key, total - iteration)

    # algorithms of whole iterations do exactly the ones `steps` asks for; others (reweighting:
    # episodes of any length) go on until they have taken `steps` steps
    total = alg.total_iterations(config, steps) if hasattr(alg, "total_iterations") else None
    call, iteration, env_steps = meta["call"], meta["iteration"], meta["env_steps"]
    run.keep_metrics(iteration)
    start = time.perf_counter()
    goal = steps if total is None else total * alg.agent_class.steps_per_iteration(config)
    bar = _progress(goal, env_steps, progress)
    last_return, saved_call, last_save = None, call, start

    def save() -> None:
        exe.save_checkpoint(run.checkpoint_path, meta={
            "call": call, "iteration": iteration, "env_steps": env_steps,
            "wall": meta["wall"] + time.perf_counter() - start,
            "streams": pool.streams if pool is not None else 0})

    try:
        while (iteration < total) if total is not None else (env_steps < steps):
            rows = next_rows(call)
            call += 1
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
            run.append_metrics(written)
            reporter.add(written)
            if time.perf_counter() - last_save >= CHECKPOINT_SECONDS:
                save()
                saved_call, last_save = call, time.perf_counter()
            if bar is not None:
                bar.update(min(env_steps, goal) - bar.n)
                bar.set_postfix({k: f"{v:.2f}" for k, v in rows[-1].items()
                                 if k in ("episode_return_mean", "bits", "policy_lag")
                                 and v is not None})
    finally:  # also on Ctrl-C: the state between two calls is consistent
        if call != saved_call:
            save()
        if pool is not None:
            pool.close()
        if bar is not None:
            bar.close()
        background.join()


def _progress(total: int, done: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=min(done, total), unit="step", unit_scale=True,
                dynamic_ncols=True)


def evaluate(out: str | Path, episodes: int = 100, seed: int = 12345) -> dict[str, float]:
    """Mean and standard deviation of the return of the saved policy's greedy actions over
    `episodes` episodes of the host environment pool."""
    run = RunDir(out)
    saved = run.read_config()
    alg = algorithm(saved["algo"])
    config = alg.config_class.from_dict(saved["config"])
    if not run.checkpoint_path.exists():
        raise LoadError(f"{run.path}: no checkpoint to evaluate")
    exe = xla.lower(alg.build(saved["env_id"], config, saved["steps"], episodes),
                    seed=saved["seed"])
    seeds = saved.get("seeds")
    if seeds is None:
        exe.load_checkpoint(run.checkpoint_path)
        states = [exe.state]
    else:  # one policy per seed, each evaluated on its own
        like = jax.tree.map(lambda x: np.zeros((seeds, *x.shape), x.dtype), exe.state)
        stacked, _ = checkpoint.load(run.checkpoint_path, like=like)
        states = [jax.tree.map(lambda x, k=k: x[k], stacked) for k in range(seeds)]
    per_seed = []
    for state in states:
        exe.set_state(state)
        per_seed.append(_evaluate_policy(exe, saved, config, episodes, seed))
    returns = np.concatenate(per_seed)
    result = {"episodes": episodes, "return_mean": float(returns.mean()),
              "return_std": float(returns.std())}
    if seeds is not None:
        result["return_mean_per_seed"] = [float(r.mean()) for r in per_seed]
    return result


def _evaluate_policy(exe: Any, saved: dict, config: Any, episodes: int, seed: int
                     ) -> np.ndarray:
    env = (make(saved["env_id"], episodes, seed=seed) if config.backend != "gymnasium" else
           gymnasium.make_vec(saved["env_id"], episodes, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}))
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = env.step(np.asarray(exe.greedy(
            np.asarray(obs, np.float32))))
        returns += reward * running
        running &= ~(terminated | truncated)
    return returns
