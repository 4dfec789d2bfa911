// `BoardGame<Rules>`: a two-player, zero-sum, turn-based board game as a task of the engine
// (engine/task.h), from its rules on bitboards (connect_four.h, othello.h, hex.h). The rules say
// what a move does to the stones; this file says everything the engine needs around them: the
// state's words, whose turn it is, the legal-action mask, rewards, the observation planes,
// extras, the physical state and which states are valid.
//
// Conventions (docs/environments.md, "Board games"):
//   - Player 0 moves first. Each step is one move of the player to move; the players alternate
//     (a pass, where the rules have one, is a move).
//   - The reward a step returns is that of the player who moved: +1 for a win, -1 for a loss,
//     0 for a draw and for every move before the end. The game is zero-sum: the other player
//     gets the opposite. `terminated` is true at the game's end.
//   - Extras, 3 floats: [player to move after the step (-1 when the game ended), player 0's
//     reward, player 1's reward]; a 4th, "margin_player_0", for rules with a `margin` (player
//     0's stones minus player 1's: Othello's disc margin, what its score is).
//   - The observation is the board from the point of view of the player to move (at the end of
//     a game, the player who would have moved next): planes [rows, columns, planes] flattened
//     row-major, row 0 the top row; plane 0 the player's own stones, plane 1 the opponent's,
//     and, for a game whose two sides differ (Hex), plane 2 all ones when the player to move is
//     player 1.
//   - The physical state (float64): every cell, row-major from the top row, holding the index
//     of the player whose stone is there (0 or 1) or -1 for an empty cell, then the player to
//     move.
//
// State words: word 0 the header (a double: player to move + 2 * status), then player 0's
// stones, then player 1's (a bitboard each, Rules::Bits as integer bits in 1 or 2 words).
//
// A game's rules are a struct of static members, on bitboards (`own` the stones of the player
// to move, `opponent` the other's; `player` that player's index where the rules tell the
// sides apart):
//   using Bits (uint64_t or uint128); kRows, kCols, kPlanes (2, or 3 with the colour plane),
//   kNumActions, kMaxSteps; kBoard (the bits that are cells);
//   int bit(row, col)                       the cell's bit, row 0 the top row;
//   void initial(Bits& first, Bits& second) the first position (player 0 to move);
//   bool legal(own, opponent, action, player);
//   uint128 legal_actions(own, opponent, player)  bit k set where action k is legal;
//   Result play(Bits& own, Bits& opponent, action, player)   a legal move, for the mover;
//   bool consistent(first, second, to_move)  cheap checks of a position (every step runs them);
//   Result outcome(first, second)           how a position set from outside stands for
//                                           player 0 (kOngoing while the game goes on);
//   optional: int margin(first, second)     the stone margin for player 0, reported as the
//                                           extra "margin_player_0".
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace metagraph::games {

namespace engine = metagraph::engine;

__extension__ typedef unsigned __int128 uint128;

inline int popcount(uint64_t x) { return __builtin_popcountll(x); }

// Whether `Rules` has `margin(first, second)` (the stone margin for player 0).
template <typename Rules, typename = void>
struct HasMargin : std::false_type {};
template <typename Rules>
struct HasMargin<Rules, std::void_t<decltype(Rules::margin(std::declval<typename Rules::Bits>(),
                                                            std::declval<typename Rules::Bits>()))>>
    : std::true_type {};
inline int popcount(uint128 x) {
  return popcount(static_cast<uint64_t>(x)) + popcount(static_cast<uint64_t>(x >> 64));
}

// What a move did, for the player who made it.
enum class Result { kOngoing, kWin, kLoss, kDraw };

// The position of the k-th set bit of x (k from 0, fewer than popcount(x)).
inline int nth_bit(uint128 x, int k) {
  uint64_t w = static_cast<uint64_t>(x);
  int base = 0;
  if (const int low = popcount(w); k >= low) {
    k -= low;
    w = static_cast<uint64_t>(x >> 64);
    base = 64;
  }
  for (int width = 32; width > 0; width >>= 1) {  // halve the word around the bit
    const uint64_t half = w & ((uint64_t{1} << width) - 1);
    if (const int c = popcount(half); k >= c) {
      k -= c;
      w >>= width;
      base += width;
    } else {
      w = half;
    }
  }
  return base;
}

// out[k] = bit k of b, for k < count: eight cells at a time from a table of bytes.
template <class B>
inline void bits_to_bools(B b, int count, bool* out) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte k of a word is bit k");
  static constexpr auto kBytes = [] {
    std::array<uint64_t, 256> bytes{};
    for (int v = 0; v < 256; ++v)
      for (int j = 0; j < 8; ++j) bytes[v] |= static_cast<uint64_t>((v >> j) & 1) << (8 * j);
    return bytes;
  }();
  int k = 0;
  for (; k + 8 <= count; k += 8) std::memcpy(out + k, &kBytes[static_cast<uint8_t>(b >> k)], 8);
  for (; k < count; ++k) out[k] = (b >> k) & 1;
}

