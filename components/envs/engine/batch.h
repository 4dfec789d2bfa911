// A batch of n environments of one task, stored as structure of arrays, and the engine's one
// step, shared by the host pool (pool.h) and the XLA FFI handlers (ffi.h).
//
// Layout: W = state words + 2 rows of n 8-byte words:
//   rows [0, S)  the task's state, one row per word (S = state_words);
//   row S        each environment's random stream (uint64);
//   row S + 1    steps taken in the current episode (int64).
// Through the XLA FFI the same block is uint32[..., W, n, 2], one block per leading index.
//
// A step runs in two phases over the threads (thread_pool.h): every thread checks its part
// (actions in the action space, states that reset and step can produce, and which flavour of
// the step a part may take), the threads meet, and only if every check passed does each step
// its part, with Gymnasium's same-step auto-reset. So the checks are parallel, and a refused
// step moves no environment.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "rng.h"
#include "task.h"

namespace metagraph::engine {

template <class Task>
class Batch {
 public:
  using T = Traits<Task>;
  using Action = typename T::Action;
  using Workspace = typename T::Workspace;

  // `stride`: the words between one row and the next (default n: the in-graph door's
  // [rows, n] buffers; the host pool's own storage takes padded_stride(n)).
  Batch(const Task& task, void* base, int64_t n, int64_t stride = 0)
      : task_(&task), base_(static_cast<char*>(base)), n_(n), stride_(stride ? stride : n),
        s_(T::state_words(task)) {}

  // A row stride for a batch of n that its owner lays out itself: n rounded up to whole
  // cache lines, an odd number of them. Rows a power of two apart put every word of one
  // environment in the same few cache sets (N = 4096: 32 KiB apart, all in one set of L1),
  // and a task of many words then evicts its own state as it loads it: Seaquest's 85 words
  // stepped at 4.4 M steps/s at N = 4096 on two cores, 6.3 M with the rows padded.
  static int64_t padded_stride(int64_t n) {
    int64_t lines = (n + 7) / 8;
    if (lines % 2 == 0) ++lines;
    return lines * 8;
  }

  int64_t size() const { return n_; }
  int64_t stride() const { return stride_; }
  int state_words() const { return s_; }
  static int rows(const Task& task) { return T::state_words(task) + 2; }
  double* word(int d) const { return reinterpret_cast<double*>(row(d)); }
  uint64_t* rng() const { return reinterpret_cast<uint64_t*>(row(s_)); }
  int64_t* steps() const { return reinterpret_cast<int64_t*>(row(s_ + 1)); }

  void load(int64_t i, double* s) const {
    for (int d = 0; d < s_; ++d) s[d] = word(d)[i];
  }
  void store(int64_t i, const double* s) const {
    for (int d = 0; d < s_; ++d) word(d)[i] = s[d];
  }
  // Environment i as W words in the row order (state, stream, step count): what a user reads
  // and sets as the environment's record.
  void read_record(int64_t i, uint64_t* out) const {
    for (int d = 0; d < s_ + 2; ++d) std::memcpy(out + d, row(d) + 8 * i, 8);
  }
  void write_record(int64_t i, const uint64_t* in) const {
    for (int d = 0; d < s_ + 2; ++d) std::memcpy(row(d) + 8 * i, in + d, 8);
  }

  bool steps_valid(int64_t i) const {
    return steps()[i] >= 0 && steps()[i] < task_->max_steps();
  }
  // Whether environment i holds a state that reset and step can produce.
  bool valid(int64_t i, double* scratch) const {
    load(i, scratch);
    return steps_valid(i) && task_->valid(scratch);
  }
  std::string invalid_message(int64_t i, int64_t index) const {
    const std::string where = task_->id() + " step: environment " + std::to_string(index);
    if (!steps_valid(i))
      return where + " has step count " + std::to_string(steps()[i]) + " outside [0, " +
             std::to_string(task_->max_steps()) + "): its state did not come from reset or step";
    if constexpr (HasInvalidReason<Task>::value) {
      std::vector<double> s(s_);
      load(i, s.data());
      return where + " " + task_->invalid_reason(s.data());
    }
    return where + " has a non-finite or invalid state (reset it, or start it from a finite, " +
           "valid state)";
  }

