"""The Atari host pool: ale-py's own C++ vector engine (`ale_py.vector_env.AtariVectorEnv`: its
threads, EnvPool's preprocessing) behind the engine's two host interfaces, the synchronous
`AtariVectorEnv` (a `gymnasium.vector.VectorEnv` with same-step auto-reset, as
`components.envs.VectorEnv`) and the asynchronous `AtariAsyncVectorEnv` (EnvPool's
`async_reset`, `recv`, `send`, as `components.envs.AsyncVectorEnv`).

ale-py runs the games with neither reward clipping nor episodic life; both are done here, so
that every step also reports the game's raw reward, its score so far and its length in steps,
whatever the learning signal (EnvPool's `info["reward"]`, `info["terminated"]`,
`info["elapsed_step"]`, `info["lives"]`; `info["episode_return"]`, the raw score).

Seeds: `reset(seed=s)` seeds environment i with (s + i) mod 2**31, as ale-py and Gymnasium
seed a vector env; ale-py takes 31-bit seeds. An environment's exact state cannot be read or
set through ale-py's vector engine, nor pickled: those refuse by name.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from components.envs.atari.games import AtariOptions, options_from, roms
from components.envs.engine.actions import action_error, host_actions
from components.envs.engine.spec import EnvSpec
from components.envs.engine.step_result import StepResult
from components.envs.engine.threads import resolve_threads
from components.envs.engine.vector_env import check_seed, set_spaces
from metagraph.checks import positive_int

SEED_RANGE = 2**31  # ale-py's seeds are C ints


def ale_seeds(seed: int, count: int) -> np.ndarray:
    """The seeds of `count` environments from one seed: (seed + i) mod 2**31."""
    return (np.arange(count, dtype=np.int64) + seed % SEED_RANGE) % SEED_RANGE


class _Games:
    """The state every Atari pool keeps beside ale-py's engine: each environment's lives, its
    game's raw score and steps so far, and what turns a raw ale-py batch into the pool's step
    (episodic life, reward clipping, the raw figures in `info`)."""

    def __init__(self, spec: EnvSpec, num_envs: int, batch_size: int, num_threads: int):
        from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

        self.spec = spec
        self.options: AtariOptions = options_from(spec.env_id, dict(spec.kwargs))
        o = self.options
        self.ale = AleVectorEnv(
            roms()[spec.env_id], num_envs, batch_size=batch_size, num_threads=num_threads,
            max_num_frames_per_episode=o.max_episode_steps * o.frame_skip,
            repeat_action_probability=o.repeat_action_probability,
            full_action_space=o.full_action_space, autoreset_mode=AutoresetMode.SAME_STEP,
            img_height=o.img_height, img_width=o.img_width, grayscale=o.gray_scale,
            stack_num=o.stack_num, frameskip=o.frame_skip, maxpool=True, noop_max=o.noop_max,
            episodic_life=False, reward_clipping=False, use_fire_reset=o.use_fire_reset)
        self.num_envs = num_envs
        self.num_threads = num_threads
        self.lives = np.zeros(num_envs, np.int32)
        self.score = np.zeros(num_envs, np.float32)
        self.steps = np.zeros(num_envs, np.int32)

    def reset(self, seed: int | None) -> tuple[np.ndarray, dict]:
        """Start a new game everywhere, from `seed`, or (None) each environment going on with
        its own stream (ale-py's `reset`: in the asynchronous mode the first batch to
        finish)."""
        seeds = None if seed is None else ale_seeds(seed, self.num_envs)
        obs, info = self.ale.reset(seed=seeds)
        self.score[:], self.steps[:] = 0, 0
        return self.started(obs, info)

    def started(self, obs: np.ndarray, info: dict) -> tuple[np.ndarray, dict]:
        """A batch of first observations as the pool gives it."""
        ids = info["env_id"]
        self.lives[ids] = info["lives"]
        return obs, self._info(ids, info["lives"], np.zeros(len(ids), np.float32),
                               np.zeros(len(ids), bool))

    def actions(self, actions: Any, count: int) -> np.ndarray:
        """`actions` for `count` environments as ale-py takes them, or the engine's error."""
        arr = host_actions(self.spec, actions, count)  # (checks the values of int64 and the like)
        message = action_error(self.spec, arr) if np.asarray(actions).dtype == arr.dtype \
            else None  # int32 as given: no C++ pool behind ale-py checks them, so here
        if message is not None:
            raise ValueError(message)
        return arr

    def finish(self, batch: tuple) -> tuple:
        """A raw ale-py batch `(obs, reward, terminated, truncated, info)` as the pool's step:
        episodic life and reward clipping applied, `info` with the raw figures, Gymnasium's
        `final_obs` / `final_info` where an episode ended."""
        obs, raw_reward, game_over, truncated, raw = batch
        ids, lives = raw["env_id"], raw["lives"]
        raw_reward = raw_reward.astype(np.float32)
        self.score[ids] += raw_reward
        self.steps[ids] += 1
        ended = game_over | truncated
        terminated = game_over.copy()
        if self.options.episodic_life:
            terminated |= (lives < self.lives[ids]) & ~ended
        reward = np.sign(raw_reward) if self.options.reward_clip else raw_reward
        info = self._info(ids, lives, raw_reward, game_over)
        done = terminated | truncated
        if done.any():
            final = raw.get("final_obs")
            final = obs.copy() if final is None else np.where(
                ended.reshape(-1, *[1] * (obs.ndim - 1)), final, obs)
            info["final_info"] = {**{k: v for k, v in info.items() if k != "env_id"},
                                  **{f"_{k}": done for k in info if k != "env_id"}}
            info.update({"final_obs": final, "_final_obs": done, "_final_info": done.copy()})
        self.score[ids[ended]] = 0
        self.steps[ids[ended]] = 0
        self.lives[ids] = lives
        return obs, reward, terminated, truncated, info

    def _info(self, ids: np.ndarray, lives: np.ndarray, raw_reward: np.ndarray,
              game_over: np.ndarray) -> dict[str, np.ndarray]:
        return {"env_id": ids.astype(np.int32), "lives": lives.astype(np.int32),
                "reward": raw_reward, "terminated": game_over.astype(bool),
                "episode_return": self.score[ids].copy(), "elapsed_step": self.steps[ids].copy()}

    def close(self) -> None:
        """Stop ale-py's threads."""
        self.ale = None