// Whether a game goes on, how it ended, or that a physical state given to it was no position
// of the game (its step is refused: `valid` is false).
enum Status : int { kPlaying = 0, kFirstWon = 1, kSecondWon = 2, kDrawn = 3, kMalformed = 4 };

template <class Rules>
class BoardGame {
 public:
  using Action = int32_t;
  using Bits = typename Rules::Bits;
  static constexpr int kBitsWords = sizeof(Bits) / sizeof(uint64_t);
  static constexpr int kStateWords = 1 + 2 * kBitsWords;
  static constexpr int kCells = Rules::kRows * Rules::kCols;
  static constexpr bool kStepKeepsValid = true;  // a legal move leaves a position of the game
  // Whether the rules count a stone margin (`Rules::margin`), reported as an extra.
  static constexpr bool kHasMargin = HasMargin<Rules>::value;

  explicit BoardGame(const engine::Config& config) : id_(config.task()) { config.only({}); }

  std::string id() const { return id_; }
  int obs_dim() const { return kCells * Rules::kPlanes; }
  int num_actions() const { return Rules::kNumActions; }
  int64_t max_steps() const { return Rules::kMaxSteps; }
  int physical_dim() const { return kCells + 1; }
  int extras_dim() const { return kHasMargin ? 4 : 3; }
  std::vector<std::string> extras_names() const {
    std::vector<std::string> names = {"player_to_move", "reward_player_0", "reward_player_1"};
    if (kHasMargin) names.push_back("margin_player_0");
    return names;
  }
  int num_players() const { return 2; }
  std::map<std::string, engine::Config::Value> info() const {
    return {{"rows", int64_t{Rules::kRows}}, {"columns", int64_t{Rules::kCols}},
            {"planes", int64_t{Rules::kPlanes}}};
  }

  void reset(double* s, uint64_t& /*rng: a game starts from one position*/) const {
    Position p;
    Rules::initial(p.stones[0], p.stones[1]);
    store(s, p);
  }

  bool legal(const double* s, int32_t action) const {
    const Position p = load(s);
    return p.status == kPlaying &&
           Rules::legal(p.stones[p.to_move], p.stones[1 - p.to_move], action, p.to_move);
  }

  void legal_mask(const double* s, bool* mask) const {
    const Position p = load(s);
    bits_to_bools(legal_actions(p), Rules::kNumActions, mask);
  }

  // A legal action drawn uniformly: the k-th set bit of the legal actions.
  int32_t random_legal(const double* s, uint64_t& rng) const {
    const uint128 legal = legal_actions(load(s));
    const int count = popcount(legal);
    if (count == 0) return -1;
    return nth_bit(legal, static_cast<int>(engine::below(rng, static_cast<uint32_t>(count))));
  }

  void step(double* s, const Action* action, engine::Step& out) const {
    Position p = load(s);
    const int mover = p.to_move;
    const Result result = Rules::play(p.stones[mover], p.stones[1 - mover], *action, mover);
    p.to_move = 1 - mover;
    p.status = status_of(result, mover);
    store(s, p);
    out.terminated = result != Result::kOngoing;
    out.reward = result == Result::kWin ? 1.0 : (result == Result::kLoss ? -1.0 : 0.0);
  }

