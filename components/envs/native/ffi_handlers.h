// XLA FFI handlers: reset and step of a batch of environments inside a compiled program.
// The environment state crosses XLA as uint32[..., kWords] (opaque slots); every leading
// dimension is a batch dimension, so vmap (broadcast_all) just means more environments.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "batch.h"
#include "thread_pool.h"
#include "xla/ffi/api/ffi.h"

namespace metagraph::envs {

namespace ffi = xla::ffi;

template <class Env>
using ActionBuffer =
    std::conditional_t<kDiscrete<Env>, ffi::Buffer<ffi::S32>, ffi::Buffer<ffi::F32>>;

inline bool aligned8(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

// Worker threads for in-graph steps (the `num_threads` attribute), shared by every handler in
// the process. One job at a time: a caller that finds them busy (two programs stepping at
// once) steps on its own thread, which gives the same results.
inline void parallel_for(int num_threads, int64_t n,
                         const std::function<void(int64_t, int64_t)>& job) {
  static std::mutex guard;
  static std::unique_ptr<ThreadPool> pool;
  std::unique_lock<std::mutex> lock(guard, std::try_to_lock);
  if (num_threads <= 1 || !lock.owns_lock()) {
    job(0, n);
    return;
  }
  if (!pool || pool->size() != num_threads) pool = std::make_unique<ThreadPool>(num_threads);
  pool->run(n, job);
}

// key: uint32[K, 2] (K JAX keys, K >= 1); state: uint32[K * n, W]; obs: float32[K * n, O].
template <class Env>
ffi::Error ResetImpl(ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::U32> state,
                     ffi::ResultBuffer<ffi::F32> obs) {
  const int64_t num_keys = static_cast<int64_t>(key.element_count() / 2);
  const int64_t n = static_cast<int64_t>(obs->element_count() / Env::kObsDim);
  if (num_keys < 1 || key.element_count() % 2 != 0 || n % num_keys != 0 ||
      state->element_count() != static_cast<size_t>(n) * kWords<Env> ||
      obs->element_count() != static_cast<size_t>(n) * Env::kObsDim)
    return ffi::Error::InvalidArgument(std::string(Env::kId) + " reset: inconsistent buffer sizes");
  if (!aligned8(state->untyped_data()))
    return ffi::Error::Internal("reset: state buffer is not 8-byte aligned");
  auto* slots = reinterpret_cast<Slot<Env>*>(state->typed_data());
  const uint32_t* keys = key.typed_data();
  const int64_t per_key = n / num_keys;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i / per_key;
    const uint64_t seed = (static_cast<uint64_t>(keys[2 * k]) << 32) | keys[2 * k + 1];
    reset_slot<Env>(slots[i], seed, static_cast<uint64_t>(i % per_key));
    Env::observe(slots[i].physics, obs->typed_data() + i * Env::kObsDim);
  }
  return ffi::Error::Success();
}

template <class Env>
ffi::Error StepImpl(ffi::Buffer<ffi::U32> state_in, ActionBuffer<Env> action,
                    ffi::ResultBuffer<ffi::U32> state_out, ffi::ResultBuffer<ffi::F32> obs,
                    ffi::ResultBuffer<ffi::F32> reward, ffi::ResultBuffer<ffi::PRED> terminated,
                    ffi::ResultBuffer<ffi::PRED> truncated,
                    ffi::ResultBuffer<ffi::F32> final_obs, int32_t num_threads) {
  const size_t words = state_in.element_count();
  const int64_t n = static_cast<int64_t>(words / kWords<Env>);
  if (words % kWords<Env> != 0 || state_out->element_count() != words ||
      action.element_count() != static_cast<size_t>(n) ||
      obs->element_count() != static_cast<size_t>(n) * Env::kObsDim ||
      final_obs->element_count() != static_cast<size_t>(n) * Env::kObsDim ||
      reward->element_count() != static_cast<size_t>(n) ||
      terminated->element_count() != static_cast<size_t>(n) ||
      truncated->element_count() != static_cast<size_t>(n))
    return ffi::Error::InvalidArgument(std::string(Env::kId) + " step: inconsistent buffer sizes");
  if (!aligned8(state_out->untyped_data()))
    return ffi::Error::Internal("step: state buffer is not 8-byte aligned");
  const auto* actions = reinterpret_cast<const typename Env::Action*>(action.untyped_data());
  const std::string problem = check_actions<Env>(actions, n);
  if (!problem.empty()) return ffi::Error::InvalidArgument(problem);
  if (state_out->untyped_data() != state_in.untyped_data())
    std::memcpy(state_out->untyped_data(), state_in.untyped_data(), words * sizeof(uint32_t));
  auto* slots = reinterpret_cast<Slot<Env>*>(state_out->typed_data());
  StepOut out{obs->typed_data(), reward->typed_data(), terminated->typed_data(),
              truncated->typed_data(), final_obs->typed_data()};
  // A state that did not come from reset/step may hold anything: each thread checks its
  // range before stepping it. On an error the program fails, so no partial step is seen.
  std::atomic<int64_t> first_bad{n};
  parallel_for(num_threads, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (!Env::valid(slots[i].physics)) {
        int64_t seen = first_bad.load();
        while (i < seen && !first_bad.compare_exchange_weak(seen, i)) {}
        return;
      }
    }
    step_range<Env>(slots, actions, begin, end, out);
  });
  if (first_bad.load() < n)
    return ffi::Error::InvalidArgument(std::string(Env::kId) + " step: environment " +
                                       std::to_string(first_bad.load()) +
                                       " has a non-finite state");
  return ffi::Error::Success();
}

template <class Env>
constexpr auto reset_binding() {
  return ffi::Ffi::Bind()
      .Arg<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::F32>>();
}

template <class Env>
constexpr auto step_binding() {
  return ffi::Ffi::Bind()
      .Arg<ffi::Buffer<ffi::U32>>()
      .template Arg<ActionBuffer<Env>>()
      .template Ret<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Attr<int32_t>("num_threads");
}

}  // namespace metagraph::envs
