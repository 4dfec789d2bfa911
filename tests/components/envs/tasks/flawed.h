// A walk on a line for the tests of a user's broken task: x starts at 0 and moves one step left
// or right (actions 0, 1) within [-5, 5]; reward 1 a step; observations (x, 1) in the Box
// [-10, 10]^2; episodes of 20 steps. The keyword argument `flaw` breaks it in one way:
//   "none"          a correct task (the conformance check passes it)
//   "nan_reward"    every reward NaN
//   "nan_obs"       NaN in every observation
//   "outside"       an observation outside the declared Box (the second is 100)
//   "thread"        the reward depends on which thread stepped the environment
//   "throw"         step throws a C++ exception when x reaches 3
//   "error"         step reports a failure through out.error when x reaches 3
//   "no_obs", "no_actions", "negative_steps"   an impossible size (refused when made)
// (and `Sized` below: a negative state size, which needs a task of dynamic state words)
// With FLAWED_THROW_ON_IMPORT set in the environment, a static initialiser throws while the
// module loads (as a task's table read from a missing file would).
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/config.h"
#include "engine/task.h"

namespace flawed {

namespace engine = metagraph::engine;

inline int table_size() {
  if (std::getenv("FLAWED_THROW_ON_IMPORT") != nullptr)
    throw std::runtime_error("flawed: the task's table could not be read");
  return 1;
}
static const int kTableSize = table_size();

class Walk {
 public:
  using Action = int32_t;
  static constexpr int kStateWords = 1;

  explicit Walk(const engine::Config& config)
      : id_(config.task()), flaw_(config.has("flaw") ? config.text("flaw") : "none") {
    config.only({"flaw"});
    static const char* const kFlaws[] = {"none",   "nan_reward", "nan_obs",   "outside",
                                         "thread", "throw",      "error",     "no_obs",
                                         "no_actions", "negative_steps"};
    bool known = false;
    for (const char* flaw : kFlaws) known |= flaw_ == flaw;
    if (!known) throw config.error("flaw", "is not a flaw this task knows");
  }

  std::string id() const { return id_; }
  int obs_dim() const { return flaw_ == "no_obs" ? 0 : 2; }
  int num_actions() const { return flaw_ == "no_actions" ? 0 : 2; }
  int64_t max_steps() const { return flaw_ == "negative_steps" ? -3 : 20; }
  int physical_dim() const { return 1; }

  void reset(double* s, uint64_t&) const { s[0] = 0.0; }
  void step(double* s, const Action* action, engine::Step& out) const {
    const double x = s[0] + (*action == 1 ? 1.0 : -1.0);
    if (x >= 3 && flaw_ == "throw") throw std::logic_error("the walk went too far right");
    if (x >= 3 && flaw_ == "error") {
      out.error = 7;
      return;
    }
    s[0] = x < -5 ? -5 : (x > 5 ? 5 : x);
    out.reward = 1.0;
    if (flaw_ == "nan_reward") out.reward = std::numeric_limits<double>::quiet_NaN();
    if (flaw_ == "thread") {  // 1 on the thread that stepped first (the caller's), else 2
      static std::atomic<std::thread::id> first{};
      std::thread::id none{};
      first.compare_exchange_strong(none, std::this_thread::get_id());
      out.reward = first.load() == std::this_thread::get_id() ? 1.0 : 2.0;
    }
  }
  std::string error_message(int error) const {
    return "the walk failed with error " + std::to_string(error);
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    obs[0] = static_cast<T>(s[0]);
    obs[1] = flaw_ == "nan_obs" ? std::numeric_limits<T>::quiet_NaN()
                                : static_cast<T>(flaw_ == "outside" ? 100 : 1);
  }
  bool valid(const double* s) const {
    return s[0] >= -5 && s[0] <= 5 && s[0] == std::floor(s[0]);
  }
  void physical(const double* s, double* physics) const { physics[0] = s[0]; }
  void set_physical(double* s, const double* physics) const { s[0] = physics[0]; }

 private:
  std::string id_;
  std::string flaw_;
};

// A task whose sizes are impossible, chosen by the keyword argument `broken`: "state" (a
// negative state size), "obs" (no observation), "actions" (no action), "steps" (a negative
// episode limit), "shape" (an observation shape whose product is not obs_dim); "none" is a
// correct task. The engine refuses a broken one when it is made.
class Sized {
 public:
  using Action = int32_t;
  static constexpr int kStateWords = engine::kDynamic;

  explicit Sized(const engine::Config& config)
      : id_(config.task()), broken_(config.has("broken") ? config.text("broken") : "none") {
    config.only({"broken"});
  }

  std::string id() const { return id_; }
  int state_words() const { return broken_ == "state" ? -5 : 1; }
  int obs_dim() const { return broken_ == "obs" ? 0 : 1; }
  std::vector<int64_t> obs_shape() const {
    return broken_ == "shape" ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 1};
  }
  int num_actions() const { return broken_ == "actions" ? 0 : 2; }
  int64_t max_steps() const { return broken_ == "steps" ? -3 : 10; }
  int physical_dim() const { return 1; }

  void reset(double* s, uint64_t&) const { s[0] = 0.0; }
  void step(double* s, const Action*, engine::Step& out) const {
    s[0] += 1.0;
    out.reward = 0.0;
  }
  template <class T>
  void observe(const double* s, T* obs) const {
    obs[0] = static_cast<T>(s[0]);
  }
  bool valid(const double* s) const { return s[0] >= 0; }
  void physical(const double* s, double* physics) const { physics[0] = s[0]; }
  void set_physical(double* s, const double* physics) const { s[0] = physics[0]; }

 private:
  std::string id_;
  std::string broken_;
};

}  // namespace flawed
