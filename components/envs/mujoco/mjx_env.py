"""`MjxFunctionalEnv`: the pure-JAX twin of the MuJoCo tasks (door "jax"), MuJoCo's physics
reimplemented in JAX by MJX (`mujoco-mjx`, the extra `mjx`: `pip install -e ".[mjx]"`), for
accelerators where the native door's host round trip would dominate.

It covers the tasks of `tasks.MJX_IDS`. The task is the native core's (`tasks.core_config`:
the same keyword arguments, frame skip and limits; `_mjx_rules.py`, one class per task, is the
native `rules/*.h` line for line): a step sets `ctrl` to the action, runs `mjx.step`
frame_skip times (then `mjx.rne_postconstraint` where the rules read contact forces), and
computes Gymnasium's v5 observation, reward, health and termination; truncation at
`max_episode_steps` and same-step auto-reset as the native door. The model is the one the
native core loads (Gymnasium's model file, unchanged): MJX supports the Newton solver,
pyramidal cones and Euler / RK4 integrators these use, so no option is turned off.

MJX computes in float32 (JAX's default) where the native core computes in float64: from the
same positions and velocities a step agrees with the native core to a tolerance measured in
tests/components/envs/mujoco/test_mjx_twin_vs_native.py, not bit for bit. Initial states come
from JAX keys (environment i of `reset(key, n)` uses `fold_in(key, i)`): the same distribution
as the native core's, not the same draws. A step that leaves a NaN or inf in the state fails
the call (`<id>: environment i became unstable (MJX: NaN or inf in qpos, qvel or qacc)`;
nothing is reset silently); bad actions are refused with the other doors' message
(`engine/actions.py`). Ant differs more than float32 explains: MJX orients the contact frame
of a steep capsule on the floor differently from MuJoCo's C collision, which changes the
pyramidal friction forces (docs/environments.md).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.actions import action_error, refuse_bad_actions
from components.envs.engine.functional import FunctionalEnv, check_elapsed_steps
from components.envs.engine.spec import EnvSpec
from components.envs.engine.step_result import StepResult
from components.envs.mujoco._mjx_rules import MJX_RULES
from components.envs.mujoco.tasks import core_config
from metagraph import context
from metagraph.errors import MissingExtraError
from metagraph.install_hints import install_hint

MJX_REQUIREMENT = "mujoco-mjx==3.17.0"


def import_mjx() -> Any:
    """`mujoco.mjx`, or an ImportError saying how to install it. (MJX prints a line when its
    optional Warp backend is missing; the JAX backend used here does not need Warp.)"""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from mujoco import mjx
    except ImportError as error:
        raise MissingExtraError(f"door 'jax' of the MuJoCo tasks runs on MJX ({MJX_REQUIREMENT}): "
                          f"{install_hint('mjx')}") from error
    return mjx


def twin_precision() -> contextlib.AbstractContextManager:
    """The precision of the twin's matrix products while its physics is traced: float32
    products in float32 ("highest"), unless the user set JAX's own
    `jax_default_matmul_precision` (the flag, `JAX_DEFAULT_MATMUL_PRECISION`, or the
    `jax.default_matmul_precision` context), which is then kept. Without it a GPU multiplies
    float32 in TensorFloat-32 (10-bit mantissas): on an H200 HalfCheetah's step then agreed
    with the native core in 43% of the test's states, Walker2d's in 20%; with "highest", as on
    a CPU, in all (docs/accelerators.md)."""
    if jax.config.jax_default_matmul_precision is not None:
        return contextlib.nullcontext()
    return jax.default_matmul_precision("highest")


class MjxState(NamedTuple):
    """The MJX twin's state, one row per environment."""
    data: Any  # mjx.Data, every leaf [..., N, ...]
    tracked: jax.Array  # float32[..., N, 2]: the position the next step's velocity is from
    steps: jax.Array  # int32[..., N], steps taken in the current episode
    key: jax.Array  # uint32[..., N, 2], each environment's own stream


