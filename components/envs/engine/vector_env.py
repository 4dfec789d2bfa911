"""The host-loop door of every task: a batch of environments stepped by C++ worker threads
(`engine/pool.h`), offered as a `gymnasium.vector.VectorEnv` with same-step auto-reset."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from components.envs.engine import catalogue
from components.envs.engine.actions import host_actions
from components.envs.engine.spec import EnvSpec, physical_rows
from components.envs.engine.step_result import StepResult
from components.envs.engine.threads import resolve_threads
from metagraph.checks import positive_int


def check_seed(seed: Any, where: str) -> int:
    """`seed` as the engine's uint64; None draws a fresh one from the operating system."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"{where}: seed must be an int or None, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"{where}: seed must be in [0, 2**64), got {seed}")
    return int(seed)


def extras_info(names: tuple[str, ...], extras: np.ndarray) -> dict[str, np.ndarray]:
    """A step's extras (num_envs, extras_dim) by name, as Gymnasium's `info` has them (a
    MuJoCo task's "x_velocity", "reward_ctrl", ...; a game's "player_to_move", ...): each
    (num_envs,), an array term's elements ("tendon_length[0]", "tendon_length[1]", ...)
    together as (num_envs, k) under their common name."""
    info: dict[str, Any] = {}
    for k, name in enumerate(names):
        head, bracket, _ = name.partition("[")
        if bracket:
            info.setdefault(head, []).append(extras[:, k])
        else:
            info[name] = extras[:, k]
    return {name: np.stack(v, axis=1) if isinstance(v, list) else v for name, v in info.items()}


def set_spaces(pool: Any, spec: EnvSpec, batch: int) -> None:
    """Gymnasium's space attributes of a vector pool whose steps hold `batch` environments
    (`single_observation_space`, `single_action_space` and their batched forms)."""
    pool.single_observation_space = spec.observation_space
    pool.single_action_space = spec.action_space
    pool.observation_space = batch_space(spec.observation_space, batch)
    pool.action_space = batch_space(spec.action_space, batch)


def refuse_own_engine(spec: EnvSpec, what: str) -> None:
    """A TypeError for a spec without a compiled task (a family with an engine of its own,
    Atari) given to one of the engine's own pools or in-graph doors."""
    if spec.task is None:
        raise TypeError(f"{spec.env_id}: {what} steps compiled tasks; {spec.env_id} steps in "
                        f"an engine of its own: make its pool with components.envs.make("
                        f"{spec.env_id!r}, n) (door 'host' of the Environment component)")


class VectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` copies of an environment, stepped by `num_threads` C++ threads (by default
    every core this process may run on, capped at `num_envs`; results do not depend on it).

    `step` returns the next observations; where an episode ended (terminated or truncated)
    that is already the next episode's first observation, and `info["final_obs"]` (masked by
    `info["_final_obs"]`) holds the last one (zeros in the other rows, as Gymnasium's own
    vector envs fill it); `info["final_info"]` (masked by `info["_final_info"]`) is the ended
    episodes' last info, as Gymnasium's own vector envs set it: the task's extras by name
    (empty for a task without extras). A step's `info` has the extras by name too.

    Several Python threads may call one pool at once: each call holds the pool's lock, so the
    environments end as if the calls had run one after another. A pool pickles with its whole
    state (every environment's words, random stream and step count).

    Args:
        env: an environment id (`components.envs.env_ids()`) or its `EnvSpec`.
        num_envs: how many environments.
        seed: the environments' streams (environment i draws from (seed, i)); None: fresh.
        num_threads: C++ threads stepping the environments; None: the default above.
        first_stream: environment i draws from (seed, first_stream + i): these environments
            step as environments first_stream ... of a larger pool of the same seed would
            (the asynchronous pool's groups, `async_vector_env.py`).
        **kwargs: the environment's keyword arguments (a MuJoCo task's Gymnasium ones).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, env: str | EnvSpec, num_envs: int = 1, seed: int | None = 0,
                 num_threads: int | None = None, *, first_stream: int = 0, **kwargs: Any):
        if isinstance(env, EnvSpec):
            if kwargs:
                raise TypeError(f"{env.env_id}: keyword arguments go with an id, not a spec")
            self.env_spec = env
        else:
            self.env_spec = catalogue.spec(env, **kwargs)
        where = self.env_spec.env_id
        refuse_own_engine(self.env_spec, "VectorEnv")
        self.num_envs = positive_int(num_envs, f"{where}: num_envs")
        threads = resolve_threads(num_threads, self.num_envs, where)
        if isinstance(first_stream, bool) or not isinstance(first_stream, int | np.integer) \
                or not 0 <= first_stream < 2**63:
            raise ValueError(f"{where}: first_stream must be an int in [0, 2**63), got "
                             f"{first_stream!r}")
        self._first_stream = int(first_stream)
        self._extras_names = self.env_spec.extras_names  # (read once: the step's hot path)
        self._pool = self.env_spec.task.Pool(self.env_spec.task, self.num_envs,
                                             check_seed(seed, where), threads,
                                             self._first_stream)
        self._setup()

    def _setup(self) -> None:
        set_spaces(self, self.env_spec, self.num_envs)
        self.render_mode = None
        self.closed = False

    @property
    def num_threads(self) -> int:
        """The number of threads the C++ pool steps with."""
        return self._pool.num_threads

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Reset every environment: from `seed` (environment i from the stream of (seed, i);
        without one each goes on with its own stream), or from an exact physical state,
        `options={"state": s}` ((physical_dim,) for all or one row per environment; for
        MuJoCo also `options={"qpos": ..., "qvel": ...}`, Gymnasium's reset then
        `set_state`)."""
        self._check_open()
        if seed is not None:  # np_random_seed == seed, as Gymnasium's vector envs
            seed = check_seed(seed, self.env_spec.env_id)
            super().reset(seed=seed)
        state = self._physical_from(options or {})
        if state is not None:
            return self._pool.reset_to(physical_rows(self.env_spec, state, self.num_envs)), {}
        return self._pool.reset(seed), {}

    def _physical_from(self, options: dict[str, Any]) -> Any:
        """The physical state that `options` gives, or None."""
        if "state" in options:
            return options["state"]
        parts = self.env_spec.physical_options
        given = [name for name, _ in parts if name in options]
        if not given:
            return None
        if len(given) != len(parts):
            raise ValueError(f"{self.env_spec.env_id}: options needs all of "
                             f"{[name for name, _ in parts]}, got {given}")
        rows = [physical_rows(self.env_spec, options[name], self.num_envs, f"options[{name!r}]",
                              width) for name, width in parts]
        return np.concatenate(rows, axis=-1)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Gymnasium's vector step with same-step auto-reset: `(obs, reward, terminated,
        truncated, info)`; a done environment's last observation is in `info["final_obs"]`;
        a task with extra step outputs puts each in `info` by name (`extras_info`: a MuJoCo
        task's Gymnasium info terms, a game's "player_to_move", ...; float32 (num_envs,), with
        Gymnasium's `info["_<name>"]` mask, all True), read from the state each step ended
        in."""
        out = self._pool_step(actions)
        info: dict[str, Any] = {}
        terms = extras_info(self._extras_names, out.extras) if self._extras_names else {}
        if terms:  # (a task without extras reads nothing more here: CartPole's hot path)
            everyone = np.ones(self.num_envs, bool)
            for name, value in terms.items():
                info[name], info[f"_{name}"] = value, everyone
        if out.any_done:  # an ended episode's last info: the terms of the step it ended
            final_info: dict[str, Any] = {}
            for name, value in terms.items():
                final_info[name], final_info[f"_{name}"] = value, out.done
            info.update({"final_obs": out.final_obs, "_final_obs": out.done,
                         "final_info": final_info, "_final_info": out.final_done})
        return out.obs, out.reward, out.terminated, out.truncated, info

    def step_result(self, actions: Any, *, final_obs: bool = False, extras: bool = False,
                    legal_mask: bool = False) -> StepResult:
        """The same step as the functional doors' (`FunctionalEnv.step`), in NumPy: a
        `StepResult` whose `state` is None (it lives in the pool), with the final
        observations (an ended episode's last, the others' `obs`), the task's extra outputs
        by name and the next states' legal actions where asked for; what is not asked for is
        None. The arrays are those `step` gives: never written again while you hold them."""
        if legal_mask:
            self.env_spec.legal_mask_width()  # (a TypeError for continuous actions)
        out = self._pool_step(actions)
        final = None
        if final_obs:
            final = out.obs if not out.any_done else np.where(
                out.done.reshape(-1, *[1] * (out.obs.ndim - 1)), out.final_obs, out.obs)
        names = self.env_spec.extras_names
        return StepResult(None, out.obs, out.reward, out.terminated, out.truncated, final,
                          {name: out.extras[:, k] for k, name in enumerate(names)} if extras
                          else None,
                          self._pool.legal_mask() if legal_mask else None)

    def _pool_step(self, actions: Any) -> Any:
        """The C++ pool's step, its outputs by name (`<Name>PoolStep`, pool.h `Pool::Step`):
        obs, reward, terminated, truncated, final_obs (zeros where no episode ended), done and
        its copy final_done (the episodes that ended), extras (num_envs, extras_dim) and
        any_done."""
        # (a closed pool refuses to step by itself: no Python check on this hot path). The
        # pool takes its own dtype and shape as they are and refuses anything else with a
        # TypeError, here converted (or refused, saying what was expected) and given again;
        # it checks the values (range, NaN) itself before any environment moves.
        try:
            return self._pool.step(actions)
        except TypeError:
            pass  # (converted outside the handler: its errors chain to nothing)
        return self._pool.step(host_actions(self.env_spec, actions, self.num_envs))

    def legal_mask(self) -> np.ndarray:
        """Every environment's legal actions, bool (num_envs, n) (discrete tasks; all true for
        a task whose actions are always legal)."""
        self._check_open()
        return self._pool.legal_mask()

    def physical_state(self) -> np.ndarray:
        """The current physical states, (num_envs, physical_dim) float64 (Gymnasium's layout;
        MuJoCo: qpos then qvel, Gymnasium's `state_vector()`)."""
        self._check_open()
        return self._pool.physics()

    def elapsed_steps(self) -> np.ndarray:
        """The steps each environment has taken in its current episode."""
        return self._pool.elapsed_steps()

    def records(self) -> np.ndarray:
        """Every environment's whole state, uint64 (num_envs, record_words): the task's words,
        the random stream and the step count; the in-graph door's state holds the same words
        (`InGraphEnv.records`)."""
        self._check_open()
        return self._pool.records()

    def set_records(self, records: Any) -> None:
        """Set every environment from `records`, uint64 (num_envs, record_words) exactly (from
        `records()` or the in-graph door); every record is checked before any is set."""
        self._check_open()
        shape = (self.num_envs, self.env_spec.record_words)
        arr = np.asarray(records)
        if arr.dtype != np.uint64 or arr.shape != shape:
            raise TypeError(f"{self.env_spec.env_id}: records must be uint64{list(shape)} "
                            f"(from records()), got {arr.dtype}{list(arr.shape)}")
        self._pool.set_records(np.ascontiguousarray(arr))

    def __getstate__(self) -> dict:
        """Pickled with every environment's whole state: a copy goes on where this one is."""
        state = {k: v for k, v in self.__dict__.items() if k != "_pool"}
        state["_pool"] = (self._pool.num_threads, self._pool.closed, self._pool.records())
        return state

    def __setstate__(self, state: dict) -> None:
        """Rebuild the pool (the spec by its id and arguments) and set its state."""
        num_threads, closed, records = state.pop("_pool")
        self.__dict__.update(state)
        self._pool = self.env_spec.task.Pool(self.env_spec.task, self.num_envs, 0, num_threads,
                                             state.get("_first_stream", 0))
        self._pool.set_records(records)
        if closed:
            self._pool.close()

    def close_extras(self, **kwargs: Any) -> None:
        """Release the C++ pool (Gymnasium's `close` calls it)."""
        self._pool.close()

    def _check_open(self) -> None:
        if self.closed or self._pool.closed:
            raise RuntimeError(f"{self.env_spec.env_id}: the environment pool is closed")
