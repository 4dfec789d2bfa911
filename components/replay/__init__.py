"""Replay: `ReplayBuffer` (uniform ring buffer), `PrioritizedReplay` (sum and min trees) and
`FrameStackReplay` (transitions over stacked frames, each frame kept once)."""

from components.replay.frame_stack_replay import FrameStackReplay
from components.replay.prioritized_replay import PrioritizedReplay
from components.replay.replay_buffer import ReplayBuffer

__all__ = ["FrameStackReplay", "PrioritizedReplay", "ReplayBuffer"]
