// A test task for the engine's shaped, bool observations: a dot walking on a 3x4 board,
// observed as bool planes [3, 4, 2] (the dot; the cells it has visited), as a user writes a
// pixel-like task. Action 0 moves right, 1 down (wrapping); an episode ends when every cell
// has been visited.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace dots {

namespace engine = metagraph::engine;

class Dots {
 public:
  using Action = int32_t;
  using Observation = bool;  // planes of 0 and 1
  static constexpr int kRows = 3, kColumns = 4, kCells = kRows * kColumns;
  static constexpr int kStateWords = 1 + kCells;  // the dot's cell, then each cell visited

  explicit Dots(const engine::Config& config) : id_(config.task()) { config.only({}); }
  std::string id() const { return id_; }
  int obs_dim() const { return kCells * 2; }
  std::vector<int64_t> obs_shape() const { return {kRows, kColumns, 2}; }
  int num_actions() const { return 2; }
  int64_t max_steps() const { return 50; }
  int physical_dim() const { return kStateWords; }

  void reset(double* s, uint64_t& rng) const {
    for (int c = 0; c < kCells; ++c) s[1 + c] = 0;
    s[0] = std::floor(engine::uniform(rng, 0.0, kCells));
    s[1 + static_cast<int>(s[0])] = 1;
  }
  void step(double* s, const Action* action, engine::Step& out) const {
    const int cell = static_cast<int>(s[0]);
    const int row = cell / kColumns, column = cell % kColumns;
    const int next = *action == 0 ? row * kColumns + (column + 1) % kColumns
                                  : ((row + 1) % kRows) * kColumns + column;
    out.reward = s[1 + next] == 0 ? 1.0 : 0.0;  // a new cell
    s[0] = next;
    s[1 + next] = 1;
    int visited = 0;
    for (int c = 0; c < kCells; ++c) visited += s[1 + c] == 1;
    out.terminated = visited == kCells;
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    for (int c = 0; c < kCells; ++c) {
      obs[2 * c] = static_cast<T>(c == static_cast<int>(s[0]));
      obs[2 * c + 1] = static_cast<T>(s[1 + c] == 1);
    }
  }
  bool valid(const double* s) const {
    if (!(s[0] >= 0 && s[0] < kCells && s[0] == std::floor(s[0]))) return false;
    for (int c = 0; c < kCells; ++c)
      if (s[1 + c] != 0 && s[1 + c] != 1) return false;
    return s[1 + static_cast<int>(s[0])] == 1;
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k < kStateWords; ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k < kStateWords; ++k) s[k] = physics[k];
  }

 private:
  std::string id_;
};

}  // namespace dots
