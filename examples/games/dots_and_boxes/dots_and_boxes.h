// Dots and Boxes with OpenSpiel's rules ("dots_and_boxes(num_rows=R,num_cols=C)"), a
// two-player game written outside the library in one header where a player may move again:
// whoever completes a box (or two) with a line draws the next line too. The player to move
// is the task's to report (its "player_to_move" extra), so self-play, the search, AlphaZero's
// value targets, PPO's advantages and path reweighting's quality follow it, never the
// parity of the move. Built and registered by dots_and_boxes_env.py.
//
// Rules. A board of R x C boxes between (R + 1) x (C + 1) dots; the players take turns
// drawing a line between two neighbouring dots. A line that completes a box gives that box
// to its player, who then moves again; otherwise the other player moves. When every line is
// drawn, the player with more boxes wins (+1, the other -1; 0 for equal counts).
//
// Actions: OpenSpiel's numbering. First the horizontal lines, (R + 1) rows of C:
// row * C + column; then the vertical lines, R rows of C + 1: (R + 1) * C + row * (C + 1) +
// column. Row 0 is the top.
//
// State: each line (0 or 1), each box's owner (-1 none, else the player), the player to move
// and the outcome (0 going on, 1 player 0 won, 2 player 1 won, 3 a draw).
// Observations: bool planes [2R + 1, 2C + 1, 3] over the grid of dots, lines and boxes
// (cell (2r, 2c + 1) the horizontal line (r, c), (2r + 1, 2c) the vertical line (r, c),
// (2r + 1, 2c + 1) the box (r, c)): the lines drawn, the boxes of the player to move, the
// boxes of the opponent.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace dots_and_boxes {

namespace engine = metagraph::engine;

template <int R, int C>
class DotsAndBoxes : public engine::TwoPlayerGame {
 public:
  static_assert(R >= 1 && C >= 1 && R * C <= 25, "1 to 25 boxes");
  using Action = int32_t;
  using Observation = bool;
  static constexpr int kHorizontal = (R + 1) * C, kLines = kHorizontal + R * (C + 1);
  static constexpr int kBoxes = R * C, kGridRows = 2 * R + 1, kGridColumns = 2 * C + 1;
  static constexpr int kBox = kLines, kToMove = kLines + kBoxes, kOutcome = kToMove + 1;
  static constexpr int kStateWords = kOutcome + 1;  // lines, boxes, player to move, outcome
  static constexpr bool kStepKeepsValid = true;  // exact rules: a step keeps a position one

  explicit DotsAndBoxes(const engine::Config& config) : id_(config.task()) {
    config.only({});
  }
  std::string id() const { return id_; }
  int obs_dim() const { return kGridRows * kGridColumns * 3; }
  std::vector<int64_t> obs_shape() const { return {kGridRows, kGridColumns, 3}; }
  int num_actions() const { return kLines; }
  int64_t max_steps() const { return kLines + 1; }  // beyond every game: kLines moves
  int physical_dim() const { return kOutcome; }  // lines, boxes, player to move

  void reset(double* s, uint64_t& /*one first position*/) const {
    for (int k = 0; k < kLines; ++k) s[k] = 0;
    for (int b = 0; b < kBoxes; ++b) s[kBox + b] = -1;
    s[kToMove] = 0;
    s[kOutcome] = 0;
  }

  bool legal(const double* s, int32_t action) const {
    return s[kOutcome] == 0 && action >= 0 && action < kLines && s[action] == 0;
  }

  void step(double* s, const Action* action, engine::Step& out) const {
    const int mover = static_cast<int>(s[kToMove]);
    s[*action] = 1;
    bool completed = false;
    int boxes[2];
    const int touching = boxes_of(*action, boxes);
    for (int k = 0; k < touching; ++k)
      if (closed(s, boxes[k])) {
        s[kBox + boxes[k]] = mover;
        completed = true;
      }
    if (!completed) s[kToMove] = 1 - mover;
    int drawn = 0;
    for (int k = 0; k < kLines; ++k) drawn += s[k] == 1;
    if (drawn < kLines) return;
    int mine = 0, theirs = 0;
    for (int b = 0; b < kBoxes; ++b) (s[kBox + b] == mover ? mine : theirs) += 1;
    s[kOutcome] = mine == theirs ? 3 : (mine > theirs ? 1 + mover : 2 - mover);
    out.reward = mine == theirs ? 0.0 : (mine > theirs ? 1.0 : -1.0);
    out.terminated = true;
  }

