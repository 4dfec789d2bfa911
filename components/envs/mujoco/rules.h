// What one of Gymnasium's v5 MuJoCo tasks adds to the physics, one class per task (Brax's
// pattern; tasks/*.h): the keyword arguments it reads, what it observes, how a step is rewarded
// and ends, how an episode starts. The engine task (mujoco_task.h) loads the model, steps MuJoCo
// frame_skip times and keeps the state; it asks the task's rules for the rest. Each line of a
// task follows gymnasium/envs/mujoco/<task>_v5.py, down to the rounding: a cost of float32
// actions is float32 as NumPy computes it, and sums are NumPy's pairwise sums (numpy_sum.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "engine/config.h"
#include "engine/rng.h"
#include "numpy_sum.h"

namespace metagraph::mujoco {

using engine::standard_normal;
using engine::uniform;

// A closed range (lo, hi) of Gymnasium's keyword arguments.
struct Range {
  double lo;
  double hi;
};

inline Range read_range(const engine::Config& c, const char* key) {
  const auto [lo, hi] = c.range(key);
  return Range{lo, hi};
}

inline double clip(double x, double lo, double hi) {  // np.clip: NaN stays NaN
  return x < lo ? lo : (x > hi ? hi : x);
}

// What a step's reward is computed from: the model, the data after the step, the action, the
// tracked position before and after (Rules::tracked), the control time step, scratch of
// Rules::scratch_size doubles, and where the step's info terms go (Rules::info_names).
struct StepView {
  const mjModel* m;
  const mjData* d;
  const float* action;
  const double* before;
  const double* after;
  double dt;
  double* scratch;
  double* info;
};

class Rules {
 public:
  virtual ~Rules() = default;
  // The keyword arguments this task reads (besides xml_file, frame_skip, max_episode_steps).
  virtual std::vector<std::string> keys() const = 0;
  // Checks the loaded model and finds the bodies the task names (std::invalid_argument naming
  // what is missing); called once, before anything else asks the rules.
  virtual void bind(const mjModel* m) = 0;
  // The length of an observation on model m (Gymnasium's observation space).
  virtual int observation_size(const mjModel* m) const = 0;
  // Gymnasium's _get_obs into obs[observation_size].
  virtual void observe(const mjModel* m, const mjData* d, double* obs) const = 0;
  // The names of Gymnasium's `info` terms of a step, in the order reward() writes them; an
  // array term (Humanoid's tendon_length) is one name per element, "tendon_length[0]", ...
  virtual std::vector<std::string> info_names(const mjModel* m) const = 0;
  // The reward of a step and whether it terminated the episode; the step's info terms into
  // s.info, as Gymnasium's step computes them.
  virtual double reward(const StepView& s, bool* terminated) const = 0;
  // Gymnasium's reset_model after mj_resetData: the new episode's qpos and qvel into d (the
  // engine then runs mj_forward, as set_state does).
  virtual void reset(const mjModel* m, mjData* d, uint64_t& rng) const = 0;
  // The position a step's velocity is measured from (x, y), read after mj_forward or a step;
  // (0, 0) for a task whose reward has no velocity.
  virtual void tracked(const mjModel*, const mjData*, double xy[2]) const {
    xy[0] = xy[1] = 0.0;
  }
  virtual int scratch_size(const mjModel* m) const { return std::max(m->nu, 6 * m->nbody); }
};

// `weight * np.sum(np.square(action))` with float32 actions: NumPy 2 keeps a Python float
// times a float32 in float32.
inline float float32_control_cost(double weight, const float* action, int nu, float* scratch) {
  for (int j = 0; j < nu; ++j) scratch[j] = action[j] * action[j];
  return static_cast<float>(weight) * numpy_sum(scratch, nu);
}

// `np.sum(np.square(x))` of n float64 numbers (the ctrl, cfrc_ext), NumPy's pairwise sum.
inline double sum_of_squares(const double* x, int n, double* scratch) {
  for (int i = 0; i < n; ++i) scratch[i] = x[i] * x[i];
  return numpy_sum(scratch, n);
}

// qpos0 plus uniform noise in [-scale, scale] (Gymnasium's init_qpos + np_random.uniform).
inline void noisy_qpos(const mjModel* m, mjData* d, double scale, uint64_t& rng) {
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + uniform(rng, -scale, scale);
}

// Uniform (or, with `normal`, Gaussian) qvel noise of the given scale around zero.
inline void noisy_qvel(const mjModel* m, mjData* d, double scale, bool normal, uint64_t& rng) {
  for (int i = 0; i < m->nv; ++i)
    d->qvel[i] = normal ? scale * standard_normal(rng) : uniform(rng, -scale, scale);
}

// The body of `name`, or std::invalid_argument naming the task and the body.
inline int body_of(const mjModel* m, const std::string& task, const char* name) {
  const int id = mj_name2id(m, mjOBJ_BODY, name);
  if (id < 0) throw std::invalid_argument(task + ": the model has no body named " + name);
  return id;
}

// The model has at least this many position coordinates, one velocity and one actuator.
inline void need_sizes(const mjModel* m, const std::string& task, int min_nq) {
  if (m->nq < min_nq || m->nv < 1 || m->nu < 1)
    throw std::invalid_argument(task + ": the model needs at least " + std::to_string(min_nq) +
                                " position coordinates, one velocity and one actuator");
}

// sqrt(x^2 + y^2): np.linalg.norm of a 2-vector (Gymnasium's distance_from_origin).
inline double norm2(double x, double y) { return std::sqrt(x * x + y * y); }

// "name[0]", ..., "name[n-1]": the names of an array info term's elements.
inline void add_array_names(std::vector<std::string>& names, const char* name, int n) {
  for (int i = 0; i < n; ++i) names.push_back(std::string(name) + "[" + std::to_string(i) + "]");
}

// ||a - b|| of two 3-vectors as np.linalg.norm computes it: the square root of the dot product,
// which NumPy's BLAS (OpenBLAS on x86-64) accumulates with fused multiply-adds.
inline double distance(const double* a, const double* b) {
  const double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
  return std::sqrt(std::fma(z, z, std::fma(y, y, x * x)));
}

}  // namespace metagraph::mujoco
