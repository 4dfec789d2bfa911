// Hex on an 11x11 board, OpenSpiel's "hex" with its defaults (no swap rule): player 0 (black)
// moves first and joins the top row to the bottom row, player 1 (white) the left column to the
// right column; action 11 * row + column (row 0 the top row) places a stone on an empty cell.
// Cell (r, c) touches (r-1, c), (r-1, c+1), (r, c+1), (r+1, c), (r+1, c-1) and (r, c-1). A
// game cannot be drawn.
//
// Bitboard: bit 11 * row + column, the action's own number, in 128 bits.
#pragma once
#include <cstdint>

#include "board_game.h"

namespace metagraph::games {

// Row r and column c of an 11x11 board.
constexpr uint128 hex_row(int r) { return ((uint128{1} << 11) - 1) << (11 * r); }
constexpr uint128 hex_column(int c) {
  uint128 out = 0;
  for (int r = 0; r < 11; ++r) out |= uint128{1} << (11 * r + c);
  return out;
}

struct Hex {
  using Bits = uint128;
  static constexpr int kRows = 11, kCols = 11, kNumActions = kRows * kCols;
  static constexpr int kPlanes = 3;  // own, opponent, ones when player 1 (white) is to move
  static constexpr int64_t kMaxSteps = 128;  // a game has at most 121 moves

  static constexpr Bits kBoard = (Bits{1} << kNumActions) - 1;
  static constexpr Bits kNotFirstColumn = kBoard & ~hex_column(0);
  static constexpr Bits kNotLastColumn = kBoard & ~hex_column(kCols - 1);

  static constexpr int bit(int r, int c) { return r * kCols + c; }

  static void initial(Bits& first, Bits& second) { first = second = 0; }

  // The cells next to any of g.
  static Bits neighbours(Bits g) {
    return ((g >> kCols) | ((g >> (kCols - 1)) & kNotFirstColumn) |
            ((g << 1) & kNotFirstColumn) | (g << kCols) |
            ((g << (kCols - 1)) & kNotLastColumn) | ((g >> 1) & kNotLastColumn)) & kBoard;
  }

  // The stones of `own` joined to `seed` through `own`.
  static Bits group(Bits seed, Bits own) {
    Bits g = seed & own;
    for (;;) {
      const Bits next = (g | neighbours(g)) & own;
      if (next == g) return g;
      g = next;
    }
  }

  // Whether `player`'s stones in g touch both of that player's edges.
  static bool joins(Bits g, int player) {
    return player == 0 ? (g & hex_row(0)) && (g & hex_row(kRows - 1))
                       : (g & hex_column(0)) && (g & hex_column(kCols - 1));
  }

  static bool legal(Bits own, Bits opponent, int action, int /*player*/) {
    return (((own | opponent) >> action) & 1) == 0;
  }

  static uint128 legal_actions(Bits own, Bits opponent, int /*player*/) {
    return ~(own | opponent) & kBoard;
  }

  static Result play(Bits& own, Bits& /*opponent*/, int action, int player) {
    const Bits stone = Bits{1} << action;
    own |= stone;
    return joins(group(stone, own), player) ? Result::kWin : Result::kOngoing;
  }

  // Player 0 has as many stones as player 1, or one more when player 1 is to move.
  static bool consistent(Bits first, Bits second, int to_move) {
    return popcount(first) - popcount(second) == to_move;
  }

  // How a position stands for player 0.
  static Result outcome(Bits first, Bits second) {
    if (joins(group(first & hex_row(0), first), 0)) return Result::kWin;
    if (joins(group(second & hex_column(0), second), 1)) return Result::kLoss;
    return Result::kOngoing;
  }
};

}  // namespace metagraph::games
