"""Run by test_data_parallel.py in a fresh process with XLA_FLAGS asking for 2 CPU devices:
the IMPALA learner's `learn` over a 2-device mesh against the same on one device. Prints a
JSON report."""

import json

import jax
import numpy as np

from backends import xla
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.training.algorithms import Impala

config = ImpalaConfig(num_envs=8, num_steps=5, hidden=(16,))
graph = Impala().build("CartPole-v1", config, 1000, 1)
rng = np.random.default_rng(0)
t, n = config.num_steps, config.num_envs
batches = [(rng.normal(size=(t, n, 4)).astype(np.float32),
            rng.integers(0, 2, (t, n)).astype(np.int32),
            rng.normal(size=(t, n)).astype(np.float32), rng.random((t, n)) < 0.1,
            -rng.random((t, n)).astype(np.float32), rng.normal(size=(n, 4)).astype(np.float32))
           for _ in range(3)]
single = xla.lower(graph, seed=3)
parallel = xla.lower(graph, seed=3,
                     data_parallel=xla.DataParallel(batch_axes=ImpalaAgent.batch_axes()))
losses = [[float(exe.learn(*batch)["loss"]) for batch in batches] for exe in (single, parallel)]
diff = max(float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-12))
           for a, b in zip(jax.tree.leaves(single.get_state()),
                           jax.tree.leaves(parallel.get_state()), strict=True))
compiled = parallel.executables["learn"].last_compiled()
obs_sharding = compiled.input_shardings[0][1]
try:
    xla.lower(graph, data_parallel=xla.DataParallel()).learn(*batches[0])
    error = None
except Exception as e:  # axis 0 of obs is time (5), not a multiple of 2
    error = f"{type(e).__name__}: {e}"
print(json.dumps({
    "devices": len(jax.devices()), "losses": losses, "max_relative_state_diff": diff,
    "obs_sharding": str(obs_sharding.spec), "obs_devices": len(obs_sharding.device_set),
    "all_reduce": "all-reduce" in compiled.as_text(), "odd_axis_error": error}))
