// Humanoid-v5 and HumanoidStandup-v5 (gymnasium/envs/mujoco/humanoid{,standup}_v5.py): one
// body, two goals. Both observe qpos (without x and y), qvel, and by choice the bodies' inertia
// (cinert), velocities (cvel), the actuators' forces (qfrc_actuator past the free joint) and the
// external contact forces (cfrc_ext), each without the world body. Humanoid walks forward while
// its torso is high enough; HumanoidStandup rises (never terminates).
#pragma once
#include <string>

#include "../rules.h"

namespace metagraph::mujoco {

// What both humanoids observe (their keyword arguments include_*_in_observation).
class HumanoidBody : public Rules {
 public:
  HumanoidBody(const engine::Config& c, std::string id)
      : id_(std::move(id)),
        noise_(c.number("reset_noise_scale")),
        skip_(c.flag("exclude_current_positions_from_observation") ? 2 : 0),
        cinert_(c.flag("include_cinert_in_observation")),
        cvel_(c.flag("include_cvel_in_observation")),
        qfrc_actuator_(c.flag("include_qfrc_actuator_in_observation")),
        cfrc_ext_(c.flag("include_cfrc_ext_in_observation")) {}

  void bind(const mjModel* m) override {
    need_sizes(m, id_, 3);
    if (m->nv < 6)
      throw std::invalid_argument(id_ + ": the model needs a free joint (six velocities)");
  }
  int observation_size(const mjModel* m) const override {
    const int bodies = m->nbody - 1;
    return m->nq - skip_ + m->nv + (cinert_ ? 10 * bodies : 0) + (cvel_ ? 6 * bodies : 0) +
           (qfrc_actuator_ ? m->nv - 6 : 0) + (cfrc_ext_ ? 6 * bodies : 0);
  }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = skip_; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < m->nv; ++i) obs[k++] = d->qvel[i];
    if (cinert_)
      for (int i = 10; i < 10 * m->nbody; ++i) obs[k++] = d->cinert[i];
    if (cvel_)
      for (int i = 6; i < 6 * m->nbody; ++i) obs[k++] = d->cvel[i];
    if (qfrc_actuator_)
      for (int i = 6; i < m->nv; ++i) obs[k++] = d->qfrc_actuator[i];
    if (cfrc_ext_)
      for (int i = 6; i < 6 * m->nbody; ++i) obs[k++] = d->cfrc_ext[i];
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/false, rng);
  }
  int scratch_size(const mjModel* m) const override { return std::max(m->nu, 6 * m->nbody); }

 protected:
  // The tendons' lengths then velocities (Gymnasium's tendon_length and tendon_velocity).
  static double* tendons(const mjModel* m, const mjData* d, double* info) {
    for (int i = 0; i < m->ntendon; ++i) *info++ = d->ten_length[i];
    for (int i = 0; i < m->ntendon; ++i) *info++ = d->ten_velocity[i];
    return info;
  }
  static void add_tendon_names(const mjModel* m, std::vector<std::string>& names) {
    add_array_names(names, "tendon_length", m->ntendon);
    add_array_names(names, "tendon_velocity", m->ntendon);
  }

  // `weight * np.sum(np.square(data.ctrl))`: the ctrl in float64, as set from the action.
  static double control_cost(double weight, const StepView& s) {
    for (int j = 0; j < s.m->nu; ++j) {
      const double a = s.d->ctrl[j];
      s.scratch[j] = a * a;
    }
    return weight * numpy_sum(s.scratch, s.m->nu);
  }
  // `np.clip(weight * np.sum(np.square(data.cfrc_ext)), lo, hi)`.
  static double contact_cost(double weight, Range range, const StepView& s) {
    const double cost = weight * sum_of_squares(s.d->cfrc_ext, 6 * s.m->nbody, s.scratch);
    return clip(cost, range.lo, range.hi);
  }

  std::string id_;

 private:
  double noise_;
  int skip_;
  bool cinert_, cvel_, qfrc_actuator_, cfrc_ext_;
};

inline std::vector<std::string> humanoid_body_keys() {
  return {"reset_noise_scale", "exclude_current_positions_from_observation",
          "include_cinert_in_observation", "include_cvel_in_observation",
          "include_qfrc_actuator_in_observation", "include_cfrc_ext_in_observation"};
}

class Humanoid : public HumanoidBody {
 public:
  explicit Humanoid(const engine::Config& c)
      : HumanoidBody(c, "Humanoid-v5"),
        forward_weight_(c.number("forward_reward_weight")),
        ctrl_weight_(c.number("ctrl_cost_weight")),
        contact_weight_(c.number("contact_cost_weight")),
        contact_range_(read_range(c, "contact_cost_range")),
        healthy_reward_(c.number("healthy_reward")),
        terminate_(c.flag("terminate_when_unhealthy")),
        healthy_z_(read_range(c, "healthy_z_range")) {}

