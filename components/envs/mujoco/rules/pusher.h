// Pusher-v5 (gymnasium/envs/mujoco/pusher_v5.py): push the object (a cylinder drawn at each
// reset at least 0.17 from the goal) to the goal; never terminates (episodes of 100 steps).
#pragma once
#include "../rules.h"

namespace metagraph::mujoco {

class Pusher : public Rules {
 public:
  explicit Pusher(const engine::Config& c)
      : near_weight_(c.number("reward_near_weight")),
        dist_weight_(c.number("reward_dist_weight")),
        control_weight_(c.number("reward_control_weight")) {}

  std::vector<std::string> keys() const override {
    return {"reward_near_weight", "reward_dist_weight", "reward_control_weight"};
  }
  void bind(const mjModel* m) override {
    need_sizes(m, "Pusher-v5", 11);
    if (m->nv < 7)
      throw std::invalid_argument("Pusher-v5: the model needs at least seven velocities");
    tips_arm_ = body_of(m, "Pusher-v5", "tips_arm");
    object_ = body_of(m, "Pusher-v5", "object");
    goal_ = body_of(m, "Pusher-v5", "goal");
  }
  int observation_size(const mjModel*) const override { return 7 + 7 + 9; }
  void observe(const mjModel*, const mjData* d, double* obs) const override {
    int k = 0;
    for (int i = 0; i < 7; ++i) obs[k++] = d->qpos[i];
    for (int i = 0; i < 7; ++i) obs[k++] = d->qvel[i];
    for (int body : {tips_arm_, object_, goal_})
      for (int i = 0; i < 3; ++i) obs[k++] = d->xpos[3 * body + i];
  }
  std::vector<std::string> info_names(const mjModel*) const override {
    return {"reward_dist", "reward_ctrl", "reward_near"};
  }
  double reward(const StepView& s, bool* terminated) const override {
    *terminated = false;
    const double* xpos = s.d->xpos;
    const double reward_near = -distance(xpos + 3 * object_, xpos + 3 * tips_arm_) * near_weight_;
    const double reward_dist = -distance(xpos + 3 * object_, xpos + 3 * goal_) * dist_weight_;
    const float reward_ctrl = -float32_control_cost(control_weight_, s.action, s.m->nu,
                                                    reinterpret_cast<float*>(s.scratch));
    s.info[0] = reward_dist;
    s.info[1] = static_cast<double>(reward_ctrl);
    s.info[2] = reward_near;
    return reward_dist + static_cast<double>(reward_ctrl) + reward_near;
  }
  // qpos0 with the object's two coordinates drawn ([-0.3, 0] then [-0.2, 0.2]) until farther
  // than 0.17 from the goal at the origin, the goal's at 0; qvel noise of 0.005, the object's
  // and goal's zero.
  void reset(const mjModel* m, mjData* d, uint64_t& rng) const override {
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i];
    double object[2];
    do {
      object[0] = uniform(rng, -0.3, 0.0);
      object[1] = uniform(rng, -0.2, 0.2);
    } while (!(std::sqrt(object[0] * object[0] + object[1] * object[1]) > 0.17));
    d->qpos[m->nq - 4] = object[0];
    d->qpos[m->nq - 3] = object[1];
    d->qpos[m->nq - 2] = d->qpos[m->nq - 1] = 0.0;
    noisy_qvel(m, d, 0.005, /*normal=*/false, rng);
    for (int i = m->nv - 4; i < m->nv; ++i) d->qvel[i] = 0.0;
  }

 private:
  double near_weight_, dist_weight_, control_weight_;
  int tips_arm_ = -1, object_ = -1, goal_ = -1;
};

}  // namespace metagraph::mujoco