  template <class T>
  void observe(const double* s, T* obs) const {
    const int me = static_cast<int>(s[kToMove]);
    for (int k = 0; k < obs_dim(); ++k) obs[k] = static_cast<T>(0);
    for (int r = 0; r <= R; ++r)
      for (int c = 0; c < C; ++c) obs[3 * cell(2 * r, 2 * c + 1)] = static_cast<T>(
          s[r * C + c] == 1);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c <= C; ++c) obs[3 * cell(2 * r + 1, 2 * c)] = static_cast<T>(
          s[kHorizontal + r * (C + 1) + c] == 1);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        const double owner = s[kBox + r * C + c];
        const int at = 3 * cell(2 * r + 1, 2 * c + 1);
        obs[at + 1] = static_cast<T>(owner == me);
        obs[at + 2] = static_cast<T>(owner == 1 - me);
      }
  }
  void extras(const double* s, float* out) const {
    const double outcome = s[kOutcome];
    report(out, outcome == 0 ? static_cast<int>(s[kToMove]) : -1,
           outcome == 1 ? 1.0f : (outcome == 2 ? -1.0f : 0.0f));
  }

  // A position of a game going on: lines of 0 or 1, not all drawn; a box owned (by 0 or 1)
  // exactly when its four lines are drawn; a player to move of 0 or 1.
  bool valid(const double* s) const { return invalid_reason(s).empty(); }
  std::string invalid_reason(const double* s) const {
    int drawn = 0;
    for (int k = 0; k < kLines; ++k) {
      if (s[k] != 0 && s[k] != 1) return "has a line that is not 0 or 1";
      drawn += s[k] == 1;
    }
    if (drawn == kLines) return "has every line drawn (the game is over)";
    for (int b = 0; b < kBoxes; ++b) {
      const double owner = s[kBox + b];
      if (owner != -1 && owner != 0 && owner != 1) return "has a box owner not -1, 0 or 1";
      if ((owner != -1) != closed(s, b))
        return "has box " + std::to_string(b) +
               (owner == -1 ? " closed but unowned" : " owned but not closed");
    }
    if (s[kToMove] != 0 && s[kToMove] != 1) return "has a player to move that is not 0 or 1";
    if (s[kOutcome] != 0) return "is a game that is over";
    return "";
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k < kOutcome; ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k < kOutcome; ++k) s[k] = physics[k];
    s[kOutcome] = 0;
  }

 private:
  static int cell(int row, int column) { return row * kGridColumns + column; }
  // The boxes (at most two) that line `line` borders; returns how many.
  static int boxes_of(int line, int* boxes) {
    int count = 0;
    if (line < kHorizontal) {
      const int r = line / C, c = line % C;
      if (r > 0) boxes[count++] = (r - 1) * C + c;
      if (r < R) boxes[count++] = r * C + c;
    } else {
      const int r = (line - kHorizontal) / (C + 1), c = (line - kHorizontal) % (C + 1);
      if (c > 0) boxes[count++] = r * C + c - 1;
      if (c < C) boxes[count++] = r * C + c;
    }
    return count;
  }
  // Whether box b's four lines are drawn.
  static bool closed(const double* s, int b) {
    const int r = b / C, c = b % C;
    return s[r * C + c] == 1 && s[(r + 1) * C + c] == 1 &&
           s[kHorizontal + r * (C + 1) + c] == 1 && s[kHorizontal + r * (C + 1) + c + 1] == 1;
  }
  std::string id_;
};

using DotsAndBoxes2x2 = DotsAndBoxes<2, 2>;
using DotsAndBoxes3x3 = DotsAndBoxes<3, 3>;

}  // namespace dots_and_boxes
