// InvertedDoublePendulum-v5 (gymnasium/envs/mujoco/inverted_double_pendulum_v5.py): keep the
// pole's tip high; terminated when it falls to y <= 1. The observation: the cart's x, the sines
// and cosines of the link angles, qvel and the cart's constraint force, both clipped to [-10, 10].
#pragma once
#include "../rules.h"

namespace metagraph::mujoco {

class InvertedDoublePendulum : public Rules {
 public:
  explicit InvertedDoublePendulum(const engine::Config& c)
      : healthy_reward_(c.number("healthy_reward")), noise_(c.number("reset_noise_scale")) {}

  std::vector<std::string> keys() const override {
    return {"healthy_reward", "reset_noise_scale"};
  }
  void bind(const mjModel* m) override {
    need_sizes(m, "InvertedDoublePendulum-v5", 3);
    if (m->nv < 3)
      throw std::invalid_argument("InvertedDoublePendulum-v5: the model needs at least three "
                                  "velocities (the cart's and both links')");
    if (m->nsite < 1)
      throw std::invalid_argument("InvertedDoublePendulum-v5: the model has no site (the "
                                  "pole's tip is site 0)");
  }
  int observation_size(const mjModel* m) const override { return 2 * m->nq + m->nv; }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    obs[k++] = d->qpos[0];
    for (int i = 1; i < m->nq; ++i) obs[k++] = std::sin(d->qpos[i]);
    for (int i = 1; i < m->nq; ++i) obs[k++] = std::cos(d->qpos[i]);
    for (int i = 0; i < m->nv; ++i) obs[k++] = clip(d->qvel[i], -10.0, 10.0);
    obs[k++] = clip(d->qfrc_constraint[0], -10.0, 10.0);
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"reward_survive", "distance_penalty", "velocity_penalty"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    const double x = s.d->site_xpos[0], y = s.d->site_xpos[2];
    *terminated = y <= 1.0;
    const double v1 = s.d->qvel[1], v2 = s.d->qvel[2];
    const double dist_penalty = 0.01 * (x * x) + (y - 2.0) * (y - 2.0);
    const double vel_penalty = 1e-3 * (v1 * v1) + 5e-3 * (v2 * v2);
    const double alive_bonus = healthy_reward_ * static_cast<double>(!*terminated);
    s.info[0] = alive_bonus;
    s.info[1] = -dist_penalty;
    s.info[2] = -vel_penalty;
    return alive_bonus - dist_penalty - vel_penalty;
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/true, rng);
  }

 private:
  double healthy_reward_, noise_;
};

}  // namespace metagraph::mujoco
