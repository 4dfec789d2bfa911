"""The MJX twin's rules of each MuJoCo task, one class per task (Brax's pattern): the native
core's `rules/*.h` line for line in JAX, on one environment's `mjx.Data` (the twin vmaps
them). `MJX_RULES` maps each id with a twin to its class; `mjx_env.MjxFunctionalEnv` steps MJX
and asks the rules what to observe, reward and reset.

A class is made from the task's keyword arguments (`tasks.core_config`) and the host model
(body ids and masses read once); MJX computes in float32.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp


def _inside(x: jax.Array, bounds: tuple[float, float]) -> jax.Array:
    """Strictly inside (low, high), as Gymnasium's `low < x < high`."""
    return (bounds[0] < x) & (x < bounds[1])


def _uniform(key: jax.Array, shape: tuple[int, ...], scale: float) -> jax.Array:
    return jax.random.uniform(key, shape, minval=-scale, maxval=scale)


def _square_sum(x: jax.Array) -> jax.Array:
    return jnp.sum(jnp.square(x))


def _norm2(xy: jax.Array) -> jax.Array:
    return jnp.sqrt(jnp.sum(jnp.square(xy)))


class MjxRules:
    """What a task adds to MJX's physics (see the module docstring)."""

    needs_rne: ClassVar[bool] = False
    """Whether the rules read cfrc_ext (`mjx.rne_postconstraint` after the step)."""

    def __init__(self, config: dict[str, Any], model: Any):
        self.config = config
        self.nq, self.nv = int(model.nq), int(model.nv)
        self.qpos0 = jnp.asarray(model.qpos0, jnp.float32)

    def reset(self, qpos0: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Gymnasium's reset_model: the new episode's qpos and qvel."""
        raise NotImplementedError

    def tracked(self, data: Any) -> jax.Array:
        """The position a step's velocity is measured from (x, y); zeros without one."""
        return jnp.zeros(2, data.qpos.dtype)

    def observe(self, data: Any) -> jax.Array:
        """Gymnasium's _get_obs."""
        raise NotImplementedError

    def reward(self, data: Any, action: jax.Array, before: jax.Array, after: jax.Array,
               dt: float) -> tuple[jax.Array, jax.Array, list[jax.Array]]:
        """The step's reward, whether it terminated the episode, and Gymnasium's `info`
        terms in the order of the native task's extras (`rules/*.h`, `info_names`; an array
        term flattened)."""
        raise NotImplementedError

    def _control_cost(self, action: jax.Array) -> jax.Array:
        return jnp.float32(self.config["ctrl_cost_weight"]) * _square_sum(action)

    def _noisy(self, qpos0: jax.Array, key: jax.Array, normal_qvel: bool
               ) -> tuple[jax.Array, jax.Array]:
        scale = self.config["reset_noise_scale"]
        qpos_key, qvel_key = jax.random.split(key)
        qpos = qpos0 + _uniform(qpos_key, (self.nq,), scale)
        qvel = (scale * jax.random.normal(qvel_key, (self.nv,)) if normal_qvel
                else _uniform(qvel_key, (self.nv,), scale))
        return qpos, qvel


class HalfCheetah(MjxRules):
    """HalfCheetah-v5: run forward."""

    normal_qvel: ClassVar[bool] = True
    skipped: ClassVar[int] = 1

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, self.normal_qvel)

    def tracked(self, data):
        return jnp.stack([data.qpos[0], jnp.zeros_like(data.qpos[0])])

    def observe(self, data):
        skip = self.skipped if self.config["exclude_current_positions_from_observation"] else 0
        return jnp.concatenate([data.qpos[skip:], data.qvel])

    def reward(self, data, action, before, after, dt):
        x_velocity = (after[0] - before[0]) / dt
        forward = self.config["forward_reward_weight"] * x_velocity
        ctrl = self._control_cost(action)
        return forward - ctrl, jnp.bool_(False), [after[0], x_velocity, forward, -ctrl]


class Swimmer(HalfCheetah):
    """Swimmer-v5: swim forward (x and y left out of the observation)."""

    normal_qvel = False
    skipped = 2

    def tracked(self, data):
        return data.qpos[:2]

    def reward(self, data, action, before, after, dt):
        x_velocity, y_velocity = (after - before) / dt
        forward = self.config["forward_reward_weight"] * x_velocity
        ctrl = self._control_cost(action)
        return forward - ctrl, jnp.bool_(False), [after[0], after[1], _norm2(after), x_velocity,
                                                  y_velocity, forward, -ctrl]