  std::vector<std::string> keys() const override {
    std::vector<std::string> k = humanoid_body_keys();
    for (const char* key : {"forward_reward_weight", "ctrl_cost_weight", "contact_cost_weight",
                            "contact_cost_range", "healthy_reward", "terminate_when_unhealthy",
                            "healthy_z_range"})
      k.push_back(key);
    return k;
  }
  std::vector<std::string> info_names(const mjModel* m) const override {
    std::vector<std::string> names = {"x_position", "y_position"};
    add_tendon_names(m, names);
    for (const char* name : {"distance_from_origin", "x_velocity", "y_velocity",
                             "reward_survive", "reward_forward", "reward_ctrl",
                             "reward_contact"})
      names.push_back(name);
    return names;
  }
  double reward(const StepView& s, bool* terminated) const override {
    const double x_velocity = (s.after[0] - s.before[0]) / s.dt;
    const bool healthy = healthy_z_.lo < s.d->qpos[2] && s.d->qpos[2] < healthy_z_.hi;
    *terminated = !healthy && terminate_;
    const double forward = forward_weight_ * x_velocity;
    const double survive = static_cast<double>(healthy) * healthy_reward_;
    const double ctrl = control_cost(ctrl_weight_, s);
    const double contact = contact_cost(contact_weight_, contact_range_, s);
    const double* qpos = s.d->qpos;
    double* info = s.info;
    *info++ = qpos[0];
    *info++ = qpos[1];
    info = tendons(s.m, s.d, info);
    const double rest[] = {norm2(qpos[0], qpos[1]), x_velocity,
                           (s.after[1] - s.before[1]) / s.dt, survive, forward, -ctrl, -contact};
    std::copy(std::begin(rest), std::end(rest), info);
    return forward + survive - (ctrl + contact);
  }
  // Gymnasium's mass_center: the bodies' xipos weighted by their masses (summed body by body,
  // as NumPy sums down a column), over the total mass (a pairwise sum).
  void tracked(const mjModel* m, const mjData* d, double xy[2]) const override {
    double weighted[2] = {0.0, 0.0};
    for (int b = 0; b < m->nbody; ++b)
      for (int i = 0; i < 2; ++i) weighted[i] += m->body_mass[b] * d->xipos[3 * b + i];
    const double mass = numpy_sum(m->body_mass, m->nbody);
    xy[0] = weighted[0] / mass;
    xy[1] = weighted[1] / mass;
  }

 private:
  double forward_weight_, ctrl_weight_, contact_weight_;
  Range contact_range_;
  double healthy_reward_;
  bool terminate_;
  Range healthy_z_;
};

class HumanoidStandup : public HumanoidBody {
 public:
  explicit HumanoidStandup(const engine::Config& c)
      : HumanoidBody(c, "HumanoidStandup-v5"),
        ctrl_weight_(c.number("ctrl_cost_weight")),
        impact_weight_(c.number("impact_cost_weight")),
        impact_range_(read_range(c, "impact_cost_range")) {
    c.number("uph_cost_weight");  // taken and checked, and unused, as in Gymnasium's v5
  }

  std::vector<std::string> keys() const override {
    std::vector<std::string> k = humanoid_body_keys();
    for (const char* key : {"uph_cost_weight", "ctrl_cost_weight", "impact_cost_weight",
                            "impact_cost_range"})
      k.push_back(key);
    return k;
  }
  // The torso's height over the model's time step (not the control step), minus the costs,
  // plus one.
  std::vector<std::string> info_names(const mjModel* m) const override {
    std::vector<std::string> names = {"x_position", "y_position", "z_distance_from_origin"};
    add_tendon_names(m, names);
    for (const char* name : {"reward_linup", "reward_quadctrl", "reward_impact"})
      names.push_back(name);
    return names;
  }
  double reward(const StepView& s, bool* terminated) const override {
    *terminated = false;
    const double uph_cost = (s.d->qpos[2] - 0) / s.m->opt.timestep;
    const double quad_ctrl_cost = control_cost(ctrl_weight_, s);
    const double quad_impact_cost = contact_cost(impact_weight_, impact_range_, s);
    const double* qpos = s.d->qpos;
    double* info = s.info;
    *info++ = qpos[0];
    *info++ = qpos[1];
    *info++ = qpos[2] - s.m->qpos0[2];
    info = tendons(s.m, s.d, info);
    *info++ = uph_cost;
    *info++ = -quad_ctrl_cost;
    *info = -quad_impact_cost;
    return uph_cost - quad_ctrl_cost - quad_impact_cost + 1;
  }

 private:
  double ctrl_weight_, impact_weight_;
  Range impact_range_;
};

}  // namespace metagraph::mujoco