  // Four cells at a time: their planes are an entry of a table indexed by the four cells'
  // own and opponent bits (and the player to move, for the colour plane).
  template <class T>
  void observe(const double* s, T* obs) const {
    constexpr int P = Rules::kPlanes;
    const Position p = load(s);
    const Bits own = row_major(p.stones[p.to_move]);
    const Bits opponent = row_major(p.stones[1 - p.to_move]);
    const auto& table = PlaneTable<T>::get().cells[p.to_move];
    auto entry = [&](int k) {
      return table[static_cast<unsigned>((own >> k) & 15) |
                   (static_cast<unsigned>((opponent >> k) & 15) << 4)];
    };
    int k = 0;
    for (; k + 4 <= kCells; k += 4) std::memcpy(obs + k * P, entry(k), sizeof(T) * 4 * P);
    if (k < kCells) std::memcpy(obs + k * P, entry(k), sizeof(T) * (kCells - k) * P);
  }

  void extras(const double* s, float* out) const {
    const Position p = load(s);
    const float first = p.status == kFirstWon ? 1.0f : (p.status == kSecondWon ? -1.0f : 0.0f);
    out[0] = p.status == kPlaying ? static_cast<float>(p.to_move) : -1.0f;
    out[1] = first;
    out[2] = -first;
    if constexpr (kHasMargin) out[3] = static_cast<float>(Rules::margin(p.stones[0], p.stones[1]));
  }

  // A position that reset and step can produce, checked cheaply (every step checks it): a
  // game going on, stones on the board only, never two on a cell, the rules' own checks, and
  // a board on which the game is not already over (words changed outside reset and step).
  bool valid(const double* s) const {
    if (!(s[0] == 0.0 || s[0] == 1.0)) return false;
    const Position p = load(s);
    return well_formed(p) && Rules::outcome(p.stones[0], p.stones[1]) == Result::kOngoing;
  }

  // Why `valid` refused a state (the engine's message names the environment first).
  std::string invalid_reason(const double* s) const {
    const Position p = load(s);
    const bool exact = s[0] == static_cast<double>(p.to_move + 2 * p.status);
    if (exact && p.status != kPlaying && p.status != kMalformed)
      return "holds a game that is over (reset it, or start it from a game going on)";
    if (exact && p.status == kPlaying && well_formed(p)) {
      const int over = status_of(Rules::outcome(p.stones[0], p.stones[1]), 0);
      if (over != kPlaying)
        return std::string("holds a board on which the game is over (") +
               (over == kDrawn ? "drawn" : over == kFirstWon ? "player 0 won" : "player 1 won") +
               ") though its words say it goes on: they did not come from reset or step (start "
               "a position from its physical state instead)";
    }
    if (exact && p.status == kMalformed)
      return "holds no position of " + id_ + ": the physical state it was started from breaks "
             "the rules (each cell 0 or 1 for a player's stone or -1 for none, then the player "
             "to move, 0 or 1; stones where play can put them, as many as the turns played)";
    return "holds words that are no position of " + id_ + " (they did not come from reset or "
           "step)";
  }

  void physical(const double* s, double* physics) const {
    const Position p = load(s);
    for (int r = 0; r < Rules::kRows; ++r) {
      for (int c = 0; c < Rules::kCols; ++c) {
        const int b = Rules::bit(r, c);
        physics[r * Rules::kCols + c] =
            ((p.stones[0] >> b) & 1) ? 0.0 : (((p.stones[1] >> b) & 1) ? 1.0 : -1.0);
      }
    }
    physics[kCells] = p.to_move;
  }

  // Any finite numbers: a position that is no position of the game is kept as malformed
  // (its steps are refused), one whose game is over as over (no legal action).
  void set_physical(double* s, const double* physics) const {
    Position p;
    bool ok = true;
    for (int r = 0; r < Rules::kRows; ++r) {
      for (int c = 0; c < Rules::kCols; ++c) {
        const double v = physics[r * Rules::kCols + c];
        const Bits b = Bits{1} << Rules::bit(r, c);
        if (v == 0.0) p.stones[0] |= b;
        else if (v == 1.0) p.stones[1] |= b;
        else ok &= v == -1.0;
      }
    }
    const double player = physics[kCells];
    ok &= player == 0.0 || player == 1.0;
    p.to_move = player == 1.0 ? 1 : 0;
    ok = ok && Rules::consistent(p.stones[0], p.stones[1], p.to_move);
    p.status = ok ? status_of(Rules::outcome(p.stones[0], p.stones[1]), 0) : kMalformed;
    store(s, p);
  }

 private:
  struct Position {
    Bits stones[2] = {0, 0};
    int to_move = 0;
    int status = kPlaying;
  };

