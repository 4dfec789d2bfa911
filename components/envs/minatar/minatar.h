// MinAtar (Young and Tian 2019, "MinAtar: An Atari-Inspired Testbed for Thorough and
// Reproducible Reinforcement Learning Experiments") as a family of the engine's tasks: each
// game is a class of rules (breakout.h, asterix.h, ...) that `MinAtar<Game>` makes a task of
// (engine/task.h), written against the documented contract alone.
//
// What every game shares, as the `minatar` package's `Environment` defines it:
//   - six actions (n, l, u, r, d, f: no-op, left, up, right, down, fire), all legal;
//   - sticky actions: before each step a uniform draw below `sticky_action_prob` (0.1) repeats
//     the previous action instead of the given one (the draw is made on every step, as the
//     package makes it); a new episode's previous action is the no-op (gymnax and pgx do the
//     same; the package keeps it across episodes);
//   - difficulty ramping (`difficulty_ramping`, true by default) where the game has one;
//   - observations: 10x10xC planes of 0 and 1, channels last ((y * 10 + x) * C + c).
//
// State: the previous action, the game's words, then its random stream. A state set from
// outside (`reset(options={"state": ...})`) that the game calls invalid (a cell off the board)
// is observed as empty planes, never read, and refused by the next step, as the engine
// refuses any invalid state.
//
// Randomness: the game's own stream, one word of the state (splitmix64 bits), seeded at each
// reset from the engine's stream of the environment. The package calls numpy's RandomState;
// the games here make the same calls in the same order (`rand()`, `randint(n)`,
// `randint(lo, hi)`), each one draw of the stream, so a RandomState replaced by one drawing
// this stream (tests/components/envs/minatar) makes the package's game step in lockstep.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/rng.h"
#include "engine/task.h"

namespace metagraph::minatar {

namespace engine = metagraph::engine;

constexpr int kSide = 10;  // the board is kSide x kSide cells

// MinAtar's action numbers (the package's action_map ['n','l','u','r','d','f']).
enum Move : int { kNoop = 0, kLeft = 1, kUp = 2, kRight = 3, kDown = 4, kFire = 5 };
constexpr int kNumActions = 6;

// A game's random stream: the calls the package makes on numpy's RandomState, one draw each.
class Stream {
 public:
  explicit Stream(uint64_t bits) : bits_(bits) {}
  uint64_t bits() const { return bits_; }
  // RandomState.rand(): uniform in [0, 1).
  double rand() { return engine::uniform(bits_, 0.0, 1.0); }
  // RandomState.randint(n): uniform in [0, n).
  int randint(int n) { return static_cast<int>(engine::below(bits_, static_cast<uint32_t>(n))); }
  // RandomState.randint(lo, hi): uniform in [lo, hi).
  int randint(int lo, int hi) { return lo + randint(hi - lo); }

 private:
  uint64_t bits_;
};

// Planes being written: cell (y, x) of channel c set to 1.
template <class T>
struct Planes {
  T* obs;
  int channels;
  void set(int y, int x, int c) const { obs[(y * kSide + x) * channels + c] = T(1); }
};

// Whether x is a whole number in [lo, hi].
inline bool whole(double x, double lo, double hi) {
  return x >= lo && x <= hi && x == std::floor(x);
}

// The settings every game takes (the package's Environment arguments).
struct Settings {
  bool ramping;
};

// A MinAtar game as an engine task. `Game` provides: kName, kChannels, kWords (its state
// words, small whole numbers kept as float64), kMaxSteps (the episode limit gymnax uses),
// kMinimalActions (the package's minimal_action_set(): what minimal_action_set=true offers),
// and static functions
//   void reset(double* w, Stream& random, const Settings&);
//   double act(double* w, int action, Stream& random, const Settings&, bool& terminal);
//   template <class T> void observe(const double* w, const Planes<T>&);  (planes are zeroed;
//       called on valid words only)
//   bool valid(const double* w);  (the words a reset and steps can make: any other is refused)
template <class Game>
class MinAtar {
 public:
  using Action = int32_t;
  static constexpr int kStateWords = 2 + Game::kWords;  // previous action, game, stream
  static constexpr bool kStepKeepsValid = true;         // whole numbers, exact rules
  using Observation = bool;                             // the planes, as the package's state()

