"""The built-in algorithms: `Reweight`, `PPO`, `DQN`, `SAC`, `Impala`, `AlphaZero` (each an
`Algorithm`)."""

from components.training.algorithms.alphazero import AlphaZero
from components.training.algorithms.impala import Impala, ImpalaSamplers
from components.training.algorithms.iterative import DQN, PPO, IterativeAlgorithm
from components.training.algorithms.reweight import Reweight, ReweightSamplers
from components.training.algorithms.sac import SAC

__all__ = ["DQN", "PPO", "SAC", "AlphaZero", "Impala", "ImpalaSamplers", "IterativeAlgorithm",
           "Reweight", "ReweightSamplers"]
