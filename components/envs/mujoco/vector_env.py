"""The host-loop door of the MuJoCo tasks: a `gymnasium.vector.VectorEnv` of environments, one
persistent `mjData` each, stepped by C++ threads with the GIL released."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

from components.envs.mujoco.specs import MujocoSpec, mujoco_spec
from components.envs.vector_env import NativeVectorEnv, check_seed
from metagraph.checks import positive_int


class MujocoVectorEnv(NativeVectorEnv):
    """`num_envs` copies of a MuJoCo task with Gymnasium's v5 semantics (observations and
    rewards float64, as Gymnasium's own) and same-step auto-reset, as `NativeVectorEnv`.

    Args:
        env_id: "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5" or "Ant-v5".
        num_envs: how many environments.
        seed: the environments' streams (environment i draws from (seed, i)); None: fresh.
        num_threads: C++ threads stepping the environments (results do not depend on it).
        **kwargs: Gymnasium's keyword arguments of the task (`forward_reward_weight`,
            `ctrl_cost_weight`, `reset_noise_scale`, `healthy_z_range`, ...; `xml_file`,
            `frame_skip`) and `max_episode_steps` (default 1000).

    A step whose environment goes unstable (a MuJoCo warning, NaN or inf in the state or
    `qacc`) raises a RuntimeError naming it: MuJoCo has then reset that environment's data.
    """

    def __init__(self, env_id: str, num_envs: int = 1, seed: int | None = 0,
                 num_threads: int = 1, **kwargs: Any):
        self.env_spec: MujocoSpec = mujoco_spec(env_id, **kwargs)
        self._make_pool(positive_int(num_envs, f"{env_id}: num_envs"), check_seed(seed, env_id),
                        positive_int(num_threads, f"{env_id}: num_threads"))

    def _make_pool(self, num_envs: int, seed: int, num_threads: int) -> None:
        self.num_envs = num_envs
        self._pool = self.env_spec.pool_class(self.env_spec.model, num_envs, seed, num_threads)
        self.single_observation_space = self.env_spec.observation_space
        self.single_action_space = self.env_spec.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._action_dtype = np.dtype(np.float32)
        self._action_shape = (num_envs, self.env_spec.nu)
        self.render_mode = None
        self.closed = False

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Reset every environment: from `seed` (environment i from the stream of (seed, i);
        without one each goes on with its own stream), or to exact positions and velocities,
        `options={"qpos": ..., "qvel": ...}` ((nq,) / (nv,) for all or one row per
        environment), as Gymnasium's reset followed by `set_state(qpos, qvel)`."""
        self._check_open()
        if seed is not None:
            seed = check_seed(seed, self.env_spec.env_id)
            super(NativeVectorEnv, self).reset(seed=seed)
        if options and ("qpos" in options or "qvel" in options):
            model = self.env_spec.model
            qpos = self._rows(options.get("qpos"), model.nq, "qpos")
            qvel = self._rows(options.get("qvel"), model.nv, "qvel")
            return self._pool.reset_to(qpos, qvel), {}
        return self._pool.reset(seed), {}

    def _rows(self, values: Any, width: int, name: str) -> np.ndarray:
        if values is None:
            raise ValueError(f"{self.env_spec.env_id}: options needs both 'qpos' and 'qvel'")
        arr = np.asarray(values, np.float64)
        if arr.shape == (width,):
            arr = np.broadcast_to(arr, (self.num_envs, width))
        if arr.shape != (self.num_envs, width):
            raise ValueError(f"{self.env_spec.env_id}: options[{name!r}] must have shape "
                             f"({width},) or ({self.num_envs}, {width}), got {arr.shape}")
        return np.ascontiguousarray(arr)

    def qpos(self) -> np.ndarray:
        """Every environment's `qpos`, (num_envs, nq) float64."""
        self._check_open()
        return self._pool.qpos()

    def qvel(self) -> np.ndarray:
        """Every environment's `qvel`, (num_envs, nv) float64."""
        self._check_open()
        return self._pool.qvel()

    def physical_state(self) -> np.ndarray:
        """Positions then velocities, (num_envs, nq + nv): Gymnasium's `state_vector()`."""
        return np.concatenate([self.qpos(), self.qvel()], axis=1)

    def records(self) -> np.ndarray:
        """Every environment's whole state, uint64[num_envs, W]: MuJoCo's integration state
        (`mj_getState`, mjSTATE_INTEGRATION) as float64 bits, the position the next step's
        velocity is measured from (2), the random stream and the step count; the in-graph
        door's state holds the same words."""
        self._check_open()
        return self._pool.records()

    def set_records(self, records: Any) -> None:
        """Set every environment from `records` (from `records()` or the in-graph door)."""
        self._pool.set_records(np.ascontiguousarray(records, np.uint64))

    def __getstate__(self) -> dict:
        """Pickled with every environment's whole state: a copy goes on where this one is."""
        state = {k: v for k, v in self.__dict__.items() if k != "_pool"}
        state["_pool"] = (self._pool.num_threads, self._pool.closed, self._pool.records())
        return state

    def __setstate__(self, state: dict) -> None:
        """Rebuild the pool (and the model, by its arguments) and set its state."""
        num_threads, closed, records = state.pop("_pool")
        self.__dict__.update(state)
        self._pool = self.env_spec.pool_class(self.env_spec.model, self.num_envs, 0, num_threads)
        self._pool.set_records(records)
        if closed:
            self._pool.close()


def make(env_id: str, num_envs: int = 1, seed: int | None = 0, num_threads: int = 1,
         **kwargs: Any) -> MujocoVectorEnv:
    """A host pool of `num_envs` MuJoCo environments stepped by `num_threads` C++ threads,
    made with Gymnasium's keyword arguments of the task."""
    return MujocoVectorEnv(env_id, num_envs, seed, num_threads, **kwargs)


def vector_entry_point(env_id: str, num_envs: int = 1, seed: int | None = 0,
                       num_threads: int = 1, **kwargs: Any) -> MujocoVectorEnv:
    """`gymnasium.make_vec("metagraph/<id>", n, vectorization_mode="vector_entry_point")`."""
    return MujocoVectorEnv(env_id, num_envs, seed, num_threads, **kwargs)
