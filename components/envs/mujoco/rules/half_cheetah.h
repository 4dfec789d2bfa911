// HalfCheetah-v5 and Swimmer-v5 (gymnasium/envs/mujoco/{half_cheetah,swimmer}_v5.py): run or
// swim forward; never terminate. Both observe qpos (without the tracked coordinates) and qvel
// and reward forward velocity minus the control cost; HalfCheetah tracks x and draws Gaussian
// qvel noise, Swimmer tracks x and y and draws uniform noise.
#pragma once
#include <string>

#include "../rules.h"

namespace metagraph::mujoco {

class HalfCheetah : public Rules {
 public:
  // `swimmer`: Swimmer's numbers (x and y tracked and left out, uniform qvel noise).
  HalfCheetah(const engine::Config& c, std::string id, bool swimmer)
      : id_(std::move(id)),
        swimmer_(swimmer),
        forward_weight_(c.number("forward_reward_weight")),
        ctrl_weight_(c.number("ctrl_cost_weight")),
        noise_(c.number("reset_noise_scale")),
        skip_(c.flag("exclude_current_positions_from_observation") ? 1 + swimmer : 0) {}

  std::vector<std::string> keys() const override {
    return {"forward_reward_weight", "ctrl_cost_weight", "reset_noise_scale",
            "exclude_current_positions_from_observation"};
  }
  void bind(const mjModel* m) override { need_sizes(m, id_, swimmer_ ? 2 : 1); }
  int observation_size(const mjModel* m) const override { return m->nq + m->nv - skip_; }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = skip_; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < m->nv; ++i) obs[k++] = d->qvel[i];
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    if (swimmer_)
      return {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
              "reward_forward", "reward_ctrl"};
    return {"x_position", "x_velocity", "reward_forward", "reward_ctrl"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    const double x_velocity = (s.after[0] - s.before[0]) / s.dt;
    const float ctrl = float32_control_cost(ctrl_weight_, s.action, s.m->nu,
                                            reinterpret_cast<float*>(s.scratch));
    *terminated = false;
    const double forward = forward_weight_ * x_velocity;
    double* info = s.info;
    *info++ = s.after[0];
    if (swimmer_) {
      *info++ = s.after[1];
      *info++ = norm2(s.after[0], s.after[1]);
    }
    *info++ = x_velocity;
    if (swimmer_) *info++ = (s.after[1] - s.before[1]) / s.dt;
    *info++ = forward;
    *info = -static_cast<double>(ctrl);
    return forward - static_cast<double>(ctrl);
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/!swimmer_, rng);
  }
  void tracked(const mjModel*, const mjData* d, double xy[2]) const override {
    xy[0] = d->qpos[0];
    xy[1] = swimmer_ ? d->qpos[1] : 0.0;
  }

 private:
  std::string id_;
  bool swimmer_;
  double forward_weight_, ctrl_weight_, noise_;
  int skip_;
};

}  // namespace metagraph::mujoco