  // Environment i starts its stream (seed, index) and a first episode.
  template <class O>
  void reseed(Workspace& ws, int64_t i, uint64_t seed, uint64_t index, O* obs,
              double* scratch) const {
    rng()[i] = stream_state(seed, index);
    restart(ws, i, obs, scratch);
  }
  // Environment i draws its next initial state from its own stream; its observation to obs.
  template <class O>
  void restart(Workspace& ws, int64_t i, O* obs, double* scratch) const {
    T::reset(*task_, ws, scratch, rng()[i]);
    store(i, scratch);
    steps()[i] = 0;
    T::template observe<false>(*task_, ws, scratch, obs);
  }
  // Environment i starts a new episode from a physical state (checked by the caller).
  template <class O>
  void start_from(Workspace& ws, int64_t i, const double* physics, O* obs,
                  double* scratch) const {
    load(i, scratch);
    T::set_physical(*task_, ws, scratch, physics);
    store(i, scratch);
    steps()[i] = 0;
    T::template observe<false>(*task_, ws, scratch, obs);
  }
  void physical(int64_t i, double* physics, double* scratch) const {
    load(i, scratch);
    task_->physical(scratch, physics);
  }

 private:
  char* row(int r) const { return base_ + sizeof(uint64_t) * r * stride_; }
  const Task* task_;
  char* base_;
  int64_t n_, stride_;
  int s_;
};

// m records (uint64, W words each: state words, stream, step count) as a block of the batch
// layout (rows `stride` words apart; default m), each checked to be a state reset and step can
// produce; std::invalid_argument names the first that is not (its index in `records`).
template <class Task>
std::vector<uint64_t> checked_block(const Task& task, const uint64_t* records, int64_t m,
                                    int64_t stride = 0) {
  const int w = Batch<Task>::rows(task);
  std::vector<uint64_t> block(static_cast<size_t>(w) * (stride ? stride : m));
  const Batch<Task> copy(task, block.data(), m, stride);
  for (int64_t i = 0; i < m; ++i) copy.write_record(i, records + i * w);
  std::vector<double> s(w);
  for (int64_t i = 0; i < m; ++i)
    if (!copy.valid(i, s.data())) throw std::invalid_argument(copy.invalid_message(i, i));
  return block;
}

// The outputs of a step, one row per environment (O: the observations' element type, float,
// bool for a task with bool observations, or double for a host pool of a task with
// kFloat64Outputs; R: the rewards', float or double).
template <class O, class R = O>
struct StepOut {
  O* obs;
  R* reward;
  bool* terminated;
  bool* truncated;
  O* final_obs;               // nullptr: not wanted (the step writes each observation once)
  float* extras = nullptr;    // extras_dim floats per environment (none: nullptr)
  bool* legal_mask = nullptr;  // num_actions bools per environment, of the state the step
                               // leaves (the next episode's where one ended); nullptr: none
  bool* done = nullptr;        // terminated or truncated, per environment; nullptr: not wanted
  // true: final_obs rows are written only for the environments whose episode ended (the host
  // pool's, whose other rows stay as they were: zeros); false: every row, the observation
  // the step made (the in-graph door's, a whole XLA buffer).
  bool final_obs_of_ended_only = false;

