// The XLA FFI handlers of every task on a CUDA device: each runs the CPU handler (ffi.h) on
// host copies of its buffers (host_staging.h), so that a program placed on a GPU can step a
// native task inside it, the network's layers staying on the GPU. Same arguments, results,
// attributes and errors as the CPU handlers, with the GPU stream in front.
#pragma once
#include <cstdint>

#include "ffi.h"
#include "host_staging.h"

namespace metagraph::engine {

inline auto gpu_base() { return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>(); }

template <class Task>
ffi::Error ffi_reset_gpu(void* stream, ffi::Buffer<ffi::U32> key,
                         ffi::ResultBuffer<ffi::U32> state, ffi::ResultBuffer<ffi::F32> obs,
                         int64_t instance) {
  HostStaging host(stream);
  auto key_h = host.in(key);
  auto state_h = host.out(state);
  auto obs_h = host.out(obs);
  if (!host.wait_inputs()) return host.error();
  return host.finish(ffi_reset<Task>(key_h, state_h, obs_h, instance));
}

template <class Task>
ffi::Error ffi_step_gpu(void* stream, ffi::Buffer<ffi::U32> state_in, ActionBuffer<Task> action,
                        ffi::ResultBuffer<ffi::U32> state_out, ffi::ResultBuffer<ffi::F32> obs,
                        ffi::ResultBuffer<ffi::F32> reward,
                        ffi::ResultBuffer<ffi::PRED> terminated,
                        ffi::ResultBuffer<ffi::PRED> truncated,
                        ffi::ResultBuffer<ffi::F32> final_obs, ffi::ResultBuffer<ffi::F32> extras,
                        ffi::ResultBuffer<ffi::PRED> legal_mask, int32_t num_threads,
                        int64_t instance) {
  HostStaging host(stream);
  auto state_in_h = host.in(state_in);
  auto action_h = host.in(action);
  // The state result is XLA's alias of the state argument: the same host copy.
  auto state_out_h = host.out(state_out);
  auto obs_h = host.out(obs);
  auto reward_h = host.out(reward);
  auto terminated_h = host.out(terminated);
  auto truncated_h = host.out(truncated);
  auto final_h = host.out(final_obs);
  auto extras_h = host.out(extras);
  auto mask_h = host.out(legal_mask);
  if (!host.wait_inputs()) return host.error();
  return host.finish(ffi_step<Task>(state_in_h, action_h, state_out_h, obs_h, reward_h,
                                    terminated_h, truncated_h, final_h, extras_h, mask_h,
                                    num_threads, instance));
}

template <class Task>
ffi::Error ffi_legal_gpu(void* stream, ffi::Buffer<ffi::U32> state,
                         ffi::ResultBuffer<ffi::PRED> mask, int64_t instance) {
  HostStaging host(stream);
  auto state_h = host.in(state);
  auto mask_h = host.out(mask);
  if (!host.wait_inputs()) return host.error();
  return host.finish(ffi_legal<Task>(state_h, mask_h, instance));
}

template <class Task>
ffi::Error ffi_playout_gpu(void* stream, ffi::Buffer<ffi::U32> key, ffi::Buffer<ffi::U32> state,
                           ffi::ResultBuffer<ffi::F32> returns, ffi::ResultBuffer<ffi::F32> extras,
                           ffi::ResultBuffer<ffi::S32> length, int32_t num_threads,
                           int64_t instance) {
  HostStaging host(stream);
  auto key_h = host.in(key);
  auto state_h = host.in(state);
  auto returns_h = host.out(returns);
  auto extras_h = host.out(extras);
  auto length_h = host.out(length);
  if (!host.wait_inputs()) return host.error();
  return host.finish(ffi_playout<Task>(key_h, state_h, returns_h, extras_h, length_h,
                                       num_threads, instance));
}

}  // namespace metagraph::engine
