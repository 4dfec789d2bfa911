"""Classic-control dynamics in pure JAX: the twin of `classic_control.h`, written step for
step as Gymnasium 1.x writes them, on batches (leading axes are environments), in float32.

Each environment is a class of static functions:
  reset(key) -> physics[physical_dim] (one environment; vmapped over per-environment keys)
  observe(physics) -> obs
  step(physics, action) -> (physics', reward, terminated)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

PI = jnp.pi


def _uniform(key, shape, low, high):
    return jax.random.uniform(key, shape, jnp.float32, low, high)


class CartPole:
    """CartPole-v1's dynamics."""
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    total_mass = masspole + masscart
    polemass_length = masspole * length
    theta_threshold, x_threshold = 12 * 2 * 3.141592653589793 / 360, 2.4

    @staticmethod
    def reset(key):
        """A random initial physical state of one environment, drawn as Gymnasium draws it."""
        return _uniform(key, (4,), -0.05, 0.05)

    @staticmethod
    def observe(s):
        """The observation of the physical state `s`, as Gymnasium's."""
        return s

    @classmethod
    def step(cls, s, action):
        """One step of every environment: `(physics', reward, terminated)`, as Gymnasium's step."""
        x, x_dot, theta, theta_dot = (s[..., i] for i in range(4))
        force = jnp.where(action == 1, cls.force_mag, -cls.force_mag)
        costheta, sintheta = jnp.cos(theta), jnp.sin(theta)
        temp = (force + cls.polemass_length * theta_dot**2 * sintheta) / cls.total_mass
        thetaacc = (cls.gravity * sintheta - costheta * temp) / (
            cls.length * (4.0 / 3.0 - cls.masspole * costheta**2 / cls.total_mass))
        xacc = temp - cls.polemass_length * thetaacc * costheta / cls.total_mass
        x = x + cls.tau * x_dot
        x_dot = x_dot + cls.tau * xacc
        theta = theta + cls.tau * theta_dot
        theta_dot = theta_dot + cls.tau * thetaacc
        terminated = ((x < -cls.x_threshold) | (x > cls.x_threshold)
                      | (theta < -cls.theta_threshold) | (theta > cls.theta_threshold))
        return jnp.stack([x, x_dot, theta, theta_dot], -1), jnp.ones_like(x), terminated


class Acrobot:
    """Acrobot-v1's dynamics (RK4 integration, as Gymnasium's `book` dynamics)."""
    dt, l1, m1, m2, lc1, lc2, i1, i2, g = 0.2, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 9.8
    max_vel_1, max_vel_2 = 4 * 3.141592653589793, 9 * 3.141592653589793

    @staticmethod
    def reset(key):
        """A random initial physical state of one environment, drawn as Gymnasium draws it."""
        return _uniform(key, (4,), -0.1, 0.1)

    @staticmethod
    def observe(s):
        """The observation of the physical state `s`, as Gymnasium's."""
        return jnp.stack([jnp.cos(s[..., 0]), jnp.sin(s[..., 0]), jnp.cos(s[..., 1]),
                          jnp.sin(s[..., 1]), s[..., 2], s[..., 3]], -1)

    @classmethod
    def dsdt(cls, s, a):
        """The time derivative of the state under torque `a` (Gymnasium's `_dsdt`)."""
        m1, m2, l1, lc1, lc2, i1, i2, g = cls.m1, cls.m2, cls.l1, cls.lc1, cls.lc2, cls.i1, \
            cls.i2, cls.g
        theta1, theta2, dtheta1, dtheta2 = (s[..., i] for i in range(4))
        d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * jnp.cos(theta2)) + i1 + i2
        d2 = m2 * (lc2**2 + l1 * lc2 * jnp.cos(theta2)) + i2
        phi2 = m2 * lc2 * g * jnp.cos(theta1 + theta2 - PI / 2.0)
        phi1 = (-m2 * l1 * lc2 * dtheta2**2 * jnp.sin(theta2)
                - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * jnp.sin(theta2)
                + (m1 * lc1 + m2 * l1) * g * jnp.cos(theta1 - PI / 2) + phi2)
        ddtheta2 = ((a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * jnp.sin(theta2) - phi2)
                    / (m2 * lc2**2 + i2 - d2**2 / d1))
        ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
        return jnp.stack([dtheta1, dtheta2, ddtheta1, ddtheta2], -1)

    @staticmethod
    def wrap(x, low, high):
        """Gymnasium's wrap (add or subtract the period until inside [low, high])."""
        diff = high - low
        return jnp.where((x > high) | (x < low), x - diff * jnp.floor((x - low) / diff), x)

    @classmethod
    def step(cls, s, action):
        """One step of every environment: `(physics', reward, terminated)`, as Gymnasium's step."""
        a = (action - 1).astype(jnp.float32)  # torques -1, 0, +1
        h = cls.dt
        k1 = cls.dsdt(s, a)
        k2 = cls.dsdt(s + h / 2 * k1, a)
        k3 = cls.dsdt(s + h / 2 * k2, a)
        k4 = cls.dsdt(s + h * k3, a)
        ns = s + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        ns = jnp.stack([cls.wrap(ns[..., 0], -PI, PI), cls.wrap(ns[..., 1], -PI, PI),
                        jnp.clip(ns[..., 2], -cls.max_vel_1, cls.max_vel_1),
                        jnp.clip(ns[..., 3], -cls.max_vel_2, cls.max_vel_2)], -1)
        terminated = -jnp.cos(ns[..., 0]) - jnp.cos(ns[..., 1] + ns[..., 0]) > 1.0
        return ns, jnp.where(terminated, 0.0, -1.0), terminated