class MjxFunctionalEnv(FunctionalEnv):
    """A MuJoCo task on MJX behind the functional interface (see the module docstring)."""

    door: ClassVar[str] = "jax"

    def __init__(self, env_spec: EnvSpec):
        import mujoco

        mjx = import_mjx()
        super().__init__(env_spec)
        path, config = core_config(env_spec.env_id, dict(env_spec.kwargs))
        host_model = mujoco.MjModel.from_xml_path(path)
        if config.get("main_body_name"):
            config["main_body"] = mujoco.mj_name2id(host_model, mujoco.mjtObj.mjOBJ_BODY,
                                                    config["main_body_name"])
        # attributes of a frozen dataclass: set as the dataclass itself would
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_rules", MJX_RULES[env_spec.env_id](config, host_model))
        object.__setattr__(self, "_mjx", mjx)
        object.__setattr__(self, "_model", mjx.put_model(host_model))
        object.__setattr__(self, "_data0", mjx.make_data(host_model))
        object.__setattr__(self, "_nq", int(host_model.nq))
        object.__setattr__(self, "_nv", int(host_model.nv))
        object.__setattr__(self, "_dt", float(host_model.opt.timestep) * config["frame_skip"])
        object.__setattr__(self, "_start", jax.jit(jax.vmap(self._data_at)))
        # compiled even when called eagerly (MJX op by op takes minutes); inlined under jit
        object.__setattr__(self, "_reset_compiled", jax.jit(self._reset_traced,
                                                            static_argnums=1))
        object.__setattr__(self, "_step_compiled", jax.jit(self._step_traced))

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def task(self) -> str:
        """The task's id ("HalfCheetah-v5", ...)."""
        return self.env_spec.env_id

    # ---- one environment (vmapped) -----------------------------------------------------------
    def _data_at(self, qpos: jax.Array, qvel: jax.Array) -> Any:
        """Gymnasium's set_state: the initial data with these positions and velocities, then
        mj_forward."""
        data = self._data0.replace(qpos=qpos.astype(self._data0.qpos.dtype),
                                   qvel=qvel.astype(self._data0.qvel.dtype))
        with twin_precision():
            return self._mjx.forward(self._model, data)

    def _reset_one(self, key: jax.Array) -> Any:
        """Gymnasium's reset_model (the task's rules), then set_state."""
        return self._data_at(*self._rules.reset(self._model.qpos0, key))

    def _tracked(self, data: Any) -> jax.Array:
        """The position the next step's velocity is measured from (the rules' `tracked`)."""
        return self._rules.tracked(data).astype(jnp.float32)

    def _observe(self, data: Any) -> jax.Array:
        """Gymnasium's _get_obs (the task's rules), in float32."""
        return self._rules.observe(data).astype(jnp.float32)

    def _step_one(self, data: Any, tracked: jax.Array, action: jax.Array) -> tuple:
        """One Gymnasium step of one environment: (data', tracked', obs, reward, terminated,
        info terms (float32, the task's extras in order), finite)."""
        data = data.replace(ctrl=action.astype(data.ctrl.dtype))
        with twin_precision():
            data = jax.lax.fori_loop(0, self._config["frame_skip"],
                                     lambda _, d: self._mjx.step(self._model, d), data)
            if self._rules.needs_rne:  # cfrc_ext for the observation and the costs
                data = self._mjx.rne_postconstraint(self._model, data)
        after = self._tracked(data)
        reward, terminated, info = self._rules.reward(data, action, tracked, after, self._dt)
        finite = (jnp.all(jnp.isfinite(data.qpos)) & jnp.all(jnp.isfinite(data.qvel))
                  & jnp.all(jnp.isfinite(data.qacc)))
        info = jnp.stack([jnp.asarray(term, jnp.float32) for term in info])
        return (data, after, self._observe(data), jnp.asarray(reward, jnp.float32),
                jnp.asarray(terminated, bool), info, finite)

    # ---- the functional interface ------------------------------------------------------------
    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        if not isinstance(state, MjxState):
            raise TypeError(f"{self.task}.step: state must be the MjxState that reset "
                            f"returned, got {type(state).__name__}")
        n_shape = tuple(jnp.shape(state.steps))
        expected = {"steps": (state.steps, n_shape, "int32"),
                    "tracked": (state.tracked, n_shape + (2,), "float32"),
                    "key": (state.key, n_shape + (2,), "uint32"),
                    "data.qpos": (state.data.qpos, n_shape + (self._nq,), None),
                    "data.qvel": (state.data.qvel, n_shape + (self._nv,), None)}
        for name, (value, shape, dtype) in expected.items():
            got = f"{jnp.result_type(value)}{list(jnp.shape(value))}"
            if tuple(jnp.shape(value)) != shape or (dtype and jnp.result_type(value) != dtype):
                raise TypeError(f"{self.task}.step: state.{name} must be "
                                f"{dtype or 'float'}{list(shape)} (the MjxState that reset "
                                f"returned), got {got}")
        return n_shape

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[MjxState, jax.Array]:
        return self._reset_compiled(key, num_envs)

    def _step(self, state: MjxState, action: jax.Array, **asked: bool) -> StepResult:
        eager = not any(isinstance(x, jax.core.Tracer) for x in (state.steps, action))
        if eager:  # refused here, as the native door refuses, before anything is computed
            message = (action_error(self.env_spec, np.asarray(action))
                       or steps_error(self.env_spec, np.asarray(state.steps)))
            if message is not None:
                raise ValueError(message)
        else:
            refuse_bad_actions(self.env_spec, action)
            _refuse_forged_steps(self.env_spec, state.steps)
        out, finite = self._step_compiled(state, action)
        if eager:
            finite = np.asarray(finite)
            if not finite.all():
                raise FloatingPointError(_unstable_message(self.task, finite))
        else:
            _refuse_unstable(self.task, finite)  # outside the cached trace: it depends on context
        return self._asked(out, **asked)

    def _reset_traced(self, key: jax.Array, num_envs: int) -> tuple[MjxState, jax.Array]:
        lead = key.shape[:-1]
        keys = jax.vmap(lambda k: jax.vmap(lambda i: jax.random.fold_in(k, i))(
            jnp.arange(num_envs)))(key.reshape(-1, 2)).reshape(lead + (num_envs, 2))
        keys, reset_keys = _split(keys)
        data = _over(lead + (num_envs,), jax.vmap(self._reset_one), reset_keys)
        state = MjxState(data, _over(lead + (num_envs,), jax.vmap(self._tracked), data),
                         jnp.zeros(lead + (num_envs,), jnp.int32), keys)
        return state, _over(lead + (num_envs,), jax.vmap(self._observe), data)

    def _step_traced(self, state: MjxState, action: jax.Array) -> tuple[StepResult, jax.Array]:
        n_shape = tuple(state.steps.shape)
        data, tracked, final_obs, reward, terminated, info, finite = _over(
            n_shape, jax.vmap(self._step_one), state.data, state.tracked, action)
        steps = state.steps + 1
        truncated = steps >= self.env_spec.max_episode_steps
        done = terminated | truncated
        keys, reset_keys = _split(state.key)

        def restart(data: Any, tracked: jax.Array) -> tuple:
            fresh = _over(n_shape, jax.vmap(self._reset_one), reset_keys)
            fresh_tracked = _over(n_shape, jax.vmap(self._tracked), fresh)
            pick = functools.partial(_where_rows, done)
            return jax.tree.map(pick, fresh, data), pick(fresh_tracked, tracked)

        # fresh starts (a forward pass each) only on steps where an episode ended
        data, tracked = jax.lax.cond(jnp.any(done), restart, lambda d, t: (d, t), data,
                                     tracked)
        obs = jnp.where(done[..., None], _over(n_shape, jax.vmap(self._observe), data),
                        final_obs)
        extras = {name: info[..., k] for k, name in enumerate(self.env_spec.extras_names)}
        return StepResult(MjxState(data, tracked, jnp.where(done, 0, steps), keys), obs, reward,
                          terminated, truncated, final_obs, extras), finite

    # ---- physical states ---------------------------------------------------------------------
    def physical_state(self, state: MjxState) -> np.ndarray:
        """Positions then velocities of each environment, float64 [..., n, nq + nv]."""
        return np.concatenate([np.asarray(state.data.qpos, np.float64),
                               np.asarray(state.data.qvel, np.float64)], axis=-1)

    def elapsed_steps(self, state: MjxState) -> np.ndarray:
        """Steps taken in each environment's current episode."""
        return np.asarray(state.steps)

    def state_from_physical(self, physics: Any, seed: int = 0, elapsed_steps: Any = 0
                            ) -> MjxState:
        """A state that starts each environment from positions then velocities, (n, nq + nv)
        or (nq + nv,), as Gymnasium's reset followed by `set_state`, with `elapsed_steps` of
        its episode passed."""
        physics = self._physics_for(physics)
        num_envs = physics.shape[0]
        steps = check_elapsed_steps(self.env_spec, elapsed_steps, num_envs)
        data = self._start(jnp.asarray(physics[:, :self._nq]), jnp.asarray(physics[:, self._nq:]))
        keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.PRNGKey(seed), i))(
            jnp.arange(num_envs))
        return MjxState(data, jax.vmap(self._tracked)(data), jnp.asarray(steps), keys)


