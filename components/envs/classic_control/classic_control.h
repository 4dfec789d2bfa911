// Classic-control dynamics, step for step as Gymnasium 1.x writes them (same constants, same
// order of operations, float64 state), one struct per environment, and `Classic<Dynamics>`,
// which makes each a task of the engine (engine/task.h). Each dynamics struct has:
//   kStateDim / kObsDim / kMaxSteps, Action (int32_t or float), kNumActions or kLow/kHigh,
//   reset(state, rng), observe<M>(state, obs), valid(state),
//   step<M>(state, action, terminated) -> reward,
// where M is the flavour of sin and cos (vector_math.h): FastMath lets a loop over many
// environments vectorize, LibMath is the C library's.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"
#include "vector_math.h"

namespace metagraph::classic_control {

using engine::uniform;

constexpr double kPi = 3.14159265358979323846;

inline double clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

inline bool all_finite(const double* s, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(s[i])) return false;
  return true;
}

// ------------------------------------------------------------------------------------ CartPole
struct CartPole {
  static constexpr const char* kId = "CartPole-v1";
  static constexpr int kStateDim = 4, kObsDim = 4, kMaxSteps = 500, kNumActions = 2;
  using Action = int32_t;
  static constexpr double gravity = 9.8, masscart = 1.0, masspole = 0.1;
  static constexpr double total_mass = masspole + masscart, length = 0.5;
  static constexpr double polemass_length = masspole * length, force_mag = 10.0, tau = 0.02;
  static constexpr double theta_threshold = 12 * 2 * kPi / 360, x_threshold = 2.4;

  static void reset(double* s, uint64_t& rng) {
    for (int i = 0; i < 4; ++i) s[i] = uniform(rng, -0.05, 0.05);
  }
  template <class M = LibMath>
  static void observe(const double* s, float* obs) {
    for (int i = 0; i < 4; ++i) obs[i] = static_cast<float>(s[i]);
  }
  static bool valid(const double* s) { return all_finite(s, kStateDim); }
  template <class M = LibMath>
  static double step(double* s, Action action, bool* terminated) {
    double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    const double force = action == 1 ? force_mag : -force_mag;
    const double costheta = M::cos(theta), sintheta = M::sin(theta);
    const double temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
    const double thetaacc = (gravity * sintheta - costheta * temp) /
        (length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass));
    const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
    x = x + tau * x_dot;
    x_dot = x_dot + tau * xacc;
    theta = theta + tau * theta_dot;
    theta_dot = theta_dot + tau * thetaacc;
    s[0] = x; s[1] = x_dot; s[2] = theta; s[3] = theta_dot;
    *terminated = (x < -x_threshold) | (x > x_threshold) | (theta < -theta_threshold) |
                  (theta > theta_threshold);  // no short circuit: this vectorizes
    return 1.0;
  }
};

// ------------------------------------------------------------------------------------- Acrobot
struct Acrobot {
  static constexpr const char* kId = "Acrobot-v1";
  static constexpr int kStateDim = 4, kObsDim = 6, kMaxSteps = 500, kNumActions = 3;
  using Action = int32_t;
  static constexpr double dt = 0.2, l1 = 1.0, m1 = 1.0, m2 = 1.0, lc1 = 0.5, lc2 = 0.5;
  static constexpr double I1 = 1.0, I2 = 1.0, g = 9.8;
  static constexpr double max_vel_1 = 4 * kPi, max_vel_2 = 9 * kPi;

  static void reset(double* s, uint64_t& rng) {  // Gymnasium casts the reset state to float32
    for (int i = 0; i < 4; ++i) s[i] = static_cast<float>(uniform(rng, -0.1, 0.1));
  }
  template <class M = LibMath>
  static void observe(const double* s, float* obs) {
    obs[0] = static_cast<float>(M::cos(s[0]));
    obs[1] = static_cast<float>(M::sin(s[0]));
    obs[2] = static_cast<float>(M::cos(s[1]));
    obs[3] = static_cast<float>(M::sin(s[1]));
    obs[4] = static_cast<float>(s[2]);
    obs[5] = static_cast<float>(s[3]);
  }
  static bool valid(const double* s) { return all_finite(s, kStateDim); }