class Hopper(MjxRules):
    """Hopper-v5 (and Walker2d-v5: `state_range` False): forward while healthy."""

    state_range: ClassVar[bool] = True

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, normal_qvel=False)

    def tracked(self, data):
        return jnp.stack([data.qpos[0], jnp.zeros_like(data.qpos[0])])

    def observe(self, data):
        skip = 1 if self.config["exclude_current_positions_from_observation"] else 0
        return jnp.concatenate([data.qpos[skip:], jnp.clip(data.qvel, -10.0, 10.0)])

    def _healthy(self, data):
        c, qpos = self.config, data.qpos
        healthy = _inside(qpos[1], c["healthy_z_range"]) & _inside(qpos[2],
                                                                   c["healthy_angle_range"])
        if self.state_range:
            rest = jnp.concatenate([qpos[2:], data.qvel])
            healthy = healthy & jnp.all(_inside(rest, c["healthy_state_range"]))
        return healthy

    def reward(self, data, action, before, after, dt):
        c = self.config
        x_velocity = (after[0] - before[0]) / dt
        healthy = self._healthy(data)
        forward = c["forward_reward_weight"] * x_velocity
        survive = healthy * c["healthy_reward"]
        ctrl = self._control_cost(action)
        info = [after[0], data.qpos[1] - self.qpos0[1], x_velocity, forward, -ctrl, survive]
        return forward + survive - ctrl, ~healthy & c["terminate_when_unhealthy"], info


class Walker2d(Hopper):
    """Walker2d-v5: Hopper's rules without the state range."""

    state_range = False


class Ant(MjxRules):
    """Ant-v5: forward while healthy; clipped contact forces observed and cost."""

    needs_rne = True

    def __init__(self, config, model):
        super().__init__(config, model)
        self.main_body = int(config["main_body"])

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, normal_qvel=True)

    def tracked(self, data):
        return data.xpos[self.main_body, :2]

    def _forces(self, data):
        return jnp.clip(data._impl.cfrc_ext, *self.config["contact_force_range"])

    def observe(self, data):
        c = self.config
        skip = 2 if c["exclude_current_positions_from_observation"] else 0
        parts = [data.qpos[skip:], data.qvel]
        if c["include_cfrc_ext_in_observation"]:
            parts.append(self._forces(data)[1:].ravel())
        return jnp.concatenate(parts)

    def reward(self, data, action, before, after, dt):
        c = self.config
        x_velocity = (after[0] - before[0]) / dt
        finite = jnp.all(jnp.isfinite(data.qpos)) & jnp.all(jnp.isfinite(data.qvel))
        low, high = c["healthy_z_range"]
        healthy = finite & (low <= data.qpos[2]) & (data.qpos[2] <= high)
        contact_cost = c["contact_cost_weight"] * _square_sum(self._forces(data))
        forward = x_velocity * c["forward_reward_weight"]
        survive = healthy * c["healthy_reward"]
        ctrl = self._control_cost(action)
        y_velocity = (after[1] - before[1]) / dt
        info = [data.qpos[0], data.qpos[1], _norm2(data.qpos[:2]), x_velocity, y_velocity,
                forward, -ctrl, -contact_cost, survive]
        return (forward + survive - (ctrl + contact_cost),
                ~healthy & c["terminate_when_unhealthy"], info)


class InvertedPendulum(MjxRules):
    """InvertedPendulum-v5: 1 a step while the pole leans at most 0.2 rad."""

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, normal_qvel=False)

    def observe(self, data):
        return jnp.concatenate([data.qpos, data.qvel])

    def reward(self, data, action, before, after, dt):
        obs = self.observe(data)
        terminated = ~jnp.all(jnp.isfinite(obs)) | (jnp.abs(obs[1]) > 0.2)
        reward = jnp.where(terminated, 0.0, 1.0)
        return reward, terminated, [reward]


