// The contract of a task: what a family writes, in one header, for the engine to do the rest
// (the threaded host pool, the XLA FFI handlers, checks, auto-reset, random streams).
//
// A task is a class. The engine makes one object per configuration (`Task(const Config&)`,
// config.h) and calls it from many threads at once, so every method is const. Required:
//
//   using Action = int32_t;            // discrete actions in [0, num_actions()), or
//   using Action = float;              // continuous actions, action_dim() floats each
//   static constexpr int kStateWords;  // 8-byte words of one environment's state, or
//                                      // engine::kDynamic and `int state_words() const`
//   explicit Task(const engine::Config& config);
//   std::string id() const;            // the environment id, for messages ("CartPole-v1")
//   int obs_dim() const;
//   int num_actions() const;           // discrete tasks
//   int action_dim() const;            // continuous tasks (floats per action)
//   int64_t max_steps() const;         // episodes are truncated after this many steps
//   int physical_dim() const;          // the physical state users read and set (float64)
//   void reset(double* state, uint64_t& rng) const;            // a new episode's state
//   void step(double* state, const Action* action, engine::Step& out) const;
//   template <class T> void observe(const double* state, T* obs) const;
//   bool valid(const double* state) const;  // a state reset and step can produce (finite...)
//   void physical(const double* state, double* physics) const;
//   void set_physical(double* state, const double* physics) const;
//
// The state is the environment's own words (float64 or integer bits); the engine keeps the
// random stream (`rng`, advanced by reset only) and the step count beside them. Optional:
//
//   using Workspace = ...;  `Workspace workspace() const;`  scratch that a thread reuses from
//       one environment to the next (MuJoCo's mjData). Then reset, step, observe and
//       set_physical take `Workspace&` first, and observe is always called right after reset,
//       set_physical or step of the same environment on the same workspace.
//   std::string error_message(int error) const;  the words for a step that set out.error >= 0
//       (the physics went unstable); the step then fails, naming the environment.
//   static constexpr int64_t kMinPerThread;  the fewest environments worth another thread
//       (default 256: a cheap step, such as classic control; MuJoCo says 1).
//   static constexpr bool kStepKeepsValid;  true where a step from a valid state always leaves
//       a valid one (exact, discrete dynamics: a board game; not physics, which a finite but
//       huge state overflows): the host pool then checks only states it did not make itself.
//   static constexpr bool kFloat64Outputs;  the host pool returns float64 observations and
//       rewards (Gymnasium's MuJoCo tasks do); the in-graph door is float32 always.
//   std::vector<int64_t> obs_shape() const;  the observation's shape where it is more than a
//       vector (MinAtar's planes: {10, 10, C}, channels last), its product obs_dim(): every
//       door gives observations of that shape, written in the same order (row-major).
//   using Observation = bool;  observations of 0 and 1 (planes: MinAtar) as bool on every door,
//       a quarter of float32's bytes; the default is float (float64 on the host pool with
//       kFloat64Outputs). `observe` is then called with a bool*.
//   bool fast(const double* state) const;  with `template <bool kFast> step/observe`: a
//       flavour of the step that is only right for some states (a vectorisable sin and cos
//       within a range); the engine uses it for a range of environments that all pass.
//   bool legal(const double* state, int32_t action) const;  discrete tasks whose legal
//       actions depend on the state (a board game): an illegal action is refused on every
//       door like an action out of range, and the doors give the legal-action mask.
//   void legal_mask(const double* state, bool* mask) const;  with `legal`: every action's
//       legality at once (num_actions bools), where that is cheaper than asking per action
//       (Othello's moves come from one pass over the board); it must agree with `legal`.
//   int32_t random_legal(const double* state, uint64_t& rng) const;  with `legal`: an action
//       drawn uniformly among the state's legal ones with engine::below (rng.h), for random
//       playouts, where that is cheaper than the mask (a bitboard's k-th set bit).
//   std::string invalid_reason(const double* state) const;  why `valid` refused a state, in
//       the words of the task ("is no position of the game"), for the refusal's message.
//   int extras_dim() const; void extras(const double* state, float* out) const;  more numbers
//       a step reports per environment (a game: the player to move, both players' rewards),
//       read from the state the step ended in (before any auto-reset), like final_obs.
//   std::vector<std::string> extras_names() const;  with extras: what each of them is, by
//       name (default "extra_0", "extra_1", ...). Everything above the engine reads extras
//       by these names, never by position.
//   int num_players() const;  a turn-based game of that many players (default 1: no game).
//       Such a task is discrete, has `legal`, and names among its extras "player_to_move"
//       (the player to move after the step, -1 where the game ended) and "reward_player_<i>"
//       for every player i (what the step gave that player); its reward is that of the player
//       who moved, and its observation is the board as the player to move sees it. Self-play,
//       AlphaZero, the opponents of `evaluate` and `play` follow from it, for a user's game as
//       for the built-in ones (components.envs.num_players).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rng.h"

