// Gymnasium's v5 MuJoCo locomotion tasks (HalfCheetah, Hopper, Walker2d, Ant): observation,
// reward terms, health and termination, reset noise, read from and written to an mjData.
// Each line follows gymnasium/envs/mujoco/<task>_v5.py, down to the rounding: the control cost
// is float32 as NumPy computes it from float32 actions, and sums are NumPy's pairwise sums.
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <mujoco/mujoco.h>

#include "numpy_sum.h"
#include "engine/rng.h"

namespace metagraph::mujoco {

using engine::standard_normal;
using engine::uniform;

enum class Task : int { kHalfCheetah = 0, kHopper = 1, kWalker2d = 2, kAnt = 3 };

inline const char* task_name(Task task) {
  switch (task) {
    case Task::kHalfCheetah: return "HalfCheetah-v5";
    case Task::kHopper: return "Hopper-v5";
    case Task::kWalker2d: return "Walker2d-v5";
    case Task::kAnt: return "Ant-v5";
  }
  return "?";
}

// A closed range (lo, hi) of Gymnasium's keyword arguments.
struct Range {
  double lo;
  double hi;
};

// The keyword arguments of Gymnasium's v5 constructors (those a task does not use are ignored).
struct Config {
  Task task = Task::kHalfCheetah;
  int frame_skip = 5;
  int64_t max_steps = 1000;
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 0.1;
  double contact_cost_weight = 5e-4;
  double healthy_reward = 1.0;
  bool terminate_when_unhealthy = true;
  Range healthy_state_range{-100.0, 100.0};
  Range healthy_z_range{0.7, INFINITY};
  Range healthy_angle_range{-0.2, 0.2};
  Range contact_force_range{-1.0, 1.0};
  double reset_noise_scale = 0.1;
  bool exclude_current_positions_from_observation = true;
  bool include_cfrc_ext_in_observation = true;
  int main_body = 1;
  std::string main_body_name;  // when set, main_body is the body of that name

