// bsuite's Catch (Osband et al. 2020, "Behaviour Suite for Reinforcement Learning") as a task
// of metagraph's environment engine: the whole environment is this header. A ball falls one
// row per step down a board of `rows` x `columns`; the paddle on the bottom row moves left,
// stays or moves right (actions 0, 1, 2); when the ball reaches the bottom row the episode
// ends with reward +1 if the paddle is under it, else -1. The observation is the board, 1
// where the ball or the paddle is.
//
// Built and registered by catch_env.py (metagraph's `build_extension` and `register`).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace catch_env {

namespace engine = metagraph::engine;

class Catch {
 public:
  using Action = int32_t;              // 0 left, 1 stay, 2 right
  static constexpr int kStateWords = 3;  // ball x, ball y, paddle x

  explicit Catch(const engine::Config& config)
      : id_(config.task()),
        rows_(static_cast<int>(config.has("rows") ? config.integer("rows", 2, 1000) : 10)),
        columns_(static_cast<int>(config.has("columns") ? config.integer("columns", 1, 1000)
                                                        : 5)) {
    config.only({"rows", "columns"});
  }

  std::string id() const { return id_; }
  int obs_dim() const { return rows_ * columns_; }
  int num_actions() const { return 3; }
  // The ball reaches the bottom after rows - 1 steps: an episode never reaches this limit.
  int64_t max_steps() const { return rows_; }
  int physical_dim() const { return 3; }

  void reset(double* s, uint64_t& rng) const {
    s[0] = std::floor(engine::uniform(rng, 0.0, columns_));  // the ball's column
    s[1] = 0.0;                                              // the top row
    s[2] = columns_ / 2;                                     // the paddle in the middle
  }
  void step(double* s, const Action* action, engine::Step& out) const {
    const double paddle = s[2] + (*action - 1);
    s[2] = paddle < 0 ? 0 : (paddle > columns_ - 1 ? columns_ - 1 : paddle);
    s[1] += 1;
    out.terminated = s[1] == rows_ - 1;
    out.reward = out.terminated ? (s[2] == s[0] ? 1.0 : -1.0) : 0.0;
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    for (int k = 0; k < rows_ * columns_; ++k) obs[k] = 0;
    obs[static_cast<int>(s[1]) * columns_ + static_cast<int>(s[0])] = 1;
    obs[(rows_ - 1) * columns_ + static_cast<int>(s[2])] = 1;
  }
  // A state reset and step can produce: whole cells on the board, the ball above the bottom.
  bool valid(const double* s) const {
    return whole(s[0], 0, columns_ - 1) && whole(s[1], 0, rows_ - 2) &&
           whole(s[2], 0, columns_ - 1);
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k < 3; ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k < 3; ++k) s[k] = physics[k];
  }

 private:
  static bool whole(double x, int lo, int hi) {
    return x >= lo && x <= hi && x == std::floor(x);
  }
  std::string id_;
  int rows_;
  int columns_;
};

}  // namespace catch_env
