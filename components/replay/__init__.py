"""Replay: `ReplayBuffer` (uniform ring buffer) and `PrioritizedReplay` (sum and min trees)."""

from components.replay.prioritized_replay import PrioritizedReplay
from components.replay.replay_buffer import ReplayBuffer

__all__ = ["PrioritizedReplay", "ReplayBuffer"]