namespace metagraph::engine {

constexpr int kDynamic = -1;

// What a step reports besides the new state.
struct Step {
  double reward = 0.0;
  bool terminated = false;
  int error = -1;  // >= 0: the step failed (the task's error_message says why)
};

// An optional base of a two-player zero-sum game (`class MyGame : public
// engine::TwoPlayerGame`): num_players() 2 and the extras every game reports, by name
// ("player_to_move", "reward_player_0", "reward_player_1"); the game's own
// extras(state, out) fills them with `report(out, to_move, reward_player_0)`.
struct TwoPlayerGame {
  int num_players() const { return 2; }
  int extras_dim() const { return 3; }
  std::vector<std::string> extras_names() const {
    return {"player_to_move", "reward_player_0", "reward_player_1"};
  }
  // The player to move after the step (-1 where the game ended), player 0's reward and
  // player 1's, its negation (0, never -0, in a draw).
  static void report(float* out, int to_move, float reward_player_0) {
    out[0] = static_cast<float>(to_move);
    out[1] = reward_player_0;
    out[2] = 0.0f - reward_player_0;
  }
};

struct NoWorkspace {};

template <class Task, class = void>
struct WorkspaceOf {
  using type = NoWorkspace;
  static constexpr bool kHas = false;
};
template <class Task>
struct WorkspaceOf<Task, std::void_t<typename Task::Workspace>> {
  using type = typename Task::Workspace;
  static constexpr bool kHas = true;
};

template <class Task, class = void>
struct HasFast : std::false_type {};
template <class Task>
struct HasFast<Task, std::void_t<decltype(std::declval<const Task&>().fast(
                         static_cast<const double*>(nullptr)))>> : std::true_type {};

template <class Task, class = void>
struct HasErrorMessage : std::false_type {};
template <class Task>
struct HasErrorMessage<Task, std::void_t<decltype(std::declval<const Task&>().error_message(0))>>
    : std::true_type {};

template <class Task, class = void>
struct HasLegal : std::false_type {};
template <class Task>
struct HasLegal<Task, std::void_t<decltype(std::declval<const Task&>().legal(
                          static_cast<const double*>(nullptr), int32_t{0}))>> : std::true_type {};

template <class Task, class = void>
struct HasLegalMask : std::false_type {};
template <class Task>
struct HasLegalMask<Task, std::void_t<decltype(std::declval<const Task&>().legal_mask(
                              static_cast<const double*>(nullptr), static_cast<bool*>(nullptr)))>>
    : std::true_type {};

template <class Task, class = void>
struct HasRandomLegal : std::false_type {};
template <class Task>
struct HasRandomLegal<Task, std::void_t<decltype(std::declval<const Task&>().random_legal(
                                static_cast<const double*>(nullptr), std::declval<uint64_t&>()))>>
    : std::true_type {};

template <class Task, class = void>
struct HasInvalidReason : std::false_type {};
template <class Task>
struct HasInvalidReason<Task, std::void_t<decltype(std::declval<const Task&>().invalid_reason(
                                  static_cast<const double*>(nullptr)))>> : std::true_type {};

template <class Task, class = void>
struct HasExtras : std::false_type {};
template <class Task>
struct HasExtras<Task, std::void_t<decltype(std::declval<const Task&>().extras_dim())>>
    : std::true_type {};

template <class Task, class = void>
struct MinPerThread : std::integral_constant<int64_t, 256> {};
template <class Task>
struct MinPerThread<Task, std::void_t<decltype(Task::kMinPerThread)>>
    : std::integral_constant<int64_t, Task::kMinPerThread> {};

template <class Task, class = void>
struct Float64Outputs : std::false_type {};
template <class Task>
struct Float64Outputs<Task, std::void_t<decltype(Task::kFloat64Outputs)>>
    : std::integral_constant<bool, Task::kFloat64Outputs> {};

template <class Task, class = void>
struct StepKeepsValid : std::false_type {};
template <class Task>
struct StepKeepsValid<Task, std::void_t<decltype(Task::kStepKeepsValid)>>
    : std::integral_constant<bool, Task::kStepKeepsValid> {};

template <class Task, class = void>
struct HasObsShape : std::false_type {};
template <class Task>
struct HasObsShape<Task, std::void_t<decltype(std::declval<const Task&>().obs_shape())>>
    : std::true_type {};

template <class Task, class = void>
struct HasExtrasNames : std::false_type {};
template <class Task>
struct HasExtrasNames<
    Task, std::void_t<decltype(std::declval<const Task&>().extras_names())>>
    : std::true_type {};

template <class Task, class = void>
struct HasNumPlayers : std::false_type {};
template <class Task>
struct HasNumPlayers<Task, std::void_t<decltype(std::declval<const Task&>().num_players())>>
    : std::true_type {};

template <class Task, class = void>
struct BoolObservations : std::false_type {};
template <class Task>
struct BoolObservations<Task, std::void_t<typename Task::Observation>>
    : std::true_type {
  static_assert(std::is_same_v<typename Task::Observation, bool>,
                "a task's Observation is bool (the default, float, is not declared)");
};

// The engine's view of a task: the contract's optional parts filled in.
template <class Task>
struct Traits {
  using Action = typename Task::Action;
  using Workspace = typename WorkspaceOf<Task>::type;
  static constexpr bool kDiscrete = std::is_same_v<Action, int32_t>;
  static constexpr bool kHasWorkspace = WorkspaceOf<Task>::kHas;
  static constexpr bool kFixedWords = Task::kStateWords != kDynamic;
  static constexpr bool kHasFast = HasFast<Task>::value;
  static constexpr int64_t kMinPerThread = MinPerThread<Task>::value;
  // Parts a step is cut into per thread (engine/thread_pool.h). Costly steps (a few
  // environments worth a thread: MuJoCo) in four, so that a slow thread holds up a quarter of
  // its share; cheap ones in one contiguous range a thread (CartPole, N=4096, two threads:
  // 195 M steps/s in eight parts against 260 M in two).
  static constexpr int kPartsPerThread = kMinPerThread <= 8 ? 4 : 1;
  static constexpr bool kFloat64Outputs = Float64Outputs<Task>::value;
  static constexpr bool kBoolObservations = BoolObservations<Task>::value;
  // The element types of the observations on the in-graph door and on the host pool, and of
  // the host pool's rewards (the in-graph door's are float).
  using GraphObservation = std::conditional_t<kBoolObservations, bool, float>;
  using HostObservation = std::conditional_t<
      kBoolObservations, bool, std::conditional_t<kFloat64Outputs, double, float>>;
  using HostReward = std::conditional_t<kFloat64Outputs, double, float>;
  static constexpr bool kStepKeepsValid = StepKeepsValid<Task>::value;
  static constexpr bool kHasLegal = HasLegal<Task>::value;
  static constexpr bool kHasExtras = HasExtras<Task>::value;
  static_assert(!kHasLegal || kDiscrete, "only a discrete task has legal actions");
  static_assert(std::is_same_v<Action, int32_t> || std::is_same_v<Action, float>,
                "a task's Action is int32_t (discrete) or float (continuous)");

