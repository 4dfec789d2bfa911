"""The RL application layer: what runs agents, above the component library, in rooms whose
imports point one way (down this list).

- `cli.py`: the `metagraph` command (train, evaluate, export, plot, graph, play).
- `train(spec, out)`, `resume(out)` (`trainer.py`): a run into a run directory (`RunDir`)
  with metrics, TensorBoard events, the learning curve, the graph's drawing and checkpoints;
  the only module that uses every room.
- `games/`: a trained game agent against opponents, and `metagraph play`.
- `evaluation/`: `load` (a run's trained agent, `TrainedAgent`: `predict`, `export`),
  `evaluate` (its episodes), videos, evaluation and videos while training.
- `distributed/`: samplers and a learner, in one process, in threads or on Ray.
- `run/`: `RunSpec` (one run worked out once: canonical id, algorithm, config, seeds, steps,
  runner, evaluation, tracking, executor; recorded as the run's `config.json`), the loop of
  calls and its `Callback`s, run directories; a run's user code only when named again or
  trusted.
- `resolve` (`registry.py`): an algorithm from its name or MODULE:ATTRIBUTE.
- `algorithms/`: the built-in `Reweight`, `PPO`, `DQN`, `SAC`, `Impala`, `AlphaZero`.
- `Algorithm`, `DistributedAlgorithm`, `Distributed` (`algorithm.py`): the contract between
  an algorithm and what runs it, which a user's own class implements too, named on the
  command line as `--algo MODULE:ATTRIBUTE`; `env_kwargs_of(config)`: the environment's
  keyword arguments a config holds. `game_player.py`: how an agent plays a game.
- `reporting/`: TensorBoard events, Weights & Biases, the learning curve, plots.
- `Row` (`metrics.py`): one iteration's metrics, checked at the door (`check_rows`).

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
from components.training.run.trusted_code import UntrustedCodeError
from components.training.trainer import resume, train

__all__ = ["Algorithm", "AlgorithmBase", "AlgorithmConfig", "AlgorithmError", "Callback",
           "CallbackList", "DQN", "Distributed", "DistributedAlgorithm", "Impala", "MetricsError",
           "PPO", "Reweight", "Row", "RunDir", "RunDirLocked", "RunSpec", "TrainedAgent",
           "UntrustedCodeError", "env_kwargs_of", "evaluate", "inputs_for", "keys_for", "load",
           "resolve", "resume", "train"]
