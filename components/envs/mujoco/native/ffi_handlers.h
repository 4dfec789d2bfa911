// XLA FFI handlers of the MuJoCo environments: reset and step inside a compiled program.
// The environments' state crosses XLA as uint32[..., n, W, 2]: each environment's record of W
// 8-byte words (model.h: MuJoCo's integration state, tracked position, random stream, step
// count). Every leading dimension is more environments (vmap: broadcast_all). The `model`
// attribute names a registered Model (register_model): the task and its keyword arguments.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "model.h"
#include "rng.h"
#include "thread_pool.h"
#include "xla/ffi/api/ffi.h"

namespace metagraph::envs::mujoco {

namespace ffi = xla::ffi;

// key: uint32[G, 2]; state: uint32[G, n, W, 2]; obs: float32[G, n, O]. Environment j of block
// g draws from the stream of (key g, j), as environment j of a host pool seeded with the key.
inline ffi::Error MujocoResetImpl(ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::U32> state,
                                  ffi::ResultBuffer<ffi::F32> obs, int64_t model_id) {
  const std::shared_ptr<const Model> model = find_model(model_id);
  if (!model) return ffi::Error::InvalidArgument("MuJoCo reset: unknown model " +
                                                 std::to_string(model_id));
  const int64_t w = model->record_words();
  const int64_t o = model->obs_dim();
  const int64_t num_keys = static_cast<int64_t>(key.element_count() / 2);
  const int64_t total = static_cast<int64_t>(obs->element_count() / o);
  if (num_keys < 1 || key.element_count() % 2 != 0 || total % num_keys != 0 ||
      state->element_count() != static_cast<size_t>(total * w * 2) ||
      obs->element_count() != static_cast<size_t>(total * o))
    return ffi::Error::InvalidArgument(std::string(model->id()) +
                                       " reset: inconsistent buffer sizes");
  const int64_t n = total / num_keys;
  const uint32_t* keys = key.typed_data();
  try {
    ScratchData data(*model);
    std::vector<double> scratch(model->scratch_size());
    for (int64_t i = 0; i < total; ++i) {
      const int64_t g = i / n;
      const uint64_t seed = (static_cast<uint64_t>(keys[2 * g]) << 32) | keys[2 * g + 1];
      EnvCarry carry{{0.0, 0.0}, stream_state(seed, static_cast<uint64_t>(i % n)), 0};
      reset_env(*model, data.get(), carry, obs->typed_data() + i * o, scratch.data());
      save_record(*model, data.get(), carry, state->typed_data() + i * w * 2, scratch.data());
    }
  } catch (const std::exception& e) {  // no exception may cross into XLA
    return ffi::Error(ffi::ErrorCode::kResourceExhausted, e.what());
  }
  return ffi::Error::Success();
}

inline ffi::Error MujocoStepImpl(ffi::Buffer<ffi::U32> state_in, ffi::Buffer<ffi::F32> action,
                                 ffi::ResultBuffer<ffi::U32> state_out,
                                 ffi::ResultBuffer<ffi::F32> obs,
                                 ffi::ResultBuffer<ffi::F32> reward,
                                 ffi::ResultBuffer<ffi::PRED> terminated,
                                 ffi::ResultBuffer<ffi::PRED> truncated,
                                 ffi::ResultBuffer<ffi::F32> final_obs, int32_t num_threads,
                                 int64_t model_id) {
  const std::shared_ptr<const Model> model = find_model(model_id);
  if (!model) return ffi::Error::InvalidArgument("MuJoCo step: unknown model " +
                                                 std::to_string(model_id));
  const int64_t w = model->record_words();
  const int64_t o = model->obs_dim();
  const int64_t nu = model->get()->nu;
  const auto dims = state_in.dimensions();
  const size_t rank = dims.size();
  const size_t words = state_in.element_count();
  const int64_t total = static_cast<int64_t>(words / (w * 2));
  if (rank < 3 || dims[rank - 1] != 2 || dims[rank - 2] != w ||
      words != static_cast<size_t>(total * w * 2) || state_out->element_count() != words ||
      action.element_count() != static_cast<size_t>(total * nu) ||
      obs->element_count() != static_cast<size_t>(total * o) ||
      final_obs->element_count() != static_cast<size_t>(total * o) ||
      reward->element_count() != static_cast<size_t>(total) ||
      terminated->element_count() != static_cast<size_t>(total) ||
      truncated->element_count() != static_cast<size_t>(total))
    return ffi::Error::InvalidArgument(std::string(model->id()) +
                                       " step: inconsistent buffer sizes");
  const float* actions = action.typed_data();
  for (int64_t k = 0; k < total * nu; ++k) {
    if (!std::isfinite(actions[k]))
      return ffi::Error::InvalidArgument(std::string(model->id()) + ": action at index " +
                                         std::to_string(k / nu) + " is not finite (NaN or inf)");
  }
  if (state_out->untyped_data() != state_in.untyped_data())
    std::memcpy(state_out->untyped_data(), state_in.untyped_data(), words * sizeof(uint32_t));
  uint32_t* records = state_out->typed_data();
  // A state that did not come from reset or step may hold anything: every record is checked
  // before any environment moves. On an error the program fails: no partial step is seen.
  for (int64_t i = 0; i < total; ++i)
    if (!record_valid(*model, records + i * w * 2))
      return ffi::Error::InvalidArgument(invalid_record_message(*model, i));
  std::atomic<int64_t> first_bad{total};
  std::mutex message_mutex;
  std::string message;
  try {
    parallel_for(num_threads, total, [&](int64_t begin, int64_t end) {
      ScratchData data(*model);
      std::vector<double> scratch(model->scratch_size());
      for (int64_t i = begin; i < end; ++i) {
        uint32_t* record = records + i * w * 2;
        EnvCarry carry;
        load_record(*model, data.get(), carry, record, scratch.data());
        const int bad = step_env(*model, data.get(), carry, actions + i * nu,
                                 obs->typed_data() + i * o, final_obs->typed_data() + i * o,
                                 reward->typed_data() + i, terminated->typed_data() + i,
                                 truncated->typed_data() + i, scratch.data());
        if (bad >= 0) {
          std::lock_guard<std::mutex> lock(message_mutex);
          if (i < first_bad.load()) {
            first_bad.store(i);
            message = unstable_message(*model, i, bad);
          }
          return;
        }
        save_record(*model, data.get(), carry, record, scratch.data());
      }
    }, /*min_per_thread=*/1);
  } catch (const std::exception& e) {  // no exception may cross into XLA
    return ffi::Error(ffi::ErrorCode::kResourceExhausted, std::string(model->id()) + " step: " +
                      e.what());
  }
  if (first_bad.load() < total) return ffi::Error(ffi::ErrorCode::kFailedPrecondition, message);
  return ffi::Error::Success();
}

inline auto mujoco_reset_binding() {
  return ffi::Ffi::Bind()
      .Arg<ffi::Buffer<ffi::U32>>()
      .Ret<ffi::Buffer<ffi::U32>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Attr<int64_t>("model");
}

inline auto mujoco_step_binding() {
  return ffi::Ffi::Bind()
      .Arg<ffi::Buffer<ffi::U32>>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::Buffer<ffi::U32>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::Buffer<ffi::PRED>>()
      .Ret<ffi::Buffer<ffi::PRED>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Attr<int32_t>("num_threads")
      .Attr<int64_t>("model");
}

}  // namespace metagraph::envs::mujoco