  explicit MinAtar(const engine::Config& config)
      : id_(config.task()),
        sticky_(config.has("sticky_action_prob") ? config.number("sticky_action_prob") : 0.1),
        settings_{config.has("difficulty_ramping") ? config.flag("difficulty_ramping") : true},
        minimal_(config.has("minimal_action_set") && config.flag("minimal_action_set")),
        max_steps_(config.has("max_episode_steps")
                       ? config.integer("max_episode_steps", 1, int64_t{1} << 40)
                       : Game::kMaxSteps) {
    if (!(sticky_ >= 0.0 && sticky_ <= 1.0))
      throw config.error("sticky_action_prob", "must be in [0, 1], got " +
                                                   std::to_string(sticky_));
    config.only({"sticky_action_prob", "difficulty_ramping", "minimal_action_set",
                 "max_episode_steps"});
  }

  std::string id() const { return id_; }
  int obs_dim() const { return kSide * kSide * Game::kChannels; }
  std::vector<int64_t> obs_shape() const { return {kSide, kSide, Game::kChannels}; }
  // the six actions, or with minimal_action_set the game's own (gymnax's default):
  // action k is then Game::kMinimalActions[k]
  int num_actions() const {
    return minimal_ ? static_cast<int>(Game::kMinimalActions.size()) : kNumActions;
  }
  int64_t max_steps() const { return max_steps_; }
  int physical_dim() const { return 1 + Game::kWords; }  // previous action, game words
  // The planes' shape: the observation is rows x columns x planes, channels last.
  std::map<std::string, engine::Config::Value> info() const {
    return {{"rows", int64_t{kSide}}, {"columns", int64_t{kSide}},
            {"planes", int64_t{Game::kChannels}}};
  }

  void reset(double* s, uint64_t& rng) const {
    Stream random(engine::splitmix64(rng));
    s[0] = kNoop;
    Game::reset(s + 1, random, settings_);
    store(s, random);
  }
  void step(double* s, const Action* action, engine::Step& out) const {
    Stream random(load(s));
    int a = minimal_ ? Game::kMinimalActions[*action] : *action;  // (checked in range)
    if (random.rand() < sticky_) a = static_cast<int>(s[0]);
    s[0] = a;
    bool terminal = false;
    out.reward = Game::act(s + 1, a, random, settings_, terminal);
    out.terminated = terminal;
    store(s, random);
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    std::fill(obs, obs + obs_dim(), T(0));
    if (valid(s)) Game::observe(s + 1, Planes<T>{obs, Game::kChannels});
  }
  bool valid(const double* s) const {
    return whole(s[0], 0, kNumActions - 1) && Game::valid(s + 1);
  }
  std::string invalid_reason(const double* s) const {
    if (!whole(s[0], 0, kNumActions - 1)) return "has a previous action outside 0..5";
    return std::string("holds no state of MinAtar's ") + Game::kName +
           " (each word a whole number in its range)";
  }
  void physical(const double* s, double* physics) const {
    for (int k = 0; k < physical_dim(); ++k) physics[k] = s[k];
  }
  void set_physical(double* s, const double* physics) const {
    for (int k = 0; k < physical_dim(); ++k) s[k] = physics[k];
  }

 private:
  static constexpr int kStream = 1 + Game::kWords;  // the word holding the game's stream
  static uint64_t load(const double* s) {
    uint64_t bits;
    std::memcpy(&bits, s + kStream, sizeof bits);
    return bits;
  }
  static void store(double* s, const Stream& random) {
    const uint64_t bits = random.bits();
    std::memcpy(s + kStream, &bits, sizeof bits);
  }

  std::string id_;
  double sticky_;
  Settings settings_;
  bool minimal_;
  int64_t max_steps_;
};

}  // namespace metagraph::minatar
