"""The `minatar` package's own games as the reference of components.envs.minatar, stepped in
lockstep with the engine's: the package's RandomState is replaced by one that makes the same
calls (`rand`, `randint`) from the same splitmix64 stream the C++ game draws from (minatar.h),
so each package environment starts and steps exactly as the engine's environment of the same
seed and index."""

from __future__ import annotations

import importlib

import numpy as np

MASK = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """engine/rng.h's splitmix64: (the advanced state, the output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def stream_state(seed: int, index: int) -> int:
    """engine/rng.h's stream of environment `index` under `seed`."""
    _, a = splitmix64(seed)
    _, out = splitmix64(index ^ a)
    return out


class SplitmixRandom:
    """The RandomState calls MinAtar's games make, each one draw of a splitmix64 stream, as
    minatar.h's `Stream` draws them."""

    def __init__(self, bits: int):
        self.bits = bits

    def _next(self) -> int:
        self.bits, out = splitmix64(self.bits)
        return out

    def rand(self, size: int | None = None):
        if size is not None:
            return np.array([self.rand() for _ in range(size)])
        return (self._next() >> 11) * 2.0 ** -53

    def randint(self, low: int, high: int | None = None, size: int | None = None):
        if high is None:
            low, high = 0, low
        if size is not None:
            return np.array([self.randint(low, high) for _ in range(size)])
        return low + ((self._next() * (high - low)) >> 64)


class PackageEnvironment:
    """Environment `index` of a pool seeded `seed`, played by the `minatar` package: its
    `Environment` (sticky actions) around the package's game, each episode drawing from the
    stream the engine's reset draws."""

    def __init__(self, game: str, seed: int, index: int, sticky_action_prob: float = 0.1,
                 difficulty_ramping: bool = True):
        environment = importlib.import_module("minatar.environment")
        self.env = environment.Environment(game, sticky_action_prob=sticky_action_prob,
                                           difficulty_ramping=difficulty_ramping)
        self.engine_stream = stream_state(seed, index)

    def reset(self) -> np.ndarray:
        """A new episode: its first observation, bool[10, 10, C]."""
        self.engine_stream, bits = splitmix64(self.engine_stream)
        self.env.random = self.env.env.random = SplitmixRandom(bits)
        self.env.last_action = 0  # the previous action of a new episode is the no-op
        self.env.reset()
        return self.env.state()

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        """(observation, reward, terminal) of one step."""
        reward, terminal = self.env.act(int(action))
        return self.env.state(), float(reward), bool(terminal)
