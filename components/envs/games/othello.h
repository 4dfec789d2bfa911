// Othello on an 8x8 board, OpenSpiel's "othello": player 0 (black) moves first from the four
// centre stones (black on d5 and e4, white on d4 and e5); action 8 * row + column (row 0 the
// top row) places a stone that must outflank at least one line of the opponent's stones, which
// turn over; action 64 passes, legal only when the player has no other move. The game ends when
// neither player can place a stone; more stones wins, equal counts draw.
//
// Bitboard: bit 8 * row + column, the action's own number.
#pragma once
#include <cstdint>

#include "board_game.h"

namespace metagraph::games {

struct Othello {
  using Bits = uint64_t;
  static constexpr int kRows = 8, kCols = 8, kPlanes = 2, kNumActions = 65, kPass = 64;
  // Each pass is followed by a placed stone (a player who passes left the other a move), and
  // 60 stones fill the board: at most 120 moves.
  static constexpr int64_t kMaxSteps = 128;
  static constexpr Bits kBoard = ~Bits{0};
  static constexpr Bits kCentre = (Bits{1} << 27) | (Bits{1} << 28) | (Bits{1} << 35) |
                                  (Bits{1} << 36);
  static constexpr Bits kNotFirstColumn = 0xfefefefefefefefeULL;
  static constexpr Bits kNotLastColumn = 0x7f7f7f7f7f7f7f7fULL;

  static constexpr int bit(int row, int col) { return row * kCols + col; }

  static void initial(Bits& first, Bits& second) {
    first = (Bits{1} << bit(3, 4)) | (Bits{1} << bit(4, 3));
    second = (Bits{1} << bit(3, 3)) | (Bits{1} << bit(4, 4));
  }

  // The stones b moved one cell in direction d (0-7: E, W, S, N, SE, SW, NE, NW), those that
  // leave the board dropped.
  static Bits shift(Bits b, int d) {
    switch (d) {
      case 0: return (b << 1) & kNotFirstColumn;
      case 1: return (b >> 1) & kNotLastColumn;
      case 2: return b << 8;
      case 3: return b >> 8;
      case 4: return (b << 9) & kNotFirstColumn;
      case 5: return (b << 7) & kNotLastColumn;
      case 6: return (b >> 7) & kNotFirstColumn;
      default: return (b >> 9) & kNotLastColumn;
    }
  }

  // Every empty cell where `own` outflanks some of `opponent`'s stones.
  static Bits moves(Bits own, Bits opponent) {
    const Bits empty = ~(own | opponent);
    Bits out = 0;
    for (int d = 0; d < 8; ++d) {
      Bits run = shift(own, d) & opponent;
      for (int k = 0; k < 5; ++k) run |= shift(run, d) & opponent;
      out |= shift(run, d) & empty;
    }
    return out;
  }

  // The opponent's stones that a stone of `own` at `square` turns over.
  static Bits flips(Bits own, Bits opponent, int square) {
    Bits out = 0;
    for (int d = 0; d < 8; ++d) {
      Bits line = 0;
      Bits x = shift(Bits{1} << square, d);
      while (x & opponent) {
        line |= x;
        x = shift(x, d);
      }
      if (x & own) out |= line;
    }
    return out;
  }

  static bool legal(Bits own, Bits opponent, int action, int /*player*/) {
    if (action == kPass) return moves(own, opponent) == 0;
    return (((own | opponent) >> action) & 1) == 0 && flips(own, opponent, action) != 0;
  }

  // The squares that outflank, or the pass alone when there are none.
  static uint128 legal_actions(Bits own, Bits opponent, int /*player*/) {
    const Bits m = moves(own, opponent);
    return m != 0 ? uint128{m} : uint128{1} << kPass;
  }

  static Result play(Bits& own, Bits& opponent, int action, int /*player*/) {
    if (action == kPass) return Result::kOngoing;  // the other player has a move
    const Bits turned = flips(own, opponent, action);
    own |= turned | (Bits{1} << action);
    opponent &= ~turned;
    return outcome(own, opponent);
  }

  // The centre stones never leave the board.
  static bool consistent(Bits first, Bits second, int /*to_move*/) {
    return ((first | second) & kCentre) == kCentre;
  }

  // The disc margin for the player owning `first` (Othello's score): reported as an extra.
  static int margin(Bits first, Bits second) { return popcount(first) - popcount(second); }

  // How a position stands for the player owning `first`.
  static Result outcome(Bits first, Bits second) {
    if (moves(first, second) != 0 || moves(second, first) != 0) return Result::kOngoing;
    const int a = popcount(first), b = popcount(second);
    return a > b ? Result::kWin : (a < b ? Result::kLoss : Result::kDraw);
  }
};

}  // namespace metagraph::games
