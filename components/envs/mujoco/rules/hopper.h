// Hopper-v5 and Walker2d-v5 (gymnasium/envs/mujoco/{hopper,walker2d}_v5.py): hop or walk
// forward while healthy. Both observe qpos (without x) and qvel clipped to [-10, 10] and reward
// forward velocity plus the healthy reward minus the control cost; Hopper's health also bounds
// every other coordinate and velocity (healthy_state_range), Walker2d's does not.
#pragma once
#include <string>

#include "../rules.h"

namespace metagraph::mujoco {

class Hopper : public Rules {
 public:
  // `state_range`: Hopper's health bounds the state vector too (Walker2d's does not).
  Hopper(const engine::Config& c, std::string id, bool state_range)
      : id_(std::move(id)),
        state_range_(state_range),
        forward_weight_(c.number("forward_reward_weight")),
        ctrl_weight_(c.number("ctrl_cost_weight")),
        healthy_reward_(c.number("healthy_reward")),
        terminate_(c.flag("terminate_when_unhealthy")),
        healthy_state_(state_range ? read_range(c, "healthy_state_range") : Range{0, 0}),
        healthy_z_(read_range(c, "healthy_z_range")),
        healthy_angle_(read_range(c, "healthy_angle_range")),
        noise_(c.number("reset_noise_scale")),
        skip_(c.flag("exclude_current_positions_from_observation") ? 1 : 0) {}

  std::vector<std::string> keys() const override {
    std::vector<std::string> k = {
        "forward_reward_weight", "ctrl_cost_weight", "healthy_reward",
        "terminate_when_unhealthy", "healthy_z_range", "healthy_angle_range",
        "reset_noise_scale", "exclude_current_positions_from_observation"};
    if (state_range_) k.push_back("healthy_state_range");
    return k;
  }
  void bind(const mjModel* m) override { need_sizes(m, id_, 3); }
  int observation_size(const mjModel* m) const override { return m->nq + m->nv - skip_; }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = skip_; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < m->nv; ++i) obs[k++] = clip(d->qvel[i], -10.0, 10.0);
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward",
            "reward_ctrl", "reward_survive"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    const double x_velocity = (s.after[0] - s.before[0]) / s.dt;
    const float ctrl = float32_control_cost(ctrl_weight_, s.action, s.m->nu,
                                            reinterpret_cast<float*>(s.scratch));
    const bool is_healthy = healthy(s.m, s.d);
    *terminated = !is_healthy && terminate_;
    const double forward = forward_weight_ * x_velocity;
    const double survive = static_cast<double>(is_healthy) * healthy_reward_;
    const double info[] = {s.after[0], s.d->qpos[1] - s.m->qpos0[1], x_velocity, forward,
                           -static_cast<double>(ctrl), survive};
    std::copy(std::begin(info), std::end(info), s.info);
    return forward + survive - static_cast<double>(ctrl);
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/false, rng);
  }
  void tracked(const mjModel*, const mjData* d, double xy[2]) const override {
    xy[0] = d->qpos[0];
    xy[1] = 0.0;
  }

 private:
  // Gymnasium's is_healthy: z and angle strictly inside their ranges (and, for Hopper, the
  // state vector after x and z strictly inside healthy_state_range).
  bool healthy(const mjModel* m, const mjData* d) const {
    const double* qpos = d->qpos;
    bool ok = true;
    if (state_range_) {
      const Range r = healthy_state_;
      for (int i = 2; i < m->nq; ++i) ok = ok && r.lo < qpos[i] && qpos[i] < r.hi;
      for (int i = 0; i < m->nv; ++i) ok = ok && r.lo < d->qvel[i] && d->qvel[i] < r.hi;
    }
    return ok && healthy_z_.lo < qpos[1] && qpos[1] < healthy_z_.hi &&
           healthy_angle_.lo < qpos[2] && qpos[2] < healthy_angle_.hi;
  }

  std::string id_;
  bool state_range_;
  double forward_weight_, ctrl_weight_, healthy_reward_;
  bool terminate_;
  Range healthy_state_, healthy_z_, healthy_angle_;
  double noise_;
  int skip_;
};

}  // namespace metagraph::mujoco
