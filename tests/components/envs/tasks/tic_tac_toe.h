// A user's game in one header: tic-tac-toe with OpenSpiel's rules ("tic_tac_toe": player 0
// places x first, action = 3 * row + column, three in a row wins, a full board is a draw). It
// declares what makes a task a game (engine/task.h): num_players(), legal actions, and extras
// named for the player to move and each player's reward; nothing else in the library knows it.
//
// State: the nine cells (-1 empty, else the player whose mark it is), the player to move, and
// the outcome (0 going on, 1 player 0 won, 2 player 1 won, 3 drawn). Observations: bool planes
// [3, 3, 2], the mover's marks then the opponent's.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace ttt {

namespace engine = metagraph::engine;

class TicTacToe {
 public:
  using Action = int32_t;
  using Observation = bool;
  static constexpr int kCells = 9;
  static constexpr int kStateWords = kCells + 2;  // cells, player to move, outcome
  static constexpr int kToMove = kCells, kOutcome = kCells + 1;

  // `margin=True`: a fourth extra, "margin_player_0", a game's own signal beside the protocol
  // (as Othello's disc margin): at the end of a won game, the winner's margin is one plus the
  // cells left empty (a quicker win counts more), signed for player 0; 0 otherwise.
  // `shared=True`: not zero-sum, player 1's reward is player 0's (a win for both, a loss
  // for both): a game the self-play agents refuse. `nan_reward=True`: a won game's rewards
  // are NaN (a bug in a user's task), which every door passes on and the learners refuse.
  // `max_steps=N`: the game's declared length. `stray_mover=True`: the player to move it
  // reports is 5 (out of range), which the self-play agents refuse. `stuck=True`: from the
  // third move on no move is legal though the game goes on (a bug: a game that goes on must
  // offer a move), which every door and the self-play agents refuse by name. `bad_draw=True`:
  // its random_legal draws an occupied cell (99 on an empty board), which the playouts refuse.
  explicit TicTacToe(const engine::Config& config)
      : id_(config.task()), margin_(config.has("margin") && config.flag("margin")),
        shared_(config.has("shared") && config.flag("shared")),
        nan_(config.has("nan_reward") && config.flag("nan_reward")),
        max_steps_(config.has("max_steps") ? config.integer("max_steps", 1, int64_t{1} << 50)
                                           : 100),
        stray_(config.has("stray_mover") && config.flag("stray_mover")),
        stuck_(config.has("stuck") && config.flag("stuck")),
        bad_draw_(config.has("bad_draw") && config.flag("bad_draw")) {
    config.only({"margin", "shared", "nan_reward", "max_steps", "stray_mover", "stuck",
                 "bad_draw"});
  }
  std::string id() const { return id_; }
  int obs_dim() const { return kCells * 2; }
  std::vector<int64_t> obs_shape() const { return {3, 3, 2}; }
  int num_actions() const { return kCells; }
  // beyond every game's length; `max_steps=N` declares another (a game without an end in
  // reach, which registration refuses)
  int64_t max_steps() const { return max_steps_; }
  int physical_dim() const { return kCells + 1; }

  int num_players() const { return 2; }
  int extras_dim() const { return margin_ ? 4 : 3; }
  std::vector<std::string> extras_names() const {
    std::vector<std::string> names{"player_to_move", "reward_player_0", "reward_player_1"};
    if (margin_) names.push_back("margin_player_0");
    return names;
  }

  void reset(double* s, uint64_t& /*one first position*/) const {
    for (int c = 0; c < kCells; ++c) s[c] = -1;
    s[kToMove] = 0;
    s[kOutcome] = 0;
  }
  bool legal(const double* s, int32_t action) const {
    if (stuck_ && kCells - empty(s) >= 2) return false;
    return s[kOutcome] == 0 && action >= 0 && action < kCells && s[action] == -1;
  }
  // A uniformly random legal move (the engine's playouts use it): the k-th empty cell.
  int32_t random_legal(const double* s, uint64_t& rng) const {
    if (bad_draw_) {
      for (int c = 0; c < kCells; ++c)
        if (s[c] != -1) return c;
      return 99;
    }
    const int free = empty(s);
    if (free == 0 || !legal(s, first_empty(s))) return -1;
    uint32_t k = engine::below(rng, static_cast<uint32_t>(free));
    for (int c = 0;; ++c)
      if (s[c] == -1 && k-- == 0) return c;
  }
  void step(double* s, const Action* action, engine::Step& out) const {
    const int mover = static_cast<int>(s[kToMove]);
    s[*action] = mover;
    s[kToMove] = 1 - mover;
    if (wins(s, mover)) {
      s[kOutcome] = 1 + mover;
      out.reward = nan_ ? std::numeric_limits<double>::quiet_NaN() : 1.0;
      out.terminated = true;
    } else if (full(s)) {
      s[kOutcome] = 3;
      out.terminated = true;
    }
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    const int me = static_cast<int>(s[kToMove]);
    for (int c = 0; c < kCells; ++c) {
      obs[2 * c] = static_cast<T>(s[c] == me);
      obs[2 * c + 1] = static_cast<T>(s[c] == 1 - me);
    }
  }
  void extras(const double* s, float* out) const {
    const double outcome = s[kOutcome];
    float first = outcome == 1 ? 1.0f : (outcome == 2 ? -1.0f : 0.0f);
    if (nan_ && first != 0) first = std::numeric_limits<float>::quiet_NaN();
    out[0] = outcome == 0 ? static_cast<float>(stray_ ? 5 : s[kToMove]) : -1.0f;
    out[1] = first;
    out[2] = shared_ ? first : 0.0f - first;  // (not -first: no -0)
    if (margin_) {
      out[3] = first * static_cast<float>(1 + empty(s));
    }
  }
  // A position of a game going on: marks of 0 and 1 only, x's count equal to o's or one
  // more, the player to move the one those counts say, nobody with three in a row, a free cell.
  bool valid(const double* s) const {
    int counts[2] = {0, 0};
    for (int c = 0; c < kCells; ++c) {
      if (s[c] != -1 && s[c] != 0 && s[c] != 1) return false;
      if (s[c] >= 0) ++counts[static_cast<int>(s[c])];
    }
    const int to_move = counts[0] == counts[1] ? 0 : 1;
    if (counts[0] - counts[1] != to_move || s[kToMove] != to_move || s[kOutcome] != 0)
      return false;
    return !wins(s, 0) && !wins(s, 1) && !full(s);
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k <= kCells; ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k <= kCells; ++k) s[k] = physics[k];
    s[kOutcome] = 0;
  }

 private:
  static bool wins(const double* s, int player) {
    static constexpr int kLines[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6},
                                         {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};
    for (const auto& line : kLines)
      if (s[line[0]] == player && s[line[1]] == player && s[line[2]] == player) return true;
    return false;
  }
  static bool full(const double* s) { return empty(s) == 0; }
  static int empty(const double* s) {
    int count = 0;
    for (int c = 0; c < kCells; ++c) count += s[c] == -1;
    return count;
  }
  static int first_empty(const double* s) {
    int c = 0;
    while (c < kCells - 1 && s[c] != -1) ++c;
    return c;
  }
  std::string id_;
  bool margin_, shared_, nan_;
  int64_t max_steps_;
  bool stray_, stuck_, bad_draw_;
};

}  // namespace ttt
