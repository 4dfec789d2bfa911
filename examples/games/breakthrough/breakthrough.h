// Breakthrough on a 6x6 board with OpenSpiel's rules ("breakthrough(rows=6,columns=6)"), a
// two-player game written outside the library in one header: it declares what makes a task a
// game (metagraph's engine/task.h: num_players(), legal actions, extras named for the player
// to move and each player's reward, the last two from engine::TwoPlayerGame), and self-play,
// AlphaZero, path reweighting, `evaluate --opponent` and `play` follow from that. Built and
// registered by breakthrough_env.py.
//
// Rules. Player 0 (black) starts on the top two rows and moves down; player 1 (white) starts
// on the bottom two rows and moves up; black moves first. A piece steps one row forward,
// straight or diagonally, to an empty cell, or captures an opponent's piece diagonally
// forward (never straight). Reaching the far row, or taking the opponent's last piece, wins.
// Every piece only moves forward, so a game ends within 109 moves and never in a draw.
//
// Actions: OpenSpiel's numbering, ((row * 6 + column) * 6 + direction) * 2 + capture, 432 in
// all: the piece's cell (row 0 the top row), the direction (0-2: down-left, down, down-right,
// black's; 3-5: up-left, up, up-right, white's) and 1 where the move takes a piece.
//
// State: the 36 cells row-major from the top row (-1 empty, else the player whose piece it
// is), the player to move, and the outcome (0 going on, 1 player 0 won, 2 player 1 won).
// Observations: bool planes [6, 6, 3]: the pieces of the player to move, the opponent's, and
// all ones when the player to move is player 1 (the board is not turned: the third plane
// says which way is forward).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace breakthrough {

namespace engine = metagraph::engine;

class Breakthrough : public engine::TwoPlayerGame {
 public:
  using Action = int32_t;
  using Observation = bool;
  static constexpr int kRows = 6, kColumns = 6, kCells = kRows * kColumns, kDirections = 6;
  static constexpr int kNumActions = kCells * kDirections * 2;
  static constexpr int kStateWords = kCells + 2;  // cells, player to move, outcome
  static constexpr int kToMove = kCells, kOutcome = kCells + 1;
  static constexpr bool kStepKeepsValid = true;  // exact rules: a step keeps a position one

  explicit Breakthrough(const engine::Config& config) : id_(config.task()) {
    config.only({});
  }
  std::string id() const { return id_; }
  int obs_dim() const { return kCells * 3; }
  std::vector<int64_t> obs_shape() const { return {kRows, kColumns, 3}; }
  int num_actions() const { return kNumActions; }
  int64_t max_steps() const { return 110; }  // beyond every game (OpenSpiel: at most 109)
  int physical_dim() const { return kCells + 1; }

  void reset(double* s, uint64_t& /*one first position*/) const {
    for (int cell = 0; cell < kCells; ++cell) {
      const int row = cell / kColumns;
      s[cell] = row < 2 ? 0 : (row >= kRows - 2 ? 1 : -1);
    }
    s[kToMove] = 0;
    s[kOutcome] = 0;
  }

  bool legal(const double* s, int32_t action) const {
    if (s[kOutcome] != 0 || action < 0 || action >= kNumActions) return false;
    const int capture = action % 2, direction = action / 2 % kDirections;
    const int cell = action / 2 / kDirections, mover = static_cast<int>(s[kToMove]);
    if (s[cell] != mover || direction / 3 != mover) return false;
    const int target = target_of(cell, direction);
    if (target < 0) return false;
    if (direction % 3 == 1) return s[target] == -1 && !capture;  // straight: never a capture
    return capture ? s[target] == 1 - mover : s[target] == -1;
  }
  // Every action's legality in one pass over the mover's moves.
  void legal_mask(const double* s, bool* mask) const {
    for (int k = 0; k < kNumActions; ++k) mask[k] = false;
    if (s[kOutcome] == 0) for_each_move(s, [&](int32_t action) { mask[action] = true; });
  }
  // A legal action drawn uniformly, for random playouts (a search's rollouts): the mover's
  // moves listed (at most 12 pieces x 3) instead of the 432-wide mask.
  int32_t random_legal(const double* s, uint64_t& rng) const {
    int32_t moves[2 * kColumns * 3];
    uint32_t count = 0;
    for_each_move(s, [&](int32_t action) { moves[count++] = action; });
    return count == 0 ? -1 : moves[engine::below(rng, count)];
  }