  template <class M = LibMath>
  static void dsdt(const double* s, double a, double* out) {
    const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
    const double d1 = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * M::cos(theta2)) +
                      I1 + I2;
    const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * M::cos(theta2)) + I2;
    const double phi2 = m2 * lc2 * g * M::cos(theta1 + theta2 - kPi / 2.0);
    const double phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * M::sin(theta2) -
                        2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * M::sin(theta2) +
                        (m1 * lc1 + m2 * l1) * g * M::cos(theta1 - kPi / 2) + phi2;
    const double ddtheta2 =
        (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * M::sin(theta2) - phi2) /
        (m2 * lc2 * lc2 + I2 - d2 * d2 / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    out[0] = dtheta1; out[1] = dtheta2; out[2] = ddtheta1; out[3] = ddtheta2;
  }
  // Gymnasium's wrap(): subtract or add the period until inside [m, M].
  static double wrap(double x, double m, double M) {
    const double diff = M - m;
    if (std::fabs(x) > 1e6) x = std::fmod(x, diff);  // keep the loops short on wild states
    while (x > M) x = x - diff;
    while (x < m) x = x + diff;
    return x;
  }
  template <class M = LibMath>
  static double step(double* s, Action action, bool* terminated) {
    static constexpr double torques[3] = {-1.0, 0.0, 1.0};
    const double a = torques[action];  // action checked in [0, 3) before any step
    double k1[4], k2[4], k3[4], k4[4], y[4];
    const double h = dt, h2 = dt / 2.0;
    dsdt<M>(s, a, k1);
    for (int i = 0; i < 4; ++i) y[i] = s[i] + h2 * k1[i];
    dsdt<M>(y, a, k2);
    for (int i = 0; i < 4; ++i) y[i] = s[i] + h2 * k2[i];
    dsdt<M>(y, a, k3);
    for (int i = 0; i < 4; ++i) y[i] = s[i] + h * k3[i];
    dsdt<M>(y, a, k4);
    double ns[4];
    for (int i = 0; i < 4; ++i) ns[i] = s[i] + h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    s[0] = wrap(ns[0], -kPi, kPi);
    s[1] = wrap(ns[1], -kPi, kPi);
    s[2] = clip(ns[2], -max_vel_1, max_vel_1);
    s[3] = clip(ns[3], -max_vel_2, max_vel_2);
    *terminated = -M::cos(s[0]) - M::cos(s[1] + s[0]) > 1.0;
    return *terminated ? 0.0 : -1.0;
  }
};

// ---------------------------------------------------------------------------------- MountainCar
// What both mountain cars share: the valley, the start, the observation (position, velocity).
struct MountainCarValley {
  static constexpr int kStateDim = 2, kObsDim = 2;
  static constexpr double min_position = -1.2, max_position = 0.6, max_speed = 0.07;

  static void reset(double* s, uint64_t& rng) {
    s[0] = uniform(rng, -0.6, -0.4);
    s[1] = 0.0;
  }
  template <class M = LibMath>
  static void observe(const double* s, float* obs) {
    obs[0] = static_cast<float>(s[0]);
    obs[1] = static_cast<float>(s[1]);
  }
  static bool valid(const double* s) { return all_finite(s, kStateDim); }
};

struct MountainCar : MountainCarValley {
  static constexpr const char* kId = "MountainCar-v0";
  static constexpr int kMaxSteps = 200, kNumActions = 3;
  using Action = int32_t;
  static constexpr double goal_position = 0.5, force = 0.001, gravity = 0.0025;
  template <class M = LibMath>
  static double step(double* s, Action action, bool* terminated) {
    double position = s[0], velocity = s[1];
    velocity += (action - 1) * force + M::cos(3 * position) * (-gravity);
    velocity = clip(velocity, -max_speed, max_speed);
    position += velocity;
    position = clip(position, min_position, max_position);
    if (position == min_position && velocity < 0) velocity = 0;
    *terminated = position >= goal_position && velocity >= 0.0;
    s[0] = position; s[1] = velocity;
    return -1.0;
  }
};

// ------------------------------------------------------------------------ MountainCarContinuous
struct MountainCarContinuous : MountainCarValley {
  static constexpr const char* kId = "MountainCarContinuous-v0";
  static constexpr int kMaxSteps = 999;
  using Action = float;
  static constexpr double kLow = -1.0, kHigh = 1.0;
  static constexpr double goal_position = 0.45, power = 0.0015;
  template <class M = LibMath>
  static double step(double* s, Action action, bool* terminated) {
    double position = s[0], velocity = s[1];
    const double a = action;
    const double f = std::fmin(std::fmax(a, kLow), kHigh);  // Gymnasium clips the force...
    velocity += f * power - 0.0025 * M::cos(3 * position);
    if (velocity > max_speed) velocity = max_speed;
    if (velocity < -max_speed) velocity = -max_speed;
    position += velocity;
    if (position > max_position) position = max_position;
    if (position < min_position) position = min_position;
    if (position == min_position && velocity < 0) velocity = 0;
    *terminated = position >= goal_position && velocity >= 0.0;
    double reward = *terminated ? 100.0 : 0.0;
    reward -= a * a * 0.1;  // ...but charges the unclipped action
    s[0] = static_cast<float>(position);  // Gymnasium keeps this state in float32
    s[1] = static_cast<float>(velocity);
    return reward;
  }
};