  StepOut from(int64_t offset, int obs_dim, int extras_dim, int num_actions = 0) const {
    return {obs + offset * obs_dim, reward + offset, terminated + offset, truncated + offset,
            final_obs ? final_obs + offset * obs_dim : nullptr,
            extras ? extras + offset * extras_dim : nullptr,
            legal_mask ? legal_mask + offset * num_actions : nullptr,
            done ? done + offset : nullptr, final_obs_of_ended_only};
  }
};

// The first problem a check found: its environment index (in the caller's numbering) and
// message. Threads record their own first find; the lowest index wins.
class FirstProblem {
 public:
  void offer(int64_t index, const std::string& message) {
    int64_t seen = index_.load();
    while (index < seen && !index_.compare_exchange_weak(seen, index)) {}
    if (index <= index_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (index < message_index_) {  // the first message offered for an index stays
        message_index_ = index;
        message_ = message;
      }
    }
  }
  bool found() const { return index_.load() != kNone; }
  std::string message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::atomic<int64_t> index_{kNone};
  mutable std::mutex mutex_;
  int64_t message_index_ = kNone;
  std::string message_;
};

// The message for a bad action of environment i, or "" (discrete: in [0, num_actions);
// continuous: finite).
template <class Task>
std::string action_problem(const Task& task, const typename Traits<Task>::Action* a, int dim,
                           int64_t index) {
  if constexpr (Traits<Task>::kDiscrete) {
    if (*a < 0 || *a >= task.num_actions())
      return task.id() + ": action " + std::to_string(*a) + " at index " +
             std::to_string(index) + " is outside [0, " + std::to_string(task.num_actions()) +
             ")";
  } else {
    for (int k = 0; k < dim; ++k)
      if (!std::isfinite(a[k]))
        return task.id() + ": action at index " + std::to_string(index) +
               " is not finite (NaN or inf)";
  }
  return {};
}

// Whether every action of environments [begin, end) is in the action space (one branch-free
// pass; action_problem names the first bad one).
template <class Task>
bool actions_ok(const Task& task, const typename Traits<Task>::Action* a, int dim,
                int64_t begin, int64_t end) {
  // Counted in integers (a bool reduction does not vectorise with every compiler).
  uint32_t bad = 0;
  if constexpr (Traits<Task>::kDiscrete) {
    const uint32_t n = static_cast<uint32_t>(task.num_actions());
    for (int64_t i = begin; i < end; ++i) bad |= static_cast<uint32_t>(a[i]) >= n;
  } else {
    for (int64_t k = begin * dim; k < end * dim; ++k) bad |= !std::isfinite(a[k]);
  }
  return bad == 0;
}

// Phase one of a step over environments [begin, end) of `batch`: records the first bad action
// and the first bad state in `problems` (indices offset by `offset`), and returns whether the
// whole part may take the task's fast flavour. `own`: the part's states are those the last
// step_part left without a failure (a host pool's own states; never states from outside);
// `in_fast_range`: and step_part said they are all in the fast flavour's range. Such states
// are not scanned again, only the actions are checked, where they are known valid: in the
// fast flavour's range, or made by a task whose steps keep a state valid (kStepKeepsValid).
template <class Task>
bool check_part(const Task& task, const Batch<Task>& batch,
                const typename Traits<Task>::Action* actions, int64_t begin, int64_t end,
                int64_t offset, FirstProblem& bad_action, FirstProblem& bad_state,
                double* scratch, bool own = false, bool in_fast_range = false) {
  using T = Traits<Task>;
  const int dim = T::action_dim(task);
  if (!actions_ok(task, actions, dim, begin, end)) {
    for (int64_t i = begin; i < end; ++i) {
      const std::string problem = action_problem(task, actions + i * dim, dim, offset + i);
      if (!problem.empty()) {
        bad_action.offer(offset + i, problem);
        break;
      }
    }
  }
  const int64_t* steps = batch.steps();
  const uint64_t max_steps = static_cast<uint64_t>(task.max_steps());
  uint64_t steps_bad = 0;  // a count in [0, max_steps) is below it as an unsigned number
  const bool known_valid = own && (T::kStepKeepsValid || (T::kHasFast && in_fast_range));
  if (!known_valid)
    for (int64_t i = begin; i < end; ++i)
      steps_bad |= static_cast<uint64_t>(steps[i]) >= max_steps;
  bool states_ok = steps_bad == 0, all_fast = own && T::kHasFast && in_fast_range;
  if (known_valid) {
    // a host pool's own states: valid
  } else if constexpr (T::kFixedWords) {
    // One pass that vectorises: the fast flavour's range implies a valid state.
    constexpr int S = Task::kStateWords;
    uint32_t slow = 0, invalid = 0;  // integers: see actions_ok
    for (int64_t i = begin; i < end; ++i) {
      double s[S];
      for (int d = 0; d < S; ++d) s[d] = batch.word(d)[i];
      if constexpr (T::kHasFast) slow |= !T::fast(task, s);
      else invalid |= !task.valid(s);
    }
    const bool fast = T::kHasFast && slow == 0;
    bool ok = invalid == 0;
    if (fast) all_fast = true;
    if (!fast && T::kHasFast) {
      for (int64_t i = begin; i < end; ++i) {
        double s[S];
        for (int d = 0; d < S; ++d) s[d] = batch.word(d)[i];
        ok &= task.valid(s);
      }
    }
    states_ok &= ok;
  } else {
    for (int64_t i = begin; i < end && states_ok; ++i) states_ok = batch.valid(i, scratch);
  }
  if constexpr (T::kHasLegal) {
    // Only where the action is in range and the state valid (the others are named below).
    for (int64_t i = begin; i < end; ++i) {
      batch.load(i, scratch);
      const auto a = actions[i];
      if (a >= 0 && a < task.num_actions() && (states_ok || task.valid(scratch)) &&
          !task.legal(scratch, a)) {
        std::vector<char> mask(static_cast<size_t>(task.num_actions()));
        T::legal_mask_of_valid(task, scratch, reinterpret_cast<bool*>(mask.data()));
        const bool none = std::none_of(mask.begin(), mask.end(), [](char m) { return m; });
        bad_action.offer(offset + i, task.id() + ": action " + std::to_string(a) +
                                         " at index " + std::to_string(offset + i) +
                                         " is not legal in its state" +
                                         (none ? std::string(", which offers no legal action "
                                                             "at all though it is not an end: "
                                                             "a game that goes on must offer "
                                                             "a move, a pass if nothing else "
                                                             "(task.h)")
                                               : std::string()));
        break;
      }
    }
  }
  if (states_ok) return all_fast;
  for (int64_t i = begin; i < end; ++i) {
    if (!batch.valid(i, scratch)) {
      bad_state.offer(offset + i, batch.invalid_message(i, offset + i));
      break;
    }
  }
  return false;
}

// Phase two: one step of environments [begin, end) with same-step auto-reset: an environment
// whose episode ended reports its last observation in final_obs and the next episode's first
// in obs. Returns whether any episode ended (out.done, where given, says which); a task's step
// error goes to `failed` (the caller fails the step, naming the environment). `fast_after`
// (if given): whether every state the part leaves is in the fast flavour's range (false for a
// task without one), checked on each state as it is written, which lets the next check_part
// trust them.
template <class Task, class O, class R>
bool step_part(const Task& task, typename Traits<Task>::Workspace& ws, const Batch<Task>& batch,
               const typename Traits<Task>::Action* actions, int64_t begin, int64_t end,
               const StepOut<O, R>& out, bool fast, int64_t offset, FirstProblem& failed,
               double* scratch, bool* fast_after = nullptr) {
  using T = Traits<Task>;
  const int obs_dim = task.obs_dim();
  const int dim = T::action_dim(task);
  const int64_t max_steps = task.max_steps();
  int64_t* steps = batch.steps();
  // The state's words: a compile-time count where the task fixes it (the loops unroll and
  // the loop over environments vectorises).
  int words = batch.state_words();
  if constexpr (T::kFixedWords) words = Task::kStateWords;
  double* const base = batch.word(0);
  const int64_t stride = batch.stride();  // a local: the stores below cannot alias it
  // Each observation is written once: where the final observation is wanted for every row,
  // there (and copied to obs below, where the next episode's first replaces it); else to obs,
  // and the rows of ended episodes copied to final_obs before their reset (the host pool: a
  // copy of every row, most of a step's time for large observations, is saved).
  const bool every_final = out.final_obs && !out.final_obs_of_ended_only;
  O* const observed = every_final ? out.final_obs : out.obs;
  uint32_t slow = 0;  // any state left outside the fast range (an integer: it vectorises)
  if (fast_after) *fast_after = false;  // until the whole part has stepped
  // Inlined by force: past a size GCC stops inlining it, and the loop below then calls it
  // once per environment instead of stepping several per instruction (6x slower).
  auto one = [&](auto fast_flavour, double* s, int64_t i) __attribute__((always_inline)) {
    constexpr bool kFast = decltype(fast_flavour)::value;
    constexpr int kWords = T::kFixedWords ? Task::kStateWords : 0;
    const int count = T::kFixedWords ? kWords : words;
    for (int d = 0; d < count; ++d) s[d] = base[d * stride + i];
    Step r;
    T::template step<kFast>(task, ws, s, actions + i * dim, r);
    if (r.error >= 0) return r.error;  // the environment did not move
    for (int d = 0; d < count; ++d) base[d * stride + i] = s[d];
    if constexpr (T::kHasFast) slow |= !T::fast(task, s);
    const int64_t t = steps[i] + 1;
    steps[i] = t;
    T::template observe<kFast>(task, ws, s, observed + i * obs_dim);
    if constexpr (T::kHasExtras)
      if (out.extras != nullptr) task.extras(s, out.extras + i * task.extras_dim());
    out.reward[i] = static_cast<R>(r.reward);
    out.terminated[i] = r.terminated;
    out.truncated[i] = t >= max_steps;  // as Gymnasium's TimeLimit: whether or not it terminated
    return r.error;
  };
  if constexpr (T::kFixedWords && !T::kHasWorkspace) {
    // Branch-free, so that the compiler steps several environments per instruction. A task
    // that never sets out.error leaves the error test below dead code (the step is inlined);
    // one that does fails the step naming its first failed environment (the others of the
    // part have stepped; the failed ones did not move).
    constexpr int S = Task::kStateWords;
    int64_t first_failed = -1;
    int first_error = -1;
    if (!T::kHasFast || fast) {
#pragma GCC ivdep
      for (int64_t i = begin; i < end; ++i) {
        double s[S];
        const int error = one(std::integral_constant<bool, T::kHasFast>{}, s, i);
        if (error >= 0 && first_failed < 0) first_failed = i, first_error = error;
      }
    } else {
      for (int64_t i = begin; i < end; ++i) {
        double s[S];
        for (int d = 0; d < S; ++d) s[d] = batch.word(d)[i];
        const int error = T::fast(task, s) ? one(std::true_type{}, s, i)
                                           : one(std::false_type{}, s, i);
        if (error >= 0 && first_failed < 0) first_failed = i, first_error = error;
      }
    }
    if (first_failed >= 0) {
      failed.offer(offset + first_failed, task.id() + ": environment " +
                                              std::to_string(offset + first_failed) + " " +
                                              T::error_message(task, first_error));
      return false;
    }
  } else {
    for (int64_t i = begin; i < end; ++i) {
      const int error = one(std::false_type{}, scratch, i);
      if (error >= 0) {
        failed.offer(offset + i, task.id() + ": environment " + std::to_string(offset + i) +
                                     " " + T::error_message(task, error));
        return false;
      }
    }
  }
  if (every_final)
    std::memcpy(out.obs + begin * obs_dim, out.final_obs + begin * obs_dim,
                sizeof(O) * obs_dim * (end - begin));
  bool any_done = false;
  for (int64_t i = begin; i < end; ++i) {
    const bool done = out.terminated[i] | out.truncated[i];
    if (out.done) out.done[i] = done;
    if (done) {
      any_done = true;
      if (out.final_obs && !every_final)
        std::memcpy(out.final_obs + i * obs_dim, out.obs + i * obs_dim, sizeof(O) * obs_dim);
      batch.restart(ws, i, out.obs + i * obs_dim, scratch);
      if constexpr (T::kHasFast) slow |= !T::fast(task, scratch);
    }
  }
  if (fast_after) *fast_after = T::kHasFast && slow == 0 && !failed.found();
  if constexpr (T::kDiscrete) {
    if (out.legal_mask) {
      const int a = task.num_actions();
      for (int64_t i = begin; i < end; ++i) {  // states step and reset made: valid
        batch.load(i, scratch);
        T::legal_mask_of_valid(task, scratch, out.legal_mask + i * a);
      }
    }
  }
  return any_done;
}

}  // namespace metagraph::engine
