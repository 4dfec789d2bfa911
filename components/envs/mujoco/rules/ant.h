// Ant-v5 (gymnasium/envs/mujoco/ant_v5.py): walk forward while healthy; the contact forces
// (cfrc_ext, clipped) are observed and cost.
#pragma once
#include <string>

#include "../rules.h"

namespace metagraph::mujoco {

class Ant : public Rules {
 public:
  explicit Ant(const engine::Config& c)
      : forward_weight_(c.number("forward_reward_weight")),
        ctrl_weight_(c.number("ctrl_cost_weight")),
        contact_weight_(c.number("contact_cost_weight")),
        healthy_reward_(c.number("healthy_reward")),
        terminate_(c.flag("terminate_when_unhealthy")),
        healthy_z_(read_range(c, "healthy_z_range")),
        contact_force_(read_range(c, "contact_force_range")),
        noise_(c.number("reset_noise_scale")),
        skip_(c.flag("exclude_current_positions_from_observation") ? 2 : 0),
        cfrc_ext_(c.flag("include_cfrc_ext_in_observation")),
        main_body_(static_cast<int>(c.integer("main_body", 0, 1000000))),
        main_body_name_(c.text("main_body_name")) {}

  std::vector<std::string> keys() const override {
    return {"forward_reward_weight", "ctrl_cost_weight", "contact_cost_weight",
            "healthy_reward", "terminate_when_unhealthy", "healthy_z_range",
            "contact_force_range", "reset_noise_scale",
            "exclude_current_positions_from_observation", "include_cfrc_ext_in_observation",
            "main_body", "main_body_name"};
  }
  void bind(const mjModel* m) override {
    if (!main_body_name_.empty()) main_body_ = body_of(m, "Ant-v5", main_body_name_.c_str());
    need_sizes(m, "Ant-v5", 3);
    if (main_body_ < 0 || main_body_ >= m->nbody)
      throw std::invalid_argument("Ant-v5: main_body " + std::to_string(main_body_) +
                                  " is not a body of the model (it has " +
                                  std::to_string(m->nbody) + ")");
  }
  int observation_size(const mjModel* m) const override {
    return m->nq + m->nv - skip_ + (cfrc_ext_ ? 6 * (m->nbody - 1) : 0);
  }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = skip_; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < m->nv; ++i) obs[k++] = d->qvel[i];
    if (cfrc_ext_)
      for (int i = 6; i < 6 * m->nbody; ++i)
        obs[k++] = clip(d->cfrc_ext[i], contact_force_.lo, contact_force_.hi);
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
            "reward_forward", "reward_ctrl", "reward_contact", "reward_survive"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    const double x_velocity = (s.after[0] - s.before[0]) / s.dt;
    const float ctrl = float32_control_cost(ctrl_weight_, s.action, s.m->nu,
                                            reinterpret_cast<float*>(s.scratch));
    const bool is_healthy = healthy(s.m, s.d);
    *terminated = !is_healthy && terminate_;
    const double forward = x_velocity * forward_weight_;
    const double survive = static_cast<double>(is_healthy) * healthy_reward_;
    const double contact = contact_cost(s.m, s.d, s.scratch);
    const double* qpos = s.d->qpos;
    const double info[] = {qpos[0], qpos[1], norm2(qpos[0], qpos[1]), x_velocity,
                           (s.after[1] - s.before[1]) / s.dt, forward,
                           -static_cast<double>(ctrl), -contact, survive};
    std::copy(std::begin(info), std::end(info), s.info);
    return forward + survive - (static_cast<double>(ctrl) + contact);
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/true, rng);
  }
  // The xy of the main body (Gymnasium reads data.body(main_body).xpos: computed by the last
  // substep's forward pass, before its integration).
  void tracked(const mjModel*, const mjData* d, double xy[2]) const override {
    xy[0] = d->xpos[3 * main_body_];
    xy[1] = d->xpos[3 * main_body_ + 1];
  }

 private:
  // Every number finite and z inside the closed healthy_z_range.
  bool healthy(const mjModel* m, const mjData* d) const {
    bool finite = true;
    for (int i = 0; i < m->nq; ++i) finite = finite && std::isfinite(d->qpos[i]);
    for (int i = 0; i < m->nv; ++i) finite = finite && std::isfinite(d->qvel[i]);
    return finite && healthy_z_.lo <= d->qpos[2] && d->qpos[2] <= healthy_z_.hi;
  }
  // The weight times the pairwise sum of the squared clipped cfrc_ext.
  double contact_cost(const mjModel* m, const mjData* d, double* scratch) const {
    const int n = 6 * m->nbody;
    for (int i = 0; i < n; ++i) {
      const double f = clip(d->cfrc_ext[i], contact_force_.lo, contact_force_.hi);
      scratch[i] = f * f;
    }
    return contact_weight_ * numpy_sum(scratch, n);
  }

  double forward_weight_, ctrl_weight_, contact_weight_, healthy_reward_;
  bool terminate_;
  Range healthy_z_, contact_force_;
  double noise_;
  int skip_;
  bool cfrc_ext_;
  int main_body_;
  std::string main_body_name_;
};

}  // namespace metagraph::mujoco
