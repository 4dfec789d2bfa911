// A game of three players, for the engine's `num_players()`: three players in turn take 1 to 3
// stones (action + 1) from a pile of 6 to 11; whoever takes the last stone wins (+1) and the
// two others lose half each (-0.5). Observations: the pile / 12, then the player to move one-hot.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace nim3 {

namespace engine = metagraph::engine;

class ThreePlayerNim {
 public:
  using Action = int32_t;
  static constexpr int kStateWords = 3;  // stones left, player to move, the winner (-1: none)

  explicit ThreePlayerNim(const engine::Config& config) : id_(config.task()) {
    config.only({});
  }
  std::string id() const { return id_; }
  int obs_dim() const { return 4; }
  int num_actions() const { return 3; }
  int64_t max_steps() const { return 20; }
  int physical_dim() const { return 2; }
  int num_players() const { return 3; }
  int extras_dim() const { return 4; }
  std::vector<std::string> extras_names() const {
    return {"player_to_move", "reward_player_0", "reward_player_1", "reward_player_2"};
  }

  void reset(double* s, uint64_t& rng) const {
    s[0] = 6 + std::floor(engine::uniform(rng, 0.0, 6.0));
    s[1] = 0;
    s[2] = -1;
  }
  bool legal(const double* s, int32_t action) const { return action + 1 <= s[0]; }
  void step(double* s, const Action* action, engine::Step& out) const {
    const double mover = s[1];
    s[0] -= *action + 1;
    s[1] = std::fmod(mover + 1, 3.0);
    out.terminated = s[0] == 0;
    if (out.terminated) s[2] = mover;
    out.reward = out.terminated ? 1.0 : 0.0;  // the mover's
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    obs[0] = static_cast<T>(s[0] / 12);
    for (int p = 0; p < 3; ++p) obs[1 + p] = static_cast<T>(s[1] == p);
  }
  void extras(const double* s, float* out) const {
    const bool over = s[2] >= 0;
    out[0] = over ? -1.0f : static_cast<float>(s[1]);
    for (int p = 0; p < 3; ++p) out[1 + p] = !over ? 0.0f : (s[2] == p ? 1.0f : -0.5f);
  }
  bool valid(const double* s) const {
    return s[0] >= 1 && s[0] <= 11 && s[0] == std::floor(s[0]) &&
           (s[1] == 0 || s[1] == 1 || s[1] == 2) && s[2] == -1;
  }
  void physical(const double* s, double* physics) const { physics[0] = s[0], physics[1] = s[1]; }
  void set_physical(double* s, const double* physics) const {
    s[0] = physics[0], s[1] = physics[1], s[2] = -1;
  }

 private:
  std::string id_;
};

}  // namespace nim3
