// A test task for the engine's optional parts: Nim, two players taking 1 to 3 stones in turn,
// whoever takes the last stone wins. Its legal actions depend on the state (no more stones
// than are left) and its steps report extras: the player to move and both players' rewards.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace nim {

namespace engine = metagraph::engine;

class Nim {
 public:
  using Action = int32_t;                // take action + 1 stones
  static constexpr int kStateWords = 2;  // stones left, player to move

  explicit Nim(const engine::Config& config) : id_(config.task()) { config.only({}); }
  std::string id() const { return id_; }
  int obs_dim() const { return 2; }
  int num_actions() const { return 3; }
  int64_t max_steps() const { return 20; }
  int physical_dim() const { return 2; }

  void reset(double* s, uint64_t& rng) const {
    s[0] = 5 + std::floor(engine::uniform(rng, 0.0, 6.0));
    s[1] = 0;
  }
  bool legal(const double* s, int32_t action) const { return action + 1 <= s[0]; }
  void step(double* s, const Action* action, engine::Step& out) const {
    s[0] -= *action + 1;
    s[1] = 1 - s[1];
    out.terminated = s[0] == 0;
    out.reward = out.terminated ? 1.0 : 0.0;  // for the player who moved
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    obs[0] = static_cast<T>(s[0] / 10);
    obs[1] = static_cast<T>(s[1]);
  }
  int extras_dim() const { return 3; }
  void extras(const double* s, float* out) const {
    const float winner_is_0 = s[0] == 0 ? (s[1] == 1 ? 1.0f : -1.0f) : 0.0f;
    out[0] = static_cast<float>(s[1]);
    out[1] = winner_is_0;
    out[2] = -winner_is_0;
  }
  bool valid(const double* s) const {
    return s[0] >= 1 && s[0] <= 10 && s[0] == std::floor(s[0]) && (s[1] == 0 || s[1] == 1);
  }
  void physical(const double* s, double* physics) const { physics[0] = s[0], physics[1] = s[1]; }
  void set_physical(double* s, const double* physics) const { s[0] = physics[0], s[1] = physics[1]; }

 private:
  std::string id_;
};

}  // namespace nim
