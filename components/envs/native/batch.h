// A batch of environments as structure-of-arrays slots, stepped over an index range with
// Gymnasium's same-step auto-reset. Used by the host pool (threads) and the XLA FFI handlers.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "classic_control.h"
#include "rng.h"

namespace metagraph::envs {

// One environment's whole state. The FFI passes it through XLA as uint32 words (kWords per
// environment), so its layout is plain data and its size a multiple of 8 bytes.
template <class Env>
struct Slot {
  double physics[Env::kStateDim];
  uint64_t rng;
  int32_t steps;
  int32_t reserved;
};

template <class Env>
constexpr int kWords = sizeof(Slot<Env>) / sizeof(uint32_t);

template <class Env>
constexpr bool kDiscrete = std::is_same_v<typename Env::Action, int32_t>;

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

template <class Env>
void reset_slot(Slot<Env>& slot, uint64_t seed, uint64_t index) {
  slot.rng = stream_state(seed, index);
  slot.steps = 0;
  slot.reserved = 0;
  Env::reset(slot.physics, slot.rng);
}

// Outputs of a step; any pointer may be null except obs.
struct StepOut {
  float* obs;
  float* reward;
  bool* terminated;
  bool* truncated;
  float* final_obs;
};

template <class Env>
void step_range(Slot<Env>* slots, const typename Env::Action* actions, int64_t begin,
                int64_t end, const StepOut& out) {
  for (int64_t i = begin; i < end; ++i) {
    Slot<Env>& slot = slots[i];
    bool terminated = false;
    const double reward = Env::step(slot.physics, actions[i], &terminated);
    slot.steps += 1;
    const bool truncated = !terminated && slot.steps >= Env::kMaxSteps;
    float* obs = out.obs + i * Env::kObsDim;
    Env::observe(slot.physics, obs);
    if (out.final_obs) std::memcpy(out.final_obs + i * Env::kObsDim, obs, sizeof(float) * Env::kObsDim);
    if (terminated || truncated) {  // same-step auto-reset: obs is the next episode's first
      slot.steps = 0;
      Env::reset(slot.physics, slot.rng);
      Env::observe(slot.physics, obs);
    }
    if (out.reward) out.reward[i] = static_cast<float>(reward);
    if (out.terminated) out.terminated[i] = terminated;
    if (out.truncated) out.truncated[i] = truncated;
  }
}

}  // namespace metagraph::envs