  // Stones on the board only, never two on a cell, and the rules' own checks.
  static bool well_formed(const Position& p) {
    return ((p.stones[0] | p.stones[1]) & ~Rules::kBoard) == 0 &&
           (p.stones[0] & p.stones[1]) == 0 &&
           Rules::consistent(p.stones[0], p.stones[1], p.to_move);
  }

  static uint128 legal_actions(const Position& p) {
    if (p.status != kPlaying) return 0;
    return Rules::legal_actions(p.stones[p.to_move], p.stones[1 - p.to_move], p.to_move);
  }

  // The game's status after `result` for `player` (0 or 1).
  static int status_of(Result result, int player) {
    switch (result) {
      case Result::kOngoing: return kPlaying;
      case Result::kDraw: return kDrawn;
      case Result::kWin: return player == 0 ? kFirstWon : kSecondWon;
      case Result::kLoss: return player == 0 ? kSecondWon : kFirstWon;
    }
    return kMalformed;
  }

  // The planes of four cells for each of their 256 own/opponent bit patterns, for each player
  // to move (the colour plane; both alike for games without one).
  template <class T>
  struct PlaneTable {
    T cells[2][256][4 * Rules::kPlanes];
    static const PlaneTable& get() {
      static const PlaneTable table = [] {
        PlaneTable t{};
        for (int player = 0; player < 2; ++player)
          for (int v = 0; v < 256; ++v)
            for (int j = 0; j < 4; ++j) {
              T* cell = t.cells[player][v] + j * Rules::kPlanes;
              cell[0] = static_cast<T>((v >> j) & 1);
              cell[1] = static_cast<T>((v >> (4 + j)) & 1);
              if constexpr (Rules::kPlanes == 3) cell[2] = static_cast<T>(player);
            }
        return t;
      }();
      return table;
    }
  };

  // Whether the rules number the cells row by row (bit r * kCols + c), as the observation does.
  static constexpr bool row_major_bits() {
    for (int r = 0; r < Rules::kRows; ++r)
      for (int c = 0; c < Rules::kCols; ++c)
        if (Rules::bit(r, c) != r * Rules::kCols + c) return false;
    return true;
  }

  // A bitboard with its cells renumbered row by row (the rules' own way where they have one).
  template <class R, class = void>
  struct HasRowMajor : std::false_type {};
  template <class R>
  struct HasRowMajor<R, std::void_t<decltype(R::row_major(Bits{}))>> : std::true_type {};

  static Bits row_major(Bits b) {
    if constexpr (HasRowMajor<Rules>::value) {
      return Rules::row_major(b);
    } else if constexpr (row_major_bits()) {
      return b;
    } else {
      Bits out = 0;
      for (int r = 0; r < Rules::kRows; ++r)
        for (int c = 0; c < Rules::kCols; ++c)
          out |= ((b >> Rules::bit(r, c)) & 1) << (r * Rules::kCols + c);
      return out;
    }
  }

  // A bitboard from its words (the low word first), and back.
  static Bits bits(const double* words) {
    uint64_t w[kBitsWords];
    std::memcpy(w, words, sizeof(w));
    if constexpr (kBitsWords == 1) {
      return w[0];
    } else {
      static_assert(kBitsWords == 2, "a bitboard is one or two words");
      return (Bits{w[1]} << 64) | w[0];
    }
  }
  static void set_bits(double* words, Bits b) {
    uint64_t w[kBitsWords];
    w[0] = static_cast<uint64_t>(b);
    if constexpr (kBitsWords == 2) w[1] = static_cast<uint64_t>(b >> 64);
    std::memcpy(words, w, sizeof(w));
  }

  static Position load(const double* s) {
    Position p;
    const double header = s[0];
    // Any words (a forged record, NaN included) read as some position.
    const int h = header >= 0.0 && header < 10.0 ? static_cast<int>(header) : 2 * kMalformed;
    p.to_move = h % 2;
    p.status = h / 2;
    p.stones[0] = bits(s + 1);
    p.stones[1] = bits(s + 1 + kBitsWords);
    return p;
  }
  static void store(double* s, const Position& p) {
    s[0] = static_cast<double>(p.to_move + 2 * p.status);
    set_bits(s + 1, p.stones[0]);
    set_bits(s + 1 + kBitsWords, p.stones[1]);
  }

  std::string id_;
};

}  // namespace metagraph::games
