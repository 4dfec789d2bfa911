// XLA FFI handlers: reset and step of a batch of environments inside a compiled program.
// The environment state crosses XLA as uint32[..., kRows, n, 2]: structure-of-arrays blocks
// (batch.h). Every leading dimension is a batch of blocks, so vmap (broadcast_all) just means
// more environments.
#pragma once
#include <algorithm>
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

// The state is uint32[..., kRows, n, 2]: one structure-of-arrays block (batch.h) of n
// environments per leading index. Returns n, or -1 when the shape is not of that form.
template <class Env>
int64_t block_size(const ffi::Buffer<ffi::U32>& state) {
  const auto dims = state.dimensions();
  const size_t rank = dims.size();
  if (rank < 3 || dims[rank - 1] != 2 || dims[rank - 3] != kRows<Env>) return -1;
  return dims[rank - 2];
}

template <class Env>
SoaBatch<Env> block(uint32_t* state, int64_t n, int64_t index) {
  return SoaBatch<Env>(state + index * kRows<Env> * n * 2, n);
}

// key: uint32[G, 2] (G JAX keys, G >= 1); state: uint32[G, kRows, n, 2]; obs: float32[G, n, O].
// Environment j of block g draws from the stream of (key g, j).
template <class Env>
ffi::Error ResetImpl(ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::U32> state,
                     ffi::ResultBuffer<ffi::F32> obs) {
  const int64_t num_keys = static_cast<int64_t>(key.element_count() / 2);
  const int64_t total = static_cast<int64_t>(obs->element_count() / Env::kObsDim);
  if (num_keys < 1 || key.element_count() % 2 != 0 || total % num_keys != 0 ||
      state->element_count() != static_cast<size_t>(total) * kRows<Env> * 2 ||
      obs->element_count() != static_cast<size_t>(total) * Env::kObsDim)
    return ffi::Error::InvalidArgument(std::string(Env::kId) + " reset: inconsistent buffer sizes");
  if (!aligned8(state->untyped_data()))
    return ffi::Error::Internal("reset: state buffer is not 8-byte aligned");
  const uint32_t* keys = key.typed_data();
  const int64_t n = total / num_keys;
  for (int64_t g = 0; g < num_keys; ++g) {
    const uint64_t seed = (static_cast<uint64_t>(keys[2 * g]) << 32) | keys[2 * g + 1];
    const SoaBatch<Env> batch = block<Env>(state->typed_data(), n, g);
    for (int64_t j = 0; j < n; ++j) {
      batch.reseed(j, seed, static_cast<uint64_t>(j));
      batch.observe(j, obs->typed_data() + (g * n + j) * Env::kObsDim);
    }
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
  const int64_t n = block_size<Env>(state_in);
  const int64_t total = n > 0 ? static_cast<int64_t>(words / (kRows<Env> * 2)) : 0;
  if (n <= 0 || words % (static_cast<size_t>(n) * kRows<Env> * 2) != 0 ||
      state_out->element_count() != words ||
      action.element_count() != static_cast<size_t>(total) ||
      obs->element_count() != static_cast<size_t>(total) * Env::kObsDim ||
      final_obs->element_count() != static_cast<size_t>(total) * Env::kObsDim ||
      reward->element_count() != static_cast<size_t>(total) ||
      terminated->element_count() != static_cast<size_t>(total) ||
      truncated->element_count() != static_cast<size_t>(total))
    return ffi::Error::InvalidArgument(std::string(Env::kId) + " step: inconsistent buffer sizes");
  if (!aligned8(state_out->untyped_data()))
    return ffi::Error::Internal("step: state buffer is not 8-byte aligned");
  const auto* actions = reinterpret_cast<const typename Env::Action*>(action.untyped_data());
  const std::string problem = check_actions<Env>(actions, total);
  if (!problem.empty()) return ffi::Error::InvalidArgument(problem);
  if (state_out->untyped_data() != state_in.untyped_data())
    std::memcpy(state_out->untyped_data(), state_in.untyped_data(), words * sizeof(uint32_t));
  uint32_t* state = state_out->typed_data();
  const StepOut out{obs->typed_data(), reward->typed_data(), terminated->typed_data(),
                    truncated->typed_data(), final_obs->typed_data()};
  // A state that did not come from reset/step may hold anything: each thread checks its
  // range before stepping it. On an error the program fails, so no partial step is seen.
  std::atomic<int64_t> first_bad{total};
  try {
    parallel_for(num_threads, total, [&](int64_t begin, int64_t end) {
      for (int64_t g = begin / n; g * n < end; ++g) {  // the blocks that [begin, end) touches
        const int64_t lo = std::max(begin, g * n) - g * n;
        const int64_t hi = std::min(end, (g + 1) * n) - g * n;
        const SoaBatch<Env> batch = block<Env>(state, n, g);
        const int64_t bad = batch.first_invalid(lo, hi);
        if (bad < hi) {
          int64_t seen = first_bad.load();
          while (g * n + bad < seen && !first_bad.compare_exchange_weak(seen, g * n + bad)) {}
          return;
        }
        step_range<Env>(batch, actions + g * n, lo, hi, out.from(g * n, Env::kObsDim));
      }
    });
  } catch (const std::exception& e) {  // no exception may cross into XLA
    return ffi::Error(ffi::ErrorCode::kResourceExhausted, std::string(Env::kId) + " step: " +
                      e.what());
  }
  const int64_t bad = first_bad.load();
  if (bad < total)
    return ffi::Error::InvalidArgument(block<Env>(state, n, bad / n).invalid_message(
        bad % n, bad - bad % n));
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