// ------------------------------------------------------------------------------------ Pendulum
struct Pendulum {
  static constexpr const char* kId = "Pendulum-v1";
  static constexpr int kStateDim = 2, kObsDim = 3, kMaxSteps = 200;
  using Action = float;
  static constexpr double kLow = -2.0, kHigh = 2.0;
  static constexpr double max_speed = 8, max_torque = 2.0, dt = 0.05, g = 10.0, m = 1.0, l = 1.0;

  static void reset(double* s, uint64_t& rng) {
    s[0] = uniform(rng, -kPi, kPi);
    s[1] = uniform(rng, -1.0, 1.0);
  }
  template <class M = LibMath>
  static void observe(const double* s, float* obs) {
    obs[0] = static_cast<float>(M::cos(s[0]));
    obs[1] = static_cast<float>(M::sin(s[0]));
    obs[2] = static_cast<float>(s[1]);
  }
  static bool valid(const double* s) { return all_finite(s, kStateDim); }
  static double angle_normalize(double x) {  // ((x + pi) % (2 pi)) - pi, Python's floor modulo
    const double period = 2 * kPi;
    double r = std::fmod(x + kPi, period);
    if (r < 0) r += period;
    return r - kPi;
  }
  template <class M = LibMath>
  static double step(double* s, Action action, bool* terminated) {
    const double th = s[0], thdot = s[1];
    const double u = clip(static_cast<double>(action), -max_torque, max_torque);
    const double an = angle_normalize(th);
    const double costs = an * an + 0.1 * thdot * thdot + 0.001 * (u * u);
    double newthdot = thdot + (3 * g / (2 * l) * M::sin(th) + 3.0 / (m * l * l) * u) * dt;
    newthdot = clip(newthdot, -max_speed, max_speed);
    const double newth = th + newthdot * dt;
    s[0] = newth; s[1] = newthdot;
    *terminated = false;
    return -costs;
  }
};

// A dynamics struct as an engine task: a fixed state of kStateDim float64 words, the physical
// state being the state itself, no arguments, and a fast flavour (FastMath's sin and cos,
// which vectorise) for states within FastMath::kRange.
template <class Dynamics>
class Classic {
 public:
  using Action = typename Dynamics::Action;
  static constexpr int kStateWords = Dynamics::kStateDim;

  explicit Classic(const engine::Config& config) { config.only({}); }
  std::string id() const { return Dynamics::kId; }
  int obs_dim() const { return Dynamics::kObsDim; }
  int num_actions() const { return Dynamics::kNumActions; }
  int action_dim() const { return 1; }
  int64_t max_steps() const { return Dynamics::kMaxSteps; }
  int physical_dim() const { return Dynamics::kStateDim; }

  void reset(double* s, uint64_t& rng) const { Dynamics::reset(s, rng); }
  bool valid(const double* s) const { return Dynamics::valid(s); }
  bool fast(const double* s) const {
    bool ok = true;
    for (int d = 0; d < kStateWords; ++d) ok &= std::fabs(s[d]) <= FastMath::kRange;
    return ok;
  }
  template <bool kFast>
  void step(double* s, const Action* action, engine::Step& out) const {
    bool terminated = false;
    out.reward = Dynamics::template step<Flavour<kFast>>(s, *action, &terminated);
    out.terminated = terminated;
  }
  template <bool kFast>
  void observe(const double* s, float* obs) const {
    Dynamics::template observe<Flavour<kFast>>(s, obs);
  }
  void physical(const double* s, double* physics) const {
    for (int d = 0; d < kStateWords; ++d) physics[d] = s[d];
  }
  void set_physical(double* s, const double* physics) const {
    for (int d = 0; d < kStateWords; ++d) s[d] = physics[d];
  }

 private:
  template <bool kFast>
  using Flavour = std::conditional_t<kFast, FastMath, LibMath>;
};

}  // namespace metagraph::classic_control