class MountainCarValley:
    """The valley shared by MountainCar-v0 and MountainCarContinuous-v0."""
    min_position, max_position, max_speed = -1.2, 0.6, 0.07

    @staticmethod
    def reset(key):
        """A random initial physical state of one environment, drawn as Gymnasium draws it."""
        return jnp.stack([_uniform(key, (), -0.6, -0.4), jnp.zeros((), jnp.float32)])

    @staticmethod
    def observe(s):
        """The observation of the physical state `s`, as Gymnasium's."""
        return s

    @classmethod
    def move(cls, s, acceleration):
        """Position and velocity after one step under `acceleration`, clipped as Gymnasium
        clips them."""
        position, velocity = s[..., 0], s[..., 1]
        velocity = jnp.clip(velocity + acceleration, -cls.max_speed, cls.max_speed)
        position = jnp.clip(position + velocity, cls.min_position, cls.max_position)
        velocity = jnp.where((position == cls.min_position) & (velocity < 0), 0.0, velocity)
        return position, velocity


class MountainCar(MountainCarValley):
    """MountainCar-v0's dynamics (three discrete pushes)."""
    goal_position, force, gravity = 0.5, 0.001, 0.0025

    @classmethod
    def step(cls, s, action):
        """One step of every environment: `(physics', reward, terminated)`, as Gymnasium's step."""
        acceleration = (action - 1) * cls.force + jnp.cos(3 * s[..., 0]) * (-cls.gravity)
        position, velocity = cls.move(s, acceleration)
        terminated = (position >= cls.goal_position) & (velocity >= 0.0)
        return jnp.stack([position, velocity], -1), -jnp.ones_like(position), terminated


class MountainCarContinuous(MountainCarValley):
    """MountainCarContinuous-v0's dynamics (a continuous force)."""
    goal_position, power = 0.45, 0.0015

    @classmethod
    def step(cls, s, action):
        """One step of every environment: `(physics', reward, terminated)`, as Gymnasium's step."""
        a = action[..., 0]
        force = jnp.clip(a, -1.0, 1.0)  # Gymnasium clips the force but charges the raw action
        position, velocity = cls.move(s, force * cls.power - 0.0025 * jnp.cos(3 * s[..., 0]))
        terminated = (position >= cls.goal_position) & (velocity >= 0.0)
        reward = jnp.where(terminated, 100.0, 0.0) - a * a * 0.1
        return jnp.stack([position, velocity], -1), reward, terminated


class Pendulum:
    """Pendulum-v1's dynamics."""
    max_speed, max_torque, dt, g, m, length = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

    @staticmethod
    def reset(key):
        """A random initial physical state of one environment, drawn as Gymnasium draws it."""
        return _uniform(key, (2,), jnp.array([-PI, -1.0]), jnp.array([PI, 1.0]))

    @staticmethod
    def observe(s):
        """The observation of the physical state `s`, as Gymnasium's."""
        return jnp.stack([jnp.cos(s[..., 0]), jnp.sin(s[..., 0]), s[..., 1]], -1)

    @classmethod
    def step(cls, s, action):
        """One step of every environment: `(physics', reward, terminated)`, as Gymnasium's step."""
        th, thdot = s[..., 0], s[..., 1]
        u = jnp.clip(action[..., 0], -cls.max_torque, cls.max_torque)
        normalized = jnp.mod(th + PI, 2 * PI) - PI
        costs = normalized**2 + 0.1 * thdot**2 + 0.001 * u**2
        newthdot = thdot + (3 * cls.g / (2 * cls.length) * jnp.sin(th)
                            + 3.0 / (cls.m * cls.length**2) * u) * cls.dt
        newthdot = jnp.clip(newthdot, -cls.max_speed, cls.max_speed)
        newth = th + newthdot * cls.dt
        return jnp.stack([newth, newthdot], -1), -costs, jnp.zeros_like(th, bool)


DYNAMICS = {
    "CartPole-v1": CartPole, "Acrobot-v1": Acrobot, "MountainCar-v0": MountainCar,
    "MountainCarContinuous-v0": MountainCarContinuous, "Pendulum-v1": Pendulum,
}