  // Coordinates of qpos left out of the observation (x, or x and y for Ant).
  int skipped_qpos() const {
    if (!exclude_current_positions_from_observation) return 0;
    return task == Task::kAnt ? 2 : 1;
  }
  // Whether the reset noise of qvel is Gaussian (HalfCheetah, Ant) rather than uniform.
  bool normal_qvel_noise() const { return task == Task::kHalfCheetah || task == Task::kAnt; }
};

// The length of an observation of `task` on model m (Gymnasium's obs_size).
inline int observation_size(const Config& c, const mjModel* m) {
  int size = m->nq + m->nv - c.skipped_qpos();
  if (c.task == Task::kAnt && c.include_cfrc_ext_in_observation) size += 6 * (m->nbody - 1);
  return size;
}

// The model is one this task can read: throws std::invalid_argument otherwise.
inline void check_model(const Config& c, const mjModel* m) {
  const std::string where = task_name(c.task);
  const int min_nq = c.task == Task::kHalfCheetah ? 1 : 3;
  if (m->nq < min_nq || m->nv < 1 || m->nu < 1)
    throw std::invalid_argument(where + ": the model needs at least " + std::to_string(min_nq) +
                                " position coordinates, one velocity and one actuator");
  if (c.task == Task::kAnt && (c.main_body < 0 || c.main_body >= m->nbody))
    throw std::invalid_argument(where + ": main_body " + std::to_string(c.main_body) +
                                " is not a body of the model (it has " +
                                std::to_string(m->nbody) + ")");
  if (c.frame_skip < 1) throw std::invalid_argument(where + ": frame_skip must be >= 1");
  if (c.max_steps < 1) throw std::invalid_argument(where + ": max_episode_steps must be >= 1");
}

// The horizontal position a step measures its velocity by: qpos[0], or the xy of Ant's main
// body (Gymnasium reads data.body(main_body).xpos: computed by the last substep's forward pass,
// before its integration).
inline void tracked_position(const Config& c, const mjData* d, double xy[2]) {
  if (c.task == Task::kAnt) {
    xy[0] = d->xpos[3 * c.main_body];
    xy[1] = d->xpos[3 * c.main_body + 1];
  } else {
    xy[0] = d->qpos[0];
    xy[1] = 0.0;
  }
}

inline double clip(double x, double lo, double hi) {  // np.clip: NaN stays NaN
  return x < lo ? lo : (x > hi ? hi : x);
}

// Gymnasium's _get_obs into obs[observation_size].
inline void observe(const Config& c, const mjModel* m, const mjData* d, double* obs) {
  int k = 0;
  for (int i = c.skipped_qpos(); i < m->nq; ++i) obs[k++] = d->qpos[i];
  const bool clip_qvel = c.task == Task::kHopper || c.task == Task::kWalker2d;
  for (int i = 0; i < m->nv; ++i) obs[k++] = clip_qvel ? clip(d->qvel[i], -10.0, 10.0) : d->qvel[i];
  if (c.task == Task::kAnt && c.include_cfrc_ext_in_observation) {
    for (int i = 6; i < 6 * m->nbody; ++i)
      obs[k++] = clip(d->cfrc_ext[i], c.contact_force_range.lo, c.contact_force_range.hi);
  }
}

// Gymnasium's is_healthy.
inline bool healthy(const Config& c, const mjModel* m, const mjData* d) {
  const double* qpos = d->qpos;
  switch (c.task) {
    case Task::kHalfCheetah:
      return true;
    case Task::kHopper: {
      bool ok = true;  // state_vector()[2:] strictly inside healthy_state_range
      const Range s = c.healthy_state_range;
      for (int i = 2; i < m->nq; ++i) ok = ok && s.lo < qpos[i] && qpos[i] < s.hi;
      for (int i = 0; i < m->nv; ++i) ok = ok && s.lo < d->qvel[i] && d->qvel[i] < s.hi;
      return ok && c.healthy_z_range.lo < qpos[1] && qpos[1] < c.healthy_z_range.hi &&
             c.healthy_angle_range.lo < qpos[2] && qpos[2] < c.healthy_angle_range.hi;
    }
    case Task::kWalker2d:
      return c.healthy_z_range.lo < qpos[1] && qpos[1] < c.healthy_z_range.hi &&
             c.healthy_angle_range.lo < qpos[2] && qpos[2] < c.healthy_angle_range.hi;
    case Task::kAnt: {
      bool finite = true;
      for (int i = 0; i < m->nq; ++i) finite = finite && std::isfinite(qpos[i]);
      for (int i = 0; i < m->nv; ++i) finite = finite && std::isfinite(d->qvel[i]);
      return finite && c.healthy_z_range.lo <= qpos[2] && qpos[2] <= c.healthy_z_range.hi;
    }
  }
  return true;
}

// `ctrl_cost_weight * np.sum(np.square(action))` with float32 actions: NumPy 2 keeps a Python
// float times a float32 in float32.
inline float control_cost(const Config& c, const float* action, int nu, float* scratch) {
  for (int j = 0; j < nu; ++j) scratch[j] = action[j] * action[j];
  return static_cast<float>(c.ctrl_cost_weight) * numpy_sum(scratch, nu);
}

// Ant's contact_cost: the weight times the pairwise sum of the squared clipped cfrc_ext.
inline double contact_cost(const Config& c, const mjModel* m, const mjData* d, double* scratch) {
  const int n = 6 * m->nbody;
  for (int i = 0; i < n; ++i) {
    const double f = clip(d->cfrc_ext[i], c.contact_force_range.lo, c.contact_force_range.hi);
    scratch[i] = f * f;
  }
  return c.contact_cost_weight * numpy_sum(scratch, n);
}

// The reward and termination of a step that moved the tracked position from `before` to
// `after` (Gymnasium's _get_rew and step). `scratch` holds max(nu, 6 * nbody) doubles.
inline double reward(const Config& c, const mjModel* m, const mjData* d, const float* action,
                     const double before[2], const double after[2], double* scratch,
                     bool* terminated) {
  const double dt = m->opt.timestep * c.frame_skip;
  const double x_velocity = (after[0] - before[0]) / dt;
  const float ctrl_cost = control_cost(c, action, m->nu, reinterpret_cast<float*>(scratch));
  if (c.task == Task::kHalfCheetah) {
    *terminated = false;
    return c.forward_reward_weight * x_velocity - static_cast<double>(ctrl_cost);
  }
  const bool is_healthy = healthy(c, m, d);
  *terminated = !is_healthy && c.terminate_when_unhealthy;
  const double healthy_reward = static_cast<double>(is_healthy) * c.healthy_reward;
  if (c.task == Task::kAnt) {
    const double rewards = x_velocity * c.forward_reward_weight + healthy_reward;
    const double costs = static_cast<double>(ctrl_cost) + contact_cost(c, m, d, scratch);
    return rewards - costs;
  }
  const double rewards = c.forward_reward_weight * x_velocity + healthy_reward;
  return rewards - static_cast<double>(ctrl_cost);
}

// Gymnasium's reset: mj_resetData, then reset_model's noisy qpos and qvel, then set_state's
// mj_forward. Draws nq (then nv) numbers from `rng`.
inline void reset_data(const Config& c, const mjModel* m, mjData* d, uint64_t& rng) {
  mj_resetData(m, d);
  const double s = c.reset_noise_scale;
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + uniform(rng, -s, s);
  for (int i = 0; i < m->nv; ++i)
    d->qvel[i] = c.normal_qvel_noise() ? s * standard_normal(rng) : uniform(rng, -s, s);
  mj_forward(m, d);
}

}  // namespace metagraph::mujoco
