"""`FrameStackReplay`: transitions whose observations are stacks of frames (Atari's
`[4, 84, 84]`, the newest frame last), each frame stored once, as Dopamine's circular replay
keeps them.

    replay = FrameStackReplay(1_000_000, num_envs=4, observation_space=Box((4, 84, 84), uint8),
                              record_space=Dict(action=Discrete(6), reward=Box(()),
                                                discount=Box(())))
    replay.insert(observations, records, next_steps, last_observations)  # a rollout [T, N]
    batch, indices = replay.sample(key, 32)  # batch["obs"], batch["next_obs"]: [32, 4, 84, 84]

A replay that keeps each transition's observation and next observation holds 2K frames a
transition; this one holds one frame a step of each environment, and rebuilds a stack from
the frames before it: 1,000,000 Atari transitions in 7 GB instead of 56 GB.

What makes the rebuilt stacks exact, checked at every insert, not assumed: an observation
either *continues* the one before it in its environment (its older K-1 frames are that one's
newest K-1: a step inside an episode, or across a lost life where the game goes on), or
*starts* a stack whose older frames are all zero (ale-py's and Dopamine's reset) or all
copies of its newest frame (Gymnasium's `FrameStackObservation` padding "reset"). Anything
else (a wrapper that changes a frame in place, a stack along another axis) raises
`mg.RuntimeCheckError` naming this component after the call, and the stacks stored are not
to be trusted. The stack axis is the observation's first.

Inserts continue one another in time, as a rollout continues the one before it: `records`
and `next_steps` are the rollout's steps `[T, N]`; the next observation of step t is the one
`next_steps[t]` (1 to T - t) steps later, `last_observations` that after step T-1 (the
following rollout's first). Sampling draws uniformly from the transitions held, as
`ReplayBuffer` does (with `stratified`, one from each of `batch_size` equal slices).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from metagraph import runtime_checks
from metagraph.checks import positive_int
from metagraph.spaces import Box, Dict


class FrameStackReplay(mg.Component):
    """A replay of transitions over stacked frames, each frame kept once.

    Args:
        capacity: The transitions kept (the oldest overwritten), rounded down to a multiple
            of `num_envs`.
        num_envs: The environments a rollout steps at once (a rollout's second axis).
        observation_space: One observation: a Box of K >= 2 frames along its first axis.
        record_space: The rest of one transition (action, reward, discount ...), a Dict.
        name: The scope name.
        min_size: The transitions `sample` needs (refused with fewer, after the call).
    """

    def __init__(self, capacity: int, num_envs: int, observation_space: Box,
                 record_space: Dict, name: str | None = None, min_size: int = 1):
        super().__init__(name)
        owner = type(self).__name__
        self.num_envs = positive_int(num_envs, f"{owner}: num_envs")
        self.steps = positive_int(capacity, f"{owner}: capacity") // num_envs
        if self.steps < 1:
            raise ValueError(f"{owner}: a capacity of {capacity} holds no step of "
                             f"{num_envs} environments")
        if not (isinstance(observation_space, Box) and len(observation_space.shape) >= 2
                and observation_space.shape[0] >= 2):
            raise ValueError(f"{owner}: observation_space must be a Box of K >= 2 frames along "
                             f"its first axis (Atari's (4, 84, 84)); got {observation_space}")
        if not isinstance(record_space, Dict) or {"obs", "next_obs"} & set(record_space.keys()):
            raise ValueError(f"{owner}: record_space must be a Dict of the transition's other "
                             f"fields (not obs or next_obs, which it builds); got {record_space}")
        self.min_size = positive_int(min_size, f"{owner}: min_size")
        self.stack = observation_space.shape[0]
        self.frame_shape = tuple(observation_space.shape[1:])
        self.dtype = observation_space.dtype
        self.record_space = record_space
        # a step's frames reach K - 1 steps back, and its next observation is at most the
        # newest (the rollout's last observation): the ring holds `steps + K` times
        self.length = self.steps + self.stack

    def _store(self) -> dict[str, Any]:
        """The ring over time [length, num_envs]: each step's newest frame, how many of its
        older frames are real (`depth`, 0 to K - 1) and how the rest are padded (`zeros`),
        the next observation's distance, and the transition's other fields."""
        def zeros(shape, dtype):
            return jnp.zeros((self.length, self.num_envs, *shape), dtype)

        return self.get_state("store", lambda key: {
            "frames": zeros(self.frame_shape, self.dtype),
            "depth": zeros((), jnp.int32), "zeros": zeros((), bool),
            "next_steps": zeros((), jnp.int32),
            "records": jax.tree.map(lambda s: zeros(s.shape, s.dtype),
                                    self.record_space.to_abstract())})

    def _time(self) -> jax.Array:
        """Steps inserted so far (the time of the last observation given)."""
        return self.get_state("time", jnp.zeros((), jnp.int32))

    def _previous(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The observation before the next insert's first, its depth and padding."""
        return (self.get_state("previous", jnp.zeros(
                    (self.num_envs, self.stack, *self.frame_shape), self.dtype)),
                self.get_state("previous_depth", jnp.zeros((self.num_envs,), jnp.int32)),
                self.get_state("previous_zeros", jnp.zeros((self.num_envs,), bool)))

    def _held(self) -> jax.Array:
        """The steps whose transitions are held (per environment)."""
        return jnp.minimum(self._time(), self.steps)

    @mg.api
    def insert(self, observations, records, next_steps, last_observations):
        """Append a rollout: `observations` [T, N, K, ...], `records` (the record space) and
        `next_steps` (ints in [1, T - t]) [T, N], `last_observations` [N, K, ...]; returns the
        transitions held."""
        steps = observations.shape[0]
        stack = (self.stack, *self.frame_shape)
        wanted = {"observations": (steps, self.num_envs, *stack),
                  "next_steps": (steps, self.num_envs),
                  "last_observations": (self.num_envs, *stack)}
        for what, value in (("observations", observations), ("next_steps", next_steps),
                            ("last_observations", last_observations)):
            if tuple(value.shape) != wanted[what]:
                raise ValueError(f"{self.scope}.insert: {what} must be {wanted[what]} (T steps "
                                 f"of {self.num_envs} environments of {stack}); got "
                                 f"{tuple(value.shape)}")
        if steps > self.steps:
            raise ValueError(f"{self.scope}.insert: a rollout of {steps} steps exceeds the "
                             f"{self.steps} steps of {self.num_envs} environments held")
        store = self._store()
        time = self._time()
        previous, previous_depth, previous_zeros = self._previous()
        sequence = jnp.concatenate([observations, last_observations[None]]).astype(self.dtype)
        before = jnp.concatenate([previous[None], sequence[:-1]])
        frame_axes = tuple(range(2, sequence.ndim))  # a stack's axes, per [t, n]
        continues = jnp.all(sequence[:, :, :-1] == before[:, :, 1:], axis=frame_axes)
        continues = continues & ((jnp.arange(steps + 1) > 0) | (time > 0))[:, None]
        zero_padded = jnp.all(sequence[:, :, :-1] == 0, axis=frame_axes)
        copy_padded = jnp.all(sequence == sequence[:, :, -1:], axis=frame_axes)

        def chain(carry, step):
            depth, zeros = carry
            go_on, zero, _ = step
            depth = jnp.where(go_on, jnp.minimum(depth + 1, self.stack - 1), 0)
            zeros = jnp.where(go_on, zeros, zero)
            return (depth, zeros), (depth, zeros)

        _, (depth, zeros) = jax.lax.scan(chain, (previous_depth, previous_zeros),
                                         (continues, zero_padded, copy_padded))
        shareable = (continues | zero_padded | copy_padded).all(1)
        reach = jnp.arange(steps, 0, -1)[:, None]  # how far on step t's next one may lie
        in_range = ((next_steps >= 1) & (next_steps <= reach)).all(1)
        runtime_checks.require_once(
            self, shareable.all() & in_range.all(), _refusal(self.scope),
            jnp.argmin(shareable), jnp.argmin(in_range), shareable.all())
        rows = (time + jnp.arange(steps + 1)) % self.length
        transitions = rows[:-1]
        store = {
            "frames": store["frames"].at[rows].set(sequence[:, :, -1]),
            "depth": store["depth"].at[rows].set(depth),
            "zeros": store["zeros"].at[rows].set(zeros),
            "next_steps": store["next_steps"].at[transitions].set(
                next_steps.astype(jnp.int32)),
            "records": jax.tree.map(lambda kept, new: kept.at[transitions].set(
                new.astype(kept.dtype)), store["records"], records)}
        self.set_state("store", store)
        self.set_state("time", time + steps)
        self.set_state("previous", sequence[-2])
        self.set_state("previous_depth", depth[-2])
        self.set_state("previous_zeros", zeros[-2])
        return self._held() * self.num_envs

    def _stacks(self, store: dict[str, Any], times: jax.Array, envs: jax.Array) -> jax.Array:
        """The observations at `times` of environments `envs`, rebuilt from the frames."""
        rows = times % self.length
        depth, zeros = store["depth"][rows, envs], store["zeros"][rows, envs]
        lag = jnp.arange(self.stack - 1, -1, -1)  # the stack's frames, oldest first
        padded = lag[None, :] > depth[:, None]
        source = (times[:, None] - jnp.minimum(lag[None, :], depth[:, None])) % self.length
        frames = store["frames"][source, envs[:, None]]
        blank = (padded & zeros[:, None]).reshape(*padded.shape, *[1] * len(self.frame_shape))
        return jnp.where(blank, jnp.zeros((), self.dtype), frames)

    @mg.api
    def sample(self, key, batch_size: int = 32, stratified: bool = False):
        """(transitions, indices): `batch_size` transitions drawn uniformly with replacement
        (`obs`, `next_obs` and the record space's fields); with `stratified`, one from each
        of `batch_size` equal slices of those held. Refused while fewer than `min_size` are
        held (`mg.RuntimeCheckError` after the call)."""
        held = self._held() * self.num_envs
        runtime_checks.require(held >= self.min_size, (
            f"{self.scope}.sample: the replay holds fewer than min_size={self.min_size} "
            f"transitions; insert some first (can_sample() says when sampling is possible)"))
        size = jnp.maximum(held, 1)
        if stratified:
            u = (jnp.arange(batch_size) + jax.random.uniform(key, (batch_size,))) / batch_size
            indices = jnp.minimum((u * size).astype(jnp.int32), size - 1)
        else:
            indices = jax.random.randint(key, (batch_size,), 0, size)
        store = self._store()
        times = self._time() - self._held() + indices // self.num_envs
        envs = indices % self.num_envs
        rows = times % self.length
        records = jax.tree.map(lambda kept: kept[rows, envs], store["records"])
        next_times = times + store["next_steps"][rows, envs]
        return ({"obs": self._stacks(store, times, envs), **records,
                 "next_obs": self._stacks(store, next_times, envs)}, indices)

    @mg.api
    def size(self):
        """The transitions held."""
        return self._held() * self.num_envs

    @mg.api
    def can_sample(self):
        """Whether `sample` can draw: at least `min_size` transitions are held."""
        return self._held() * self.num_envs >= self.min_size


def _refusal(scope: str):
    def message(step, next_step, shareable):
        if shareable:
            return (f"{scope}.insert: next_steps at step {int(next_step)} of the rollout is "
                    f"outside [1, T - t] (the next observation must lie in the rollout or be "
                    f"its last_observations)")
        return (f"{scope}.insert: the observation at step {int(step)} of the rollout neither "
                f"continues its environment's previous stack (its older frames that one's "
                f"newer ones) nor starts a stack (older frames all zero, or all copies of the "
                f"newest): its frames cannot be shared; use a ReplayBuffer of whole "
                f"observations")
    return message
