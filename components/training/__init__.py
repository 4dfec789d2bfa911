"""The RL application layer: what runs agents, above the component library, in rooms.

- `Algorithm`, `DistributedAlgorithm`, `Distributed` (`algorithm.py`): the contract between
  an algorithm and what runs it; the built-in `Reweight`, `PPO`, `DQN`, `Impala` implement it
  (`algorithms/`), and
  so can a user's own class, named on the command line as `--algo MODULE:ATTRIBUTE`;
  `env_kwargs_of(config)`: the environment's keyword arguments a config holds.
- `resolve` (`registry.py`): an algorithm from its name or MODULE:ATTRIBUTE.
- `Row` (`metrics.py`): one iteration's metrics, checked at the door (`check_rows`).
- `run/`: `RunSpec` (one run worked out once: canonical id, algorithm, config, seeds, steps,
  runner, evaluation, tracking, executor; recorded as the run's `config.json`),
  `train(spec, out)` and `resume(out)`, the loop of calls and its `Callback`s, run
  directories (`RunDir`) with metrics, checkpoints and the graph's drawing; a run's user code
  only when named again or trusted.
- `evaluation/`: `load` (a run's trained agent, `TrainedAgent`: `predict`, `export`),
  `evaluate` (its episodes), evaluation while training.
- `reporting/`: TensorBoard events, Weights & Biases, the learning curve, plots, videos.
- `games/`: a trained game agent against opponents, and `metagraph play`.
- `distributed/`: samplers and a learner, in one process, in threads or on Ray.
- `cli.py`: the `metagraph` command (train, evaluate, export, plot, graph, play).

Nothing below this package (metagraph/, backends/, the rest of components/) imports it.
"""

from components.training.algorithm import (
    Algorithm,
    AlgorithmBase,
    AlgorithmConfig,
    Distributed,
    DistributedAlgorithm,
    env_kwargs_of,
)
from components.training.algorithms import DQN, PPO, Impala, Reweight
from components.training.evaluation.episodes import evaluate
from components.training.evaluation.loading import TrainedAgent, load
from components.training.inputs import inputs_for
from components.training.metrics import MetricsError, Row
from components.training.registry import AlgorithmError, resolve
from components.training.run.callbacks import Callback, CallbackList
from components.training.run.keys import keys_for
from components.training.run.run_dir import RunDir, RunDirLocked
from components.training.run.run_spec import RunSpec
from components.training.run.trainer import resume, train
from components.training.run.trusted_code import UntrustedCodeError

__all__ = ["Algorithm", "AlgorithmBase", "AlgorithmConfig", "AlgorithmError", "Callback",
           "CallbackList", "DQN", "Distributed", "DistributedAlgorithm", "Impala", "MetricsError",
           "PPO", "Reweight", "Row", "RunDir", "RunDirLocked", "RunSpec", "TrainedAgent",
           "UntrustedCodeError", "env_kwargs_of", "evaluate", "inputs_for", "keys_for", "load",
           "resolve", "resume", "train"]