def _split(keys: jax.Array) -> tuple[jax.Array, jax.Array]:
    pair = jax.vmap(jax.random.split)(keys.reshape(-1, 2)).reshape(keys.shape[:-1] + (2, 2))
    return pair[..., 0, :], pair[..., 1, :]


def _over(n_shape: tuple[int, ...], fn: Any, *trees: Any) -> Any:
    """`fn` (vmapped over one axis of environments) over environments of shape `n_shape`:
    leading axes are folded into one and unfolded again."""
    size = math.prod(n_shape)
    flat = jax.tree.map(lambda x: x.reshape((size,) + x.shape[len(n_shape):]), trees)
    out = fn(*flat)
    return jax.tree.map(lambda x: x.reshape(n_shape + x.shape[1:]), out)


def _where_rows(done: jax.Array, new: jax.Array, old: jax.Array) -> jax.Array:
    return jnp.where(done.reshape(done.shape + (1,) * (new.ndim - done.ndim)), new, old)


def _unstable_message(task: str, finite: np.ndarray) -> str:
    finite = np.asarray(finite).reshape(-1, np.shape(finite)[-1] if np.ndim(finite) else 1)
    index = int(np.argwhere(~finite)[0][1])
    return (f"{task}: environment {index} became unstable (MJX: NaN or inf in qpos, qvel or "
            f"qacc); reset the environments")