def refuse_exact_state(env_id: str, what: str) -> TypeError:
    """What an Atari pool says when asked for an environment's exact state."""
    return TypeError(f"{env_id}: {what}: ale-py's vector engine can neither read nor set an "
                     f"environment's exact state (the emulator's RAM and the preprocessing's "
                     f"frames stay inside it); reset with a seed instead")


class AtariVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` environments of an Atari game stepped by ale-py's C++ threads, with
    same-step auto-reset (see the module docstring; `components.envs.make("Pong-v5", n)`).

    Args:
        spec: the game's spec (`components.envs.spec("Pong-v5", **kwargs)`).
        num_envs: how many environments.
        seed: environment i is seeded with (seed + i) mod 2**31; None: fresh.
        num_threads: ale-py's threads; None: every core this process may run on, capped at
            `num_envs`.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, spec: EnvSpec, num_envs: int = 1, seed: int | None = 0,
                 num_threads: int | None = None):
        where = spec.env_id
        self.env_spec = spec
        self.num_envs = positive_int(num_envs, f"{where}: num_envs")
        self._seed = check_seed(seed, where)
        self._games = _Games(spec, self.num_envs, 0,
                             resolve_threads(num_threads, self.num_envs, where))
        self._started = False
        set_spaces(self, spec, self.num_envs)
        self.render_mode = None
        self.closed = False

    @property
    def num_threads(self) -> int:
        """ale-py's threads stepping the environments."""
        return self._games.num_threads

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a new game in every environment: from `seed` (environment i from (seed + i)
        mod 2**31), or, without one, from the pool's seed the first time and each
        environment's own stream after. `options` is refused: no exact state can be set."""
        self._check_open()
        if options:
            raise refuse_exact_state(self.env_spec.env_id, f"reset(options={sorted(options)})")
        if seed is not None:
            seed = check_seed(seed, self.env_spec.env_id)
            super().reset(seed=seed)
        elif not self._started:
            seed = self._seed
        self._started = True
        return self._games.reset(seed)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Gymnasium's vector step with same-step auto-reset: `(obs, reward, terminated,
        truncated, info)`, `info` as the module docstring says."""
        self._check_open()
        if not self._started:
            self.reset()
        self._games.ale.send(self._games.actions(actions, self.num_envs))
        return self._games.finish(self._games.ale.recv())

    def step_result(self, actions: Any, *, final_obs: bool = False, extras: bool = False,
                    legal_mask: bool = False) -> StepResult:
        """The same step as a `StepResult` (the host door's record; `extras` is None: the
        games have none)."""
        obs, reward, terminated, truncated, info = self.step(actions)
        final = info.get("final_obs", obs) if final_obs else None
        return StepResult(None, obs, reward, terminated, truncated, final, None,
                          self.legal_mask() if legal_mask else None)

    def legal_mask(self) -> np.ndarray:
        """Every action is legal in every state: all True, bool (num_envs, n)."""
        return np.ones((self.num_envs, int(self.env_spec.action_space.n)), bool)

    def physical_state(self) -> np.ndarray:
        """Refused: see `refuse_exact_state`."""
        raise refuse_exact_state(self.env_spec.env_id, "physical_state()")

    def records(self) -> np.ndarray:
        """Refused: see `refuse_exact_state`."""
        raise refuse_exact_state(self.env_spec.env_id, "records()")

    def set_records(self, records: Any) -> None:
        """Refused: see `refuse_exact_state`."""
        raise refuse_exact_state(self.env_spec.env_id, "set_records()")

    def __getstate__(self) -> dict:
        raise refuse_exact_state(self.env_spec.env_id, "pickling the pool")

    def close_extras(self, **kwargs: Any) -> None:
        """Stop ale-py's threads (Gymnasium's `close` calls it)."""
        self._games.close()

    def _check_open(self) -> None:
        if self.closed or self._games.ale is None:
            raise RuntimeError(f"{self.env_spec.env_id}: the environment pool is closed")


__all__ = ["AtariVectorEnv", "ale_seeds", "refuse_exact_state"]
