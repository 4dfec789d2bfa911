"""`EvaluationSettings`: how a run evaluates while training (`--eval-every`, `--eval-episodes`,
`--save-best`, `--video-every`), a part of its `RunSpec`; the evaluation itself is
`periodic_evaluation.py`'s."""

from __future__ import annotations

import dataclasses
from typing import Any

from metagraph.checks import positive_int


@dataclasses.dataclass(frozen=True)
class EvaluationSettings:
    """`--eval-every`, `--eval-episodes`, `--save-best`; recorded in config.json so that a
    resumed run goes on evaluating the same way."""

    every: int | None = None
    episodes: int = 10
    save_best: bool = False
    video_every: int | None = None
    """Render an episode every this many steps (`video.py`), or never."""

    def __post_init__(self) -> None:
        if self.every is not None:
            positive_int(self.every, "--eval-every")
        positive_int(self.episodes, "--eval-episodes")
        if self.video_every is not None:
            positive_int(self.video_every, "--video-every")

    def record(self) -> dict[str, Any]:
        """The entries config.json records."""
        return {"evaluation": dataclasses.asdict(self)}

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> EvaluationSettings | None:
        """The settings a run's config.json recorded, or None."""
        values = saved.get("evaluation")
        return None if values is None else cls(**values)


__all__ = ["EvaluationSettings"]