  static int state_words(const Task& task) {
    if constexpr (kFixedWords) {
      return Task::kStateWords;
    } else {
      return task.state_words();
    }
  }
  // Numbers per action: 1 for a discrete task.
  static int action_dim(const Task& task) {
    if constexpr (kDiscrete) {
      return 1;
    } else {
      return task.action_dim();
    }
  }
  // One observation's shape: the task's obs_shape(), else {obs_dim()}.
  static std::vector<int64_t> obs_shape(const Task& task) {
    if constexpr (HasObsShape<Task>::value) {
      return task.obs_shape();
    } else {
      return {static_cast<int64_t>(task.obs_dim())};
    }
  }
  static int extras_dim(const Task& task) {
    if constexpr (kHasExtras) {
      return task.extras_dim();
    } else {
      return 0;
    }
  }
  // What each extra is: the task's extras_names(), else "extra_<k>".
  static std::vector<std::string> extras_names(const Task& task) {
    if constexpr (HasExtrasNames<Task>::value) {
      static_assert(kHasExtras, "a task with extras_names() has extras_dim() and extras()");
      return task.extras_names();
    } else {
      std::vector<std::string> names;
      for (int k = 0; k < extras_dim(task); ++k) names.push_back("extra_" + std::to_string(k));
      return names;
    }
  }
  // The players of a turn-based game (1: the task is no game).
  static int num_players(const Task& task) {
    if constexpr (HasNumPlayers<Task>::value) {
      static_assert(kHasLegal && kHasExtras,
                    "a game (num_players()) has legal actions (legal) and extras that name the "
                    "player to move and each player's reward (extras_names)");
      return task.num_players();
    } else {
      return 1;
    }
  }
  static bool legal(const Task& task, const double* state, Action action) {
    if constexpr (kHasLegal) {
      return task.legal(state, action);
    } else {
      return true;
    }
  }
  // Every action's legality in a state, num_actions bools (none in a state the task calls
  // invalid), the same on every door.
  static void legal_mask(const Task& task, const double* state, bool* out) {
    if (!task.valid(state)) std::fill(out, out + task.num_actions(), false);
    else legal_mask_of_valid(task, state, out);
  }
  // The same of a state known to be valid (one that step or reset just made).
  static void legal_mask_of_valid(const Task& task, const double* state, bool* out) {
    if constexpr (HasLegalMask<Task>::value) {
      task.legal_mask(state, out);
    } else {
      for (int k = 0; k < task.num_actions(); ++k) out[k] = legal(task, state, k);
    }
  }
  // An action drawn uniformly among the legal ones of a valid state (discrete tasks; every
  // action for a task without `legal`), or -1 when none is legal; `mask` is scratch of
  // num_actions bools.
  static int32_t random_legal(const Task& task, const double* state, uint64_t& rng,
                              bool* mask) {
    if constexpr (HasRandomLegal<Task>::value) {
      return task.random_legal(state, rng);
    } else {
      const int a = task.num_actions();
      if constexpr (HasLegalMask<Task>::value) {
        task.legal_mask(state, mask);
      } else {
        for (int k = 0; k < a; ++k) mask[k] = legal(task, state, k);
      }
      uint32_t count = 0;
      for (int k = 0; k < a; ++k) count += mask[k];
      if (count == 0) return -1;
      uint32_t k = below(rng, count);
      int32_t action = 0;
      while (!mask[action] || k-- > 0) ++action;  // the k-th legal action
      return action;
    }
  }
  static Workspace workspace(const Task& task) {
    if constexpr (kHasWorkspace) {
      return task.workspace();
    } else {
      return {};
    }
  }
  static std::string error_message(const Task& task, int error) {
    if constexpr (HasErrorMessage<Task>::value) {
      return task.error_message(error);
    } else {
      return "its step failed (error " + std::to_string(error) + ")";
    }
  }