def _refuse_unstable(task: str, finite: jax.Array) -> None:
    """Fail the call, with the native core's message, when a step left a NaN or inf."""
    if context.initializing():
        return

    def fail(finite):
        if not np.asarray(finite).all():
            raise FloatingPointError(_unstable_message(task, finite))

    jax.lax.cond(jnp.all(finite), lambda f: None, lambda f: jax.debug.callback(fail, f),
                 finite)


def steps_error(spec: EnvSpec, steps: np.ndarray) -> str | None:
    """The native door's message for the first step count outside [0, max_episode_steps)."""
    steps = np.asarray(steps).reshape(-1, np.shape(steps)[-1] if np.ndim(steps) else 1)
    bad = (steps < 0) | (steps >= spec.max_episode_steps)
    if not bad.any():
        return None
    row, index = np.argwhere(bad)[0]
    return (f"{spec.env_id} step: environment {int(index)} has step count "
            f"{int(steps[row, index])} outside [0, {spec.max_episode_steps}): its state did "
            f"not come from reset or step")


def _refuse_forged_steps(spec: EnvSpec, steps: jax.Array) -> None:
    """Inside a traced step: fail the call when a step count is outside the episode."""
    if context.initializing():
        return

    def fail(steps):
        message = steps_error(spec, steps)
        if message is not None:
            raise ValueError(message)

    ok = jnp.all((steps >= 0) & (steps < spec.max_episode_steps))
    jax.lax.cond(ok, lambda x: None, lambda x: jax.debug.callback(fail, x), steps)


def make_mjx_functional(env_id: str, **kwargs: Any) -> MjxFunctionalEnv:
    """The pure-JAX (MJX) twin of MuJoCo task `env_id` made with Gymnasium's keyword
    arguments."""
    from components.envs.engine.catalogue import spec

    return MjxFunctionalEnv(spec(env_id, **kwargs))
