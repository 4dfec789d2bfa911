"""Run by test_multiprocess_learner.py: one process of a learner group on JAX's distributed
runtime (`python multiprocess_learner_run.py PROCESS_ID NUM_PROCESSES PORT OUT_DIR`), or, with
`batches()` and `learn()` imported, the single-process reference.

Each process learns IMPALA's `learn` on its own half of three batches (time-major: its half of
the environments, axis 1) and writes its losses and final state to OUT_DIR."""

import json
import sys
from pathlib import Path

import numpy as np

CONFIG = dict(num_envs=8, num_steps=5, hidden=(16,))
SEED = 3


def batches() -> list[tuple]:
    """Three learner batches of IMPALA's `learn` inputs, the same in every process."""
    rng = np.random.default_rng(0)
    t, n = CONFIG["num_steps"], CONFIG["num_envs"]
    return [(rng.normal(size=(t, n, 4)).astype(np.float32),
             rng.integers(0, 2, (t, n)).astype(np.int32),
             rng.normal(size=(t, n)).astype(np.float32), rng.random((t, n)) < 0.1,
             -rng.random((t, n)).astype(np.float32), rng.normal(size=(n, 4)).astype(np.float32))
            for _ in range(3)]


def graph():
    """The IMPALA learner's graph."""
    from components.agents.impala_config import ImpalaConfig
    from components.training.algorithms import Impala
    return Impala().build("CartPole-v1", ImpalaConfig(**CONFIG), 1000, 1)


def learn(exe, parts: list[tuple]) -> list[float]:
    """The losses of `learn` on each batch in turn."""
    return [float(exe.learn(*batch)["loss"]) for batch in parts]


def leaves(state) -> list[np.ndarray]:
    """The state's arrays, in the order of its tree."""
    import jax
    return [np.asarray(leaf) for leaf in jax.tree.leaves(state)]


def main(process_id: int, num_processes: int, port: int, out: Path) -> None:
    from components.agents.impala_agent import ImpalaAgent
    from components.training.distributed import LearnerGroup

    group = LearnerGroup.join(f"localhost:{port}", num_processes, process_id, timeout=60)
    built = graph()
    exe = group.lower(built, batch_axes=ImpalaAgent.batch_axes(), seed=SEED)
    dp = exe.data_parallel
    mine = [dp.local_part(built, "learn", batch) for batch in batches()]
    losses = learn(exe, mine)
    np.savez(out / f"state{process_id}.npz", *leaves(exe.get_state()))
    hlo = exe.executables["learn"].last_compiled().as_text()  # after SPMD partitioning
    (out / f"report{process_id}.json").write_text(json.dumps({
        "process": group.process_id, "processes": group.num_processes,
        "mesh_devices": dp.size, "local_obs_shape": list(mine[0][0].shape),
        "losses": losses, "all_reduce": "all-reduce" in hlo}))
    group.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
