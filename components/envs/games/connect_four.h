// Connect Four on a 6x7 board, OpenSpiel's "connect_four": player 0 moves first; an action is
// a column (0-6, left to right) and drops a stone to the lowest empty cell of it (legal while
// the column has one); four in a row, column or diagonal wins, a full board without one is a
// draw.
//
// Bitboard: bit 7 * column + height (height 0 the bottom row); the seventh bit of each column
// stays empty, so that shifting a line never wraps into the next column.
#pragma once
#include <cstdint>

#include "board_game.h"

namespace metagraph::games {

// `bits` repeated in each column of 7 bits.
constexpr uint64_t every_connect_four_column(uint64_t bits) {
  uint64_t out = 0;
  for (int c = 0; c < 7; ++c) out |= bits << (7 * c);
  return out;
}

// The multiplier that moves bit 7c to bit 42 + c (c = 0..6): the sum of 2^(42 - 6c).
constexpr uint64_t every_connect_four_column_gather() {
  uint64_t out = 0;
  for (int c = 0; c < 7; ++c) out |= uint64_t{1} << (42 - 6 * c);
  return out;
}

struct ConnectFour {
  using Bits = uint64_t;
  static constexpr int kRows = 6, kCols = 7, kPlanes = 2, kNumActions = 7;
  static constexpr int64_t kMaxSteps = 64;  // a game has at most 42 moves
  static constexpr int kHeight = kRows + 1;  // bits per column
  static constexpr Bits kColumn = (Bits{1} << kRows) - 1;
  static constexpr Bits kBoard = every_connect_four_column(kColumn);
  static constexpr Bits kTop = every_connect_four_column(Bits{1} << (kRows - 1));

  // Row 0 is the top row (as the observation and the physical state have it).
  static constexpr int bit(int row, int col) { return col * kHeight + (kRows - 1 - row); }

  static void initial(Bits& first, Bits& second) { first = second = 0; }

  // The stones renumbered row by row (bit 7 * row + column, row 0 the top row), the
  // observation's order: each row's seven bits, one per column 7 bits apart, gathered by one
  // multiplication (bit 7c lands on bit 42 + c; no two partial products share a bit).
  static Bits row_major(Bits b) {
    constexpr Bits kBottoms = every_connect_four_column(1);
    constexpr Bits kGather = every_connect_four_column_gather();
    Bits out = 0;
    for (int row = 0; row < kRows; ++row)
      out |= ((((b >> (kRows - 1 - row)) & kBottoms) * kGather) >> 42 & 127) << (7 * row);
    return out;
  }

  static bool legal(Bits own, Bits opponent, int col, int /*player*/) {
    return (((own | opponent) >> (col * kHeight + kRows - 1)) & 1) == 0;
  }

  // The columns whose top cell is empty, bit c for column c (gathered as row_major does).
  static uint128 legal_actions(Bits own, Bits opponent, int /*player*/) {
    constexpr Bits kBottoms = every_connect_four_column(1);
    const Bits open_tops = (~(own | opponent) >> (kRows - 1)) & kBottoms;
    return ((open_tops * every_connect_four_column_gather()) >> 42) & 127;
  }

  static Result play(Bits& own, Bits& opponent, int col, int /*player*/) {
    const Bits column = ((own | opponent) >> (col * kHeight)) & kColumn;
    own |= (column + 1) << (col * kHeight);  // the column's lowest empty cell
    if (four_in_a_row(own)) return Result::kWin;
    if (((own | opponent) & kTop) == kTop) return Result::kDraw;
    return Result::kOngoing;
  }

  static bool four_in_a_row(Bits b) {
    for (int shift : {1, kHeight - 1, kHeight, kHeight + 1}) {  // |, \, -, /
      const Bits pairs = b & (b >> shift);
      if (pairs & (pairs >> (2 * shift))) return true;
    }
    return false;
  }

  // Stones rest on stones, and player 0 has as many as player 1, or one more when player 1
  // is to move.
  static bool consistent(Bits first, Bits second, int to_move) {
    const Bits both = first | second;
    for (int c = 0; c < kCols; ++c) {
      const Bits column = (both >> (c * kHeight)) & kColumn;
      if (column & (column + 1)) return false;
    }
    return popcount(first) - popcount(second) == to_move;
  }

  // How a position stands for player 0.
  static Result outcome(Bits first, Bits second) {
    if (four_in_a_row(first)) return Result::kWin;
    if (four_in_a_row(second)) return Result::kLoss;
    if (((first | second) & kTop) == kTop) return Result::kDraw;
    return Result::kOngoing;
  }
};

}  // namespace metagraph::games