  void step(double* s, const Action* action, engine::Step& out) const {
    const int direction = *action / 2 % kDirections, cell = *action / 2 / kDirections;
    const int mover = static_cast<int>(s[kToMove]), target = target_of(cell, direction);
    s[target] = mover;
    s[cell] = -1;
    s[kToMove] = 1 - mover;
    const int row = target / kColumns;
    if (row == (mover == 0 ? kRows - 1 : 0) || count(s, 1 - mover) == 0) {
      s[kOutcome] = 1 + mover;
      out.reward = 1.0;
      out.terminated = true;
    }
  }

  template <class T>
  void observe(const double* s, T* obs) const {
    const int me = static_cast<int>(s[kToMove]);
    for (int cell = 0; cell < kCells; ++cell) {
      obs[3 * cell] = static_cast<T>(s[cell] == me);
      obs[3 * cell + 1] = static_cast<T>(s[cell] == 1 - me);
      obs[3 * cell + 2] = static_cast<T>(me == 1);
    }
  }
  void extras(const double* s, float* out) const {
    const double outcome = s[kOutcome];
    report(out, outcome == 0 ? static_cast<int>(s[kToMove]) : -1,
           outcome == 1 ? 1.0f : (outcome == 2 ? -1.0f : 0.0f));
  }

  // A position of a game going on: pieces of 0 and 1 only, each side with 1 to 12 pieces,
  // none on its far row, a player to move of 0 or 1.
  bool valid(const double* s) const { return invalid_reason(s).empty(); }
  std::string invalid_reason(const double* s) const {
    for (int cell = 0; cell < kCells; ++cell)
      if (s[cell] != -1 && s[cell] != 0 && s[cell] != 1)
        return "has a cell that is not -1, 0 or 1";
    if (s[kToMove] != 0 && s[kToMove] != 1) return "has a player to move that is not 0 or 1";
    if (s[kOutcome] != 0) return "is a game that is over";
    for (int player = 0; player < 2; ++player) {
      const int pieces = count(s, player);
      if (pieces < 1 || pieces > 2 * kColumns)
        return "gives player " + std::to_string(player) + " " + std::to_string(pieces) +
               " pieces (1 to 12 in a game going on)";
    }
    for (int column = 0; column < kColumns; ++column)
      if (s[(kRows - 1) * kColumns + column] == 0 || s[column] == 1)
        return "has a piece on its far row (the game is over)";
    return "";
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k <= kCells; ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k <= kCells; ++k) s[k] = physics[k];
    s[kOutcome] = 0;
  }

 private:
  // Calls f(action) for every legal move of the player to move (of a game going on).
  template <class F>
  static void for_each_move(const double* s, F&& f) {
    const int mover = static_cast<int>(s[kToMove]);
    for (int cell = 0; cell < kCells; ++cell) {
      if (s[cell] != mover) continue;
      for (int direction = 3 * mover; direction < 3 * mover + 3; ++direction) {
        const int target = target_of(cell, direction);
        if (target < 0) continue;
        const int32_t action = (cell * kDirections + direction) * 2;
        if (s[target] == -1) f(action);
        else if (direction % 3 != 1 && s[target] == 1 - mover) f(action + 1);
      }
    }
  }
  // The cell a direction leads to from `cell`, or -1 off the board.
  static int target_of(int cell, int direction) {
    static constexpr int kRowStep[kDirections] = {1, 1, 1, -1, -1, -1};
    static constexpr int kColumnStep[kDirections] = {-1, 0, 1, -1, 0, 1};
    const int row = cell / kColumns + kRowStep[direction];
    const int column = cell % kColumns + kColumnStep[direction];
    if (row < 0 || row >= kRows || column < 0 || column >= kColumns) return -1;
    return row * kColumns + column;
  }
  static int count(const double* s, int player) {
    int pieces = 0;
    for (int cell = 0; cell < kCells; ++cell) pieces += s[cell] == player;
    return pieces;
  }
  std::string id_;
};

}  // namespace breakthrough