  static void reset(const Task& task, Workspace& ws, double* state, uint64_t& rng) {
    if constexpr (kHasWorkspace) {
      task.reset(ws, state, rng);
    } else {
      task.reset(state, rng);
    }
  }
  static void set_physical(const Task& task, Workspace& ws, double* state,
                           const double* physics) {
    if constexpr (kHasWorkspace) {
      task.set_physical(ws, state, physics);
    } else {
      task.set_physical(state, physics);
    }
  }
  template <bool kFast>
  static void step(const Task& task, Workspace& ws, double* state, const Action* action,
                   Step& out) {
    if constexpr (kHasWorkspace && kHasFast) {
      task.template step<kFast>(ws, state, action, out);
    } else if constexpr (kHasWorkspace) {
      task.step(ws, state, action, out);
    } else if constexpr (kHasFast) {
      task.template step<kFast>(state, action, out);
    } else {
      task.step(state, action, out);
    }
  }
  template <bool kFast, class T>
  static void observe(const Task& task, Workspace& ws, const double* state, T* obs) {
    if constexpr (kHasWorkspace && kHasFast) {
      task.template observe<kFast>(ws, state, obs);
    } else if constexpr (kHasWorkspace) {
      task.observe(ws, state, obs);
    } else if constexpr (kHasFast) {
      task.template observe<kFast>(state, obs);
    } else {
      task.observe(state, obs);
    }
  }
  static bool fast(const Task& task, const double* state) {
    if constexpr (kHasFast) {
      return task.fast(state);
    } else {
      return false;
    }
  }
};

}  // namespace metagraph::engine
