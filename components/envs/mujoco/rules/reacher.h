// Reacher-v5 (gymnasium/envs/mujoco/reacher_v5.py): bring the fingertip to a target drawn in a
// disc of radius 0.2 at each reset; never terminates (episodes of 50 steps).
#pragma once
#include "../rules.h"

namespace metagraph::mujoco {

class Reacher : public Rules {
 public:
  explicit Reacher(const engine::Config& c)
      : dist_weight_(c.number("reward_dist_weight")),
        control_weight_(c.number("reward_control_weight")) {}

  std::vector<std::string> keys() const override {
    return {"reward_dist_weight", "reward_control_weight"};
  }
  void bind(const mjModel* m) override {
    need_sizes(m, "Reacher-v5", 4);
    if (m->nv < 4)
      throw std::invalid_argument("Reacher-v5: the model needs at least four velocities");
    fingertip_ = body_of(m, "Reacher-v5", "fingertip");
    target_ = body_of(m, "Reacher-v5", "target");
  }
  int observation_size(const mjModel* m) const override { return 2 + m->nq + 2 + 2; }
  void observe(const mjModel* m, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = 0; i < 2; ++i) obs[k++] = std::cos(d->qpos[i]);
    for (int i = 0; i < 2; ++i) obs[k++] = std::sin(d->qpos[i]);
    for (int i = 2; i < m->nq; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < 2; ++i) obs[k++] = d->qvel[i];
    for (int i = 0; i < 2; ++i) obs[k++] = d->xpos[3 * fingertip_ + i] - d->xpos[3 * target_ + i];
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"reward_dist", "reward_ctrl"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    *terminated = false;
    const double reward_dist =
        -distance(s.d->xpos + 3 * fingertip_, s.d->xpos + 3 * target_) * dist_weight_;
    const float reward_ctrl = -float32_control_cost(control_weight_, s.action, s.m->nu,
                                                    reinterpret_cast<float*>(s.scratch));
    s.info[0] = reward_dist;
    s.info[1] = static_cast<double>(reward_ctrl);
    return reward_dist + static_cast<double>(reward_ctrl);
  }
  // qpos0 plus uniform noise of 0.1, the target's two coordinates drawn uniformly in
  // [-0.2, 0.2]^2 until inside the disc of radius 0.2; qvel noise of 0.005, the target's zero.
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    noisy_qpos(m, d, 0.1, rng);
    double goal[2];
    do {
      goal[0] = uniform(rng, -0.2, 0.2);
      goal[1] = uniform(rng, -0.2, 0.2);
    } while (!(std::sqrt(goal[0] * goal[0] + goal[1] * goal[1]) < 0.2));
    d->qpos[m->nq - 2] = goal[0];
    d->qpos[m->nq - 1] = goal[1];
    noisy_qvel(m, d, 0.005, /*normal=*/false, rng);
    d->qvel[m->nv - 2] = d->qvel[m->nv - 1] = 0.0;
  }

 private:
  double dist_weight_, control_weight_;
  int fingertip_ = -1, target_ = -1;
};

}  // namespace metagraph::mujoco
