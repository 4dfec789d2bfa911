"""Preprocessors: components that transform what an agent sees or learns from.

- `running_moments`: the running mean and variance of a stream of batches (pure functions over
  a `Moments` state, Chan et al.'s parallel update, as Gymnasium's `RunningMeanStd`);
- `ObservationNormaliser`: observations to zero mean and unit variance from their running
  moments, clipped (an agent's `preprocessor=`, Gymnasium's `NormalizeObservation`);
- `RewardNormaliser`: rewards divided by the running standard deviation of each
  environment's discounted return, clipped (Gymnasium's / CleanRL's `NormalizeReward`).
"""

from components.preprocessing.observation_normaliser import ObservationNormaliser
from components.preprocessing.reward_normaliser import RewardNormaliser
from components.preprocessing.running_moments import Moments, init_moments, update_moments

__all__ = ["Moments", "ObservationNormaliser", "RewardNormaliser", "init_moments",
           "update_moments"]