class InvertedDoublePendulum(MjxRules):
    """InvertedDoublePendulum-v5: keep the tip high; terminated when it falls to y <= 1."""

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, normal_qvel=True)

    def observe(self, data):
        return jnp.concatenate([data.qpos[:1], jnp.sin(data.qpos[1:]), jnp.cos(data.qpos[1:]),
                                jnp.clip(data.qvel, -10.0, 10.0),
                                jnp.clip(data.qfrc_constraint, -10.0, 10.0)[:1]])

    def reward(self, data, action, before, after, dt):
        x, y = data.site_xpos[0, 0], data.site_xpos[0, 2]
        terminated = y <= 1.0
        v1, v2 = data.qvel[1], data.qvel[2]
        dist_penalty = 0.01 * x**2 + (y - 2) ** 2
        vel_penalty = 1e-3 * v1**2 + 5e-3 * v2**2
        alive_bonus = self.config["healthy_reward"] * ~terminated
        return (alive_bonus - dist_penalty - vel_penalty, terminated,
                [alive_bonus, -dist_penalty, -vel_penalty])


def _body(model: Any, name: str) -> int:
    import mujoco

    return int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name))


def _rejected(key: jax.Array, draw: Any, accept: Any) -> jax.Array:
    """`draw(key)` again with fresh keys until `accept` holds (Gymnasium's `while True` loops
    of Reacher's and Pusher's resets)."""
    def cond(carry):
        return ~accept(carry[1])

    def body(carry):
        key, _ = carry
        key, sub = jax.random.split(key)
        return key, draw(sub)

    key, sub = jax.random.split(key)
    return jax.lax.while_loop(cond, body, (key, draw(sub)))[1]


class Reacher(MjxRules):
    """Reacher-v5: bring the fingertip to a target drawn in a disc of radius 0.2."""

    def __init__(self, config, model):
        super().__init__(config, model)
        self.fingertip, self.target = _body(model, "fingertip"), _body(model, "target")

    def reset(self, qpos0, key):
        qpos_key, goal_key, qvel_key = jax.random.split(key, 3)
        qpos = _uniform(qpos_key, (self.nq,), 0.1) + qpos0
        goal = _rejected(goal_key, lambda k: _uniform(k, (2,), 0.2),
                         lambda g: jnp.linalg.norm(g) < 0.2)
        qvel = _uniform(qvel_key, (self.nv,), 0.005)
        return qpos.at[-2:].set(goal), qvel.at[-2:].set(0.0)

    def observe(self, data):
        theta = data.qpos[:2]
        vec = data.xpos[self.fingertip] - data.xpos[self.target]
        return jnp.concatenate([jnp.cos(theta), jnp.sin(theta), data.qpos[2:], data.qvel[:2],
                                vec[:2]])

    def reward(self, data, action, before, after, dt):
        c = self.config
        vec = data.xpos[self.fingertip] - data.xpos[self.target]
        reward_dist = -jnp.linalg.norm(vec) * c["reward_dist_weight"]
        reward_ctrl = -_square_sum(action) * jnp.float32(c["reward_control_weight"])
        return reward_dist + reward_ctrl, jnp.bool_(False), [reward_dist, reward_ctrl]


class Pusher(MjxRules):
    """Pusher-v5: push the object (drawn at least 0.17 from the goal) to the goal."""

    def __init__(self, config, model):
        super().__init__(config, model)
        self.bodies = [_body(model, name) for name in ("tips_arm", "object", "goal")]

    def reset(self, qpos0, key):
        object_key, qvel_key = jax.random.split(key)

        def draw(k):
            x_key, y_key = jax.random.split(k)
            return jnp.concatenate([jax.random.uniform(x_key, (1,), minval=-0.3, maxval=0.0),
                                    _uniform(y_key, (1,), 0.2)])

        cylinder = _rejected(object_key, draw, lambda p: jnp.linalg.norm(p) > 0.17)
        qpos = qpos0.at[-4:-2].set(cylinder).at[-2:].set(0.0)
        qvel = _uniform(qvel_key, (self.nv,), 0.005).at[-4:].set(0.0)
        return qpos, qvel

    def observe(self, data):
        return jnp.concatenate([data.qpos[:7], data.qvel[:7],
                                *(data.xpos[body] for body in self.bodies)])

    def reward(self, data, action, before, after, dt):
        c = self.config
        tips_arm, item, goal = (data.xpos[body] for body in self.bodies)
        reward_near = -jnp.linalg.norm(item - tips_arm) * c["reward_near_weight"]
        reward_dist = -jnp.linalg.norm(item - goal) * c["reward_dist_weight"]
        reward_ctrl = -_square_sum(action) * jnp.float32(c["reward_control_weight"])
        return (reward_dist + reward_ctrl + reward_near, jnp.bool_(False),
                [reward_dist, reward_ctrl, reward_near])


