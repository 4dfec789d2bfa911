// A batch of environments stored as structure of arrays, stepped over an index range with
// Gymnasium's same-step auto-reset. Used by the host pool (threads) and the XLA FFI handlers.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "classic_control.h"
#include "rng.h"
#include "vector_math.h"

namespace metagraph::envs {

// n environments as kRows rows of n 8-byte words:
//   rows [0, kStateDim)  the physics, one row per coordinate (float64, Gymnasium's order);
//   row kStateDim        each environment's random stream (uint64);
//   row kStateDim + 1    steps taken in the current episode (int64).
// The host pool owns one such block; through the XLA FFI it is uint32[..., kRows, n, 2], one
// block per leading index.
template <class Env>
constexpr int kRows = Env::kStateDim + 2;

template <class Env>
constexpr bool kDiscrete = std::is_same_v<typename Env::Action, int32_t>;

template <class Env>
class SoaBatch {
 public:
  SoaBatch(void* base, int64_t n) : base_(static_cast<char*>(base)), n_(n) {}
  int64_t size() const { return n_; }
  double* physics(int d) const { return reinterpret_cast<double*>(row(d)); }
  uint64_t* rng() const { return reinterpret_cast<uint64_t*>(row(Env::kStateDim)); }
  int64_t* steps() const { return reinterpret_cast<int64_t*>(row(Env::kStateDim + 1)); }

  void load(int64_t i, double* s) const {
    for (int d = 0; d < Env::kStateDim; ++d) s[d] = physics(d)[i];
  }
  void store(int64_t i, const double* s) const {
    for (int d = 0; d < Env::kStateDim; ++d) physics(d)[i] = s[d];
  }
  // Whether every physics value of environments [begin, end) is finite and within `bound`.
  bool within(int64_t begin, int64_t end, double bound) const {
    bool ok = true;
    for (int d = 0; d < Env::kStateDim; ++d) {
      const double* p = physics(d);
      for (int64_t i = begin; i < end; ++i) ok &= std::fabs(p[i]) <= bound;
    }
    return ok;
  }
  // Whether environment i's step count is one that reset and step produce: [0, kMaxSteps).
  bool steps_valid(int64_t i) const {
    return steps()[i] >= 0 && steps()[i] < Env::kMaxSteps;
  }
  // The first environment in [begin, end) whose physics is not finite or whose step count is
  // outside [0, kMaxSteps) (a state that did not come from reset/step), or end.
  int64_t first_invalid(int64_t begin, int64_t end) const {
    bool counts_ok = true;
    for (int64_t i = begin; i < end; ++i) counts_ok &= steps_valid(i);
    if (counts_ok && within(begin, end, std::numeric_limits<double>::max()))  // rejects inf too
      return end;
    double s[Env::kStateDim];
    for (int64_t i = begin; i < end; ++i) {
      load(i, s);
      if (!Env::valid(s) || !steps_valid(i)) return i;
    }
    return end;
  }
  // Why environment i (found by first_invalid, `offset` before it in the caller's numbering)
  // cannot be stepped: the message for the exception.
  std::string invalid_message(int64_t i, int64_t offset = 0) const {
    const std::string where =
        std::string(Env::kId) + " step: environment " + std::to_string(offset + i);
    if (!steps_valid(i))
      return where + " has step count " + std::to_string(steps()[i]) + " outside [0, " +
             std::to_string(Env::kMaxSteps) + "): its state did not come from reset or step";
    return where + " has a non-finite state (reset it, or start it from a finite state)";
  }

  // Environment i starts its stream (seed, index) and a first episode.
  void reseed(int64_t i, uint64_t seed, uint64_t index) const {
    rng()[i] = stream_state(seed, index);
    restart(i);
  }
  // Environment i draws its next initial state from its own stream.
  void restart(int64_t i) const {
    double s[Env::kStateDim];
    Env::reset(s, rng()[i]);
    store(i, s);
    steps()[i] = 0;
  }
  void observe(int64_t i, float* obs) const {
    double s[Env::kStateDim];
    load(i, s);
    Env::observe(s, obs);
  }

 private:
  char* row(int r) const { return base_ + sizeof(uint64_t) * r * n_; }
  char* base_;
  int64_t n_;
};

// Everything the caller hands over is checked before any environment moves. Returns an empty
// string when valid, else the message for the exception.
template <class Env>
std::string check_actions(const typename Env::Action* actions, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kDiscrete<Env>) {
      if (actions[i] < 0 || actions[i] >= Env::kNumActions)
        return std::string(Env::kId) + ": action " + std::to_string(actions[i]) + " at index " +
               std::to_string(i) + " is outside [0, " + std::to_string(Env::kNumActions) + ")";
    } else {
      if (!std::isfinite(actions[i]))
        return std::string(Env::kId) + ": action at index " + std::to_string(i) +
               " is not finite (NaN or inf)";
    }
  }
  return {};
}

// Outputs of a step, one row per environment.
struct StepOut {
  float* obs;
  float* reward;
  bool* terminated;
  bool* truncated;
  float* final_obs;

  // The outputs from environment `offset` on.
  StepOut from(int64_t offset, int obs_dim) const {
    return {obs + offset * obs_dim, reward + offset, terminated + offset, truncated + offset,
            final_obs + offset * obs_dim};
  }
};

// The physics of environments [begin, end): one branch-free pass, so that with FastMath the
// compiler steps several environments per instruction.
template <class Env, class M>
void step_physics(const SoaBatch<Env>& batch, const typename Env::Action* actions, int64_t begin,
                  int64_t end, const StepOut& out) {
  double* physics = batch.physics(0);  // row d starts at physics + d * n
  const int64_t n = batch.size();
  int64_t* steps = batch.steps();
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) {
    double s[Env::kStateDim];
    for (int d = 0; d < Env::kStateDim; ++d) s[d] = physics[d * n + i];
    bool terminated = false;
    const double reward = Env::template step<M>(s, actions[i], &terminated);
    for (int d = 0; d < Env::kStateDim; ++d) physics[d * n + i] = s[d];
    const int64_t t = steps[i] + 1;
    steps[i] = t;
    Env::template observe<M>(s, out.obs + i * Env::kObsDim);
    out.reward[i] = static_cast<float>(reward);
    out.terminated[i] = terminated;
    out.truncated[i] = !terminated && t >= Env::kMaxSteps;
  }
}

// One step of environments [begin, end) with same-step auto-reset: an environment whose
// episode ended reports its last observation in final_obs and the next episode's first in obs.
template <class Env>
void step_range(const SoaBatch<Env>& batch, const typename Env::Action* actions, int64_t begin,
                int64_t end, const StepOut& out) {
  // Each environment takes FastMath unless its state was set far out of the usual range (the
  // C library reduces any angle exactly): which one never depends on its neighbours.
  if (batch.within(begin, end, FastMath::kRange)) {
    step_physics<Env, FastMath>(batch, actions, begin, end, out);
  } else {
    for (int64_t i = begin; i < end; ++i) {
      if (batch.within(i, i + 1, FastMath::kRange))
        step_physics<Env, FastMath>(batch, actions, i, i + 1, out);
      else
        step_physics<Env, LibMath>(batch, actions, i, i + 1, out);
    }
  }
  constexpr int O = Env::kObsDim;
  std::memcpy(out.final_obs + begin * O, out.obs + begin * O, sizeof(float) * O * (end - begin));
  for (int64_t i = begin; i < end; ++i) {
    if (out.terminated[i] || out.truncated[i]) {
      batch.restart(i);
      batch.observe(i, out.obs + i * O);
    }
  }
}

}  // namespace metagraph::envs
