"""The typed, validated configuration of the path-reweighting agent."""

from __future__ import annotations

import dataclasses
from typing import Any

from components.reweighting import SCHEMES

QUALITIES = ("return", "max_height", "return_and_height")


@dataclasses.dataclass(frozen=True)
class ReweightConfig:
    num_paths: int = 128          # N paths (environments) per iteration, one episode each
    scheme: str = "elite"         # reweighting scheme (components.reweighting.SCHEMES)
    fraction: float = 0.15        # elite fraction
    temperature: float = 1.0      # exponential scheme: w ∝ exp(q / (temperature · std q))
    # q(p): the path's return; (MountainCar) the highest position it reached; or the return
    # plus 100 x that height (ranks failed paths by height, successful ones by speed)
    quality: str = "return"
    hidden: tuple[int, ...] = (64, 64)
    learning_rate: float = 3e-3
    fit_steps: int = 20           # gradient steps of weighted maximum likelihood per iteration
    fit_paths: int = 32           # M paths resampled from Q (∝ w) for the fit
    max_grad_norm: float = 1.0
    backend: str = "native"       # environment door: "native" (XLA FFI) or "jax" (twin)

    def __post_init__(self) -> None:
        def fail(field: str, expected: str) -> None:
            raise ValueError(f"ReweightConfig.{field}: expected {expected}, got "
                             f"{getattr(self, field)!r}")

        if not isinstance(self.num_paths, int) or self.num_paths < 2:
            fail("num_paths", "an int >= 2")
        if self.scheme not in SCHEMES:
            fail("scheme", f"one of {SCHEMES}")
        if not 0 < self.fraction <= 1:
            fail("fraction", "a number in (0, 1]")
        if not self.temperature > 0:
            fail("temperature", "a number > 0")
        if self.quality not in QUALITIES:
            fail("quality", f"one of {QUALITIES}")
        if not self.hidden or any(not isinstance(h, int) or h < 1 for h in self.hidden):
            fail("hidden", "positive ints")
        if not self.learning_rate > 0:
            fail("learning_rate", "a number > 0")
        if not isinstance(self.fit_steps, int) or self.fit_steps < 1:
            fail("fit_steps", "an int >= 1")
        if not isinstance(self.fit_paths, int) or not 1 <= self.fit_paths <= self.num_paths:
            fail("fit_paths", f"an int in [1, num_paths={self.num_paths}]")
        if not self.max_grad_norm > 0:
            fail("max_grad_norm", "a number > 0")
        if self.backend not in ("native", "jax"):
            fail("backend", "'native' or 'jax'")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ReweightConfig:
        """A config from a dict (TOML/JSON/flags): unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"ReweightConfig: unknown keys {unknown}; known: {sorted(known)}")
        values = dict(values)
        if "hidden" in values:
            values["hidden"] = tuple(values["hidden"])
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