class HumanoidBody(MjxRules):
    """What both humanoids observe (their include_*_in_observation switches)."""

    needs_rne = True

    def reset(self, qpos0, key):
        return self._noisy(qpos0, key, normal_qvel=False)

    def observe(self, data):
        c = self.config
        skip = 2 if c["exclude_current_positions_from_observation"] else 0
        parts = [data.qpos[skip:], data.qvel]
        if c["include_cinert_in_observation"]:
            parts.append(data._impl.cinert[1:].ravel())
        if c["include_cvel_in_observation"]:
            parts.append(data.cvel[1:].ravel())
        if c["include_qfrc_actuator_in_observation"]:
            parts.append(data.qfrc_actuator[6:])
        if c["include_cfrc_ext_in_observation"]:
            parts.append(data._impl.cfrc_ext[1:].ravel())
        return jnp.concatenate(parts)

    def _contact_cost(self, data, weight: str, bounds: str) -> jax.Array:
        cost = self.config[weight] * _square_sum(data._impl.cfrc_ext)
        return jnp.clip(cost, *self.config[bounds])

    @staticmethod
    def _tendons(data) -> list[jax.Array]:
        """The tendons' lengths then velocities, element by element."""
        return [*data.ten_length, *data.ten_velocity]


class Humanoid(HumanoidBody):
    """Humanoid-v5: walk forward (the mass centre's velocity) while the torso is high."""

    def __init__(self, config, model):
        super().__init__(config, model)
        self.mass = jnp.asarray(model.body_mass)

    def tracked(self, data):
        return (jnp.sum(self.mass[:, None] * data.xipos, axis=0) / jnp.sum(self.mass))[:2]

    def reward(self, data, action, before, after, dt):
        c = self.config
        x_velocity = (after[0] - before[0]) / dt
        healthy = _inside(data.qpos[2], c["healthy_z_range"])
        ctrl_cost = c["ctrl_cost_weight"] * _square_sum(data.ctrl)
        contact = self._contact_cost(data, "contact_cost_weight", "contact_cost_range")
        forward = c["forward_reward_weight"] * x_velocity
        survive = healthy * c["healthy_reward"]
        info = [data.qpos[0], data.qpos[1], *self._tendons(data), _norm2(data.qpos[:2]),
                x_velocity, (after[1] - before[1]) / dt, survive, forward, -ctrl_cost, -contact]
        return (forward + survive - (ctrl_cost + contact),
                ~healthy & c["terminate_when_unhealthy"], info)


class HumanoidStandup(HumanoidBody):
    """HumanoidStandup-v5: rise (the torso's height over the model's time step)."""

    def __init__(self, config, model):
        super().__init__(config, model)
        self.timestep = float(model.opt.timestep)

    def reward(self, data, action, before, after, dt):
        c = self.config
        uph_cost = data.qpos[2] / self.timestep
        quad_ctrl_cost = c["ctrl_cost_weight"] * _square_sum(data.ctrl)
        quad_impact_cost = self._contact_cost(data, "impact_cost_weight", "impact_cost_range")
        info = [data.qpos[0], data.qpos[1], data.qpos[2] - self.qpos0[2], *self._tendons(data),
                uph_cost, -quad_ctrl_cost, -quad_impact_cost]
        return uph_cost - quad_ctrl_cost - quad_impact_cost + 1, jnp.bool_(False), info


# (the humanoids' rules are here for a later MJX with the PGS solver: tasks.MJX_IDS)
MJX_RULES: dict[str, type[MjxRules]] = {
    "HalfCheetah-v5": HalfCheetah, "Hopper-v5": Hopper, "Walker2d-v5": Walker2d, "Ant-v5": Ant,
    "Swimmer-v5": Swimmer, "InvertedPendulum-v5": InvertedPendulum,
    "InvertedDoublePendulum-v5": InvertedDoublePendulum, "Reacher-v5": Reacher,
    "Pusher-v5": Pusher, "Humanoid-v5": Humanoid, "HumanoidStandup-v5": HumanoidStandup,
}
