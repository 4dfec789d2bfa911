// InvertedPendulum-v5 (gymnasium/envs/mujoco/inverted_pendulum_v5.py): keep the pole up;
// reward 1 a step; terminated when the pole leans more than 0.2 rad (or a number is not finite).
#pragma once
#include "../rules.h"

namespace metagraph::mujoco {

class InvertedPendulum : public Rules {
 public:
  explicit InvertedPendulum(const engine::Config& c) : noise_(c.number("reset_noise_scale")) {}

  std::vector<std::string> keys() const override { return {"reset_noise_scale"}; }
  void bind(const mjModel* m) override { need_sizes(m, "InvertedPendulum-v5", 2); }
  int observation_size(const mjModel* m) const override { return m->nq + m->nv; }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = 0; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < m->nv; ++i) obs[k++] = d->qvel[i];
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"reward_survive"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    bool finite = true;
    for (int i = 0; i < s.m->nq; ++i) finite = finite && std::isfinite(s.d->qpos[i]);
    for (int i = 0; i < s.m->nv; ++i) finite = finite && std::isfinite(s.d->qvel[i]);
    *terminated = !finite || std::abs(s.d->qpos[1]) > 0.2;
    s.info[0] = *terminated ? 0.0 : 1.0;
    return s.info[0];
  }
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, noise_, rng);
    noisy_qvel(m, d, noise_, /*normal=*/false, rng);
  }

 private:
  double noise_;
};

}  // namespace metagraph::mujoco
