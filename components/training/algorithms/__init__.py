"""The built-in algorithms: `Reweight`, `PPO`, `DQN`, `Impala` (each an `Algorithm`)."""

from components.training.algorithms.impala import Impala, ImpalaSamplers
from components.training.algorithms.iterative import DQN, PPO, IterativeAlgorithm
from components.training.algorithms.reweight import Reweight, ReweightSamplers

__all__ = ["DQN", "PPO", "Impala", "ImpalaSamplers", "IterativeAlgorithm", "Reweight",
           "ReweightSamplers"]
