// The XLA FFI handlers of every task: reset and step of a batch of environments inside a
// compiled program, functional (state in, state out, as XLA buffers). The state is
// uint32[..., W, n, 2]: one structure-of-arrays block (batch.h) of n environments per leading
// index, so vmap (broadcast_all) just means more environments. The `instance` attribute names
// the task object (instance.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "batch.h"
#include "instance.h"
#include "thread_pool.h"
#include "xla/ffi/api/ffi.h"

namespace metagraph::engine {

namespace ffi = xla::ffi;

// The XLA element type of a task's observations on the in-graph door: F32, or PRED for a task
// with bool observations.
template <class Task>
constexpr ffi::DataType kObservationType =
    Traits<Task>::kBoolObservations ? ffi::PRED : ffi::F32;

template <class Task>
using ActionBuffer = std::conditional_t<Traits<Task>::kDiscrete, ffi::Buffer<ffi::S32>,
                                        ffi::Buffer<ffi::F32>>;

inline bool aligned8(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

// The n of a state uint32[..., w, n, 2], or 0 when the buffer is not of that shape.
inline int64_t block_envs(const ffi::Buffer<ffi::U32>& state, int64_t w) {
  const auto dims = state.dimensions();
  const size_t rank = dims.size();
  if (rank < 3 || dims[rank - 1] != 2 || dims[rank - 3] != w || dims[rank - 2] < 1) return 0;
  return dims[rank - 2];
}

inline ffi::Error not_a_state(const std::string& where, int64_t w) {
  return ffi::Error::InvalidArgument(where + ": the state is not uint32[..., " +
                                     std::to_string(w) + ", n, 2]");
}

// key: uint32[G, 2] (G >= 1); state: uint32[G, W, n, 2]; obs: float32 (or bool: see
// kObservationType) [G, n, O]. Environment j
// of block g draws from the stream of (key g, j), as environment j of a host pool seeded with
// that key's 64 bits.
template <class Task>
ffi::Error ffi_reset(ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::U32> state,
                     ffi::ResultBuffer<kObservationType<Task>> obs, int64_t instance) {
  const Instance<Task>* owner = Instance<Task>::find(instance);
  if (owner == nullptr)
    return ffi::Error::InvalidArgument("reset: unknown task instance " + std::to_string(instance));
  const Task& task = owner->task();
  const int64_t o = task.obs_dim();
  const int64_t w = Batch<Task>::rows(task);
  const int64_t num_keys = static_cast<int64_t>(key.element_count() / 2);
  const int64_t total = o > 0 ? static_cast<int64_t>(obs->element_count() / o) : 0;
  if (num_keys < 1 || key.element_count() % 2 != 0 || total % num_keys != 0 ||
      state->element_count() != static_cast<size_t>(total * w * 2) ||
      obs->element_count() != static_cast<size_t>(total * o))
    return ffi::Error::InvalidArgument(task.id() + " reset: inconsistent buffer sizes");
  if (!aligned8(state->untyped_data()))
    return ffi::Error::Internal(task.id() + " reset: state buffer is not 8-byte aligned");
  const uint32_t* keys = key.typed_data();
  const int64_t n = total / num_keys;
  try {
    typename Instance<Task>::Lease ws(*owner);
    std::vector<double> scratch(Batch<Task>::rows(task));
    for (int64_t g = 0; g < num_keys; ++g) {
      const uint64_t seed = (static_cast<uint64_t>(keys[2 * g]) << 32) | keys[2 * g + 1];
      const Batch<Task> batch(task, state->typed_data() + g * w * n * 2, n);
      for (int64_t j = 0; j < n; ++j)
        batch.reseed(ws.get(), j, seed, static_cast<uint64_t>(j),
                     obs->typed_data() + (g * n + j) * o, scratch.data());
    }
  } catch (const std::exception& e) {  // no exception may cross into XLA
    return ffi::Error(ffi::ErrorCode::kResourceExhausted, task.id() + " reset: " + e.what());
  } catch (...) {  // a task that threw something else
    return ffi::Error(ffi::ErrorCode::kInternal,
                      task.id() + " reset: the task threw an exception (not a "
                          "std::exception)");
  }
  return ffi::Error::Success();
}

template <class Task>
ffi::Error ffi_step(ffi::Buffer<ffi::U32> state_in, ActionBuffer<Task> action,
                    ffi::ResultBuffer<ffi::U32> state_out,
                    ffi::ResultBuffer<kObservationType<Task>> obs,
                    ffi::ResultBuffer<ffi::F32> reward, ffi::ResultBuffer<ffi::PRED> terminated,
                    ffi::ResultBuffer<ffi::PRED> truncated,
                    ffi::ResultBuffer<kObservationType<Task>> final_obs,
                    ffi::ResultBuffer<ffi::F32> extras,
                    ffi::ResultBuffer<ffi::PRED> legal_mask, int32_t num_threads,
                    int64_t instance) {
  using T = Traits<Task>;
  const Instance<Task>* owner = Instance<Task>::find(instance);
  if (owner == nullptr)
    return ffi::Error::InvalidArgument("step: unknown task instance " + std::to_string(instance));
  const Task& task = owner->task();
  const int64_t w = Batch<Task>::rows(task);
  const int64_t o = task.obs_dim();
  const int64_t dim = T::action_dim(task);
  const int64_t e = T::extras_dim(task);
  int64_t a = 0;  // legal-mask bools per environment
  if constexpr (T::kDiscrete) a = task.num_actions();
  const size_t words = state_in.element_count();
  const int64_t n = block_envs(state_in, w);
  if (n == 0) return not_a_state(task.id() + " step", w);
  const int64_t total = static_cast<int64_t>(words / (w * 2));
  if (words != static_cast<size_t>(total * w * 2) || state_out->element_count() != words ||
      action.element_count() != static_cast<size_t>(total * dim) ||
      obs->element_count() != static_cast<size_t>(total * o) ||
      // An empty final_obs, extras or legal_mask is one the caller does not want (not
      // written).
      (final_obs->element_count() != static_cast<size_t>(total * o) &&
       final_obs->element_count() != 0) ||
      (legal_mask->element_count() != static_cast<size_t>(total * a) &&
       legal_mask->element_count() != 0) ||
      reward->element_count() != static_cast<size_t>(total) ||
      terminated->element_count() != static_cast<size_t>(total) ||
      truncated->element_count() != static_cast<size_t>(total) ||
      (extras->element_count() != static_cast<size_t>(total * e) &&
       extras->element_count() != 0))
    return ffi::Error::InvalidArgument(task.id() + " step: inconsistent buffer sizes");
  if (!aligned8(state_out->untyped_data()))
    return ffi::Error::Internal(task.id() + " step: state buffer is not 8-byte aligned");
  if (state_out->untyped_data() != state_in.untyped_data())
    std::memcpy(state_out->untyped_data(), state_in.untyped_data(), words * sizeof(uint32_t));
  uint32_t* state = state_out->typed_data();
  const auto* actions = reinterpret_cast<const typename T::Action*>(action.untyped_data());
  const bool want_final = final_obs->element_count() > 0 || o == 0;
  const bool want_mask = legal_mask->element_count() > 0 && a > 0;
  using O = typename T::GraphObservation;
  const StepOut<O, float> out{obs->typed_data(), reward->typed_data(), terminated->typed_data(),
                              truncated->typed_data(),
                              want_final ? final_obs->typed_data() : nullptr,
                              e > 0 && extras->element_count() > 0 ? extras->typed_data()
                                                                   : nullptr,
                              want_mask ? legal_mask->typed_data() : nullptr};
  const int threads = std::max(1, static_cast<int>(num_threads));
  std::vector<char> fast(static_cast<size_t>(threads) * T::kPartsPerThread, 0);
  FirstProblem bad_action, bad_state, failed;
  // A part [begin, end) of the total touches the blocks g = begin / n ... (end - 1) / n.
  auto blocks = [&](int64_t begin, int64_t end, auto&& f) {
    for (int64_t g = begin / n; g * n < end; ++g) {
      const int64_t lo = std::max(begin, g * n) - g * n;
      const int64_t hi = std::min(end, (g + 1) * n) - g * n;
      f(Batch<Task>(task, state + g * w * n * 2, n), g, lo, hi);
    }
  };
  const ThreadPool::Job check = [&](int p, int, int64_t begin, int64_t end) {
    std::vector<double> scratch(w);
    bool all_fast = true;
    blocks(begin, end, [&](const Batch<Task>& batch, int64_t g, int64_t lo, int64_t hi) {
      all_fast &= check_part(task, batch, actions + g * n * dim, lo, hi, g * n, bad_action,
                             bad_state, scratch.data());
    });
    fast[p] = all_fast;
  };
  const ThreadPool::Job step = [&](int p, int, int64_t begin, int64_t end) {
    typename Instance<Task>::Lease ws(*owner);
    std::vector<double> scratch(w);
    blocks(begin, end, [&](const Batch<Task>& batch, int64_t g, int64_t lo, int64_t hi) {
      step_part(task, ws.get(), batch, actions + g * n * dim, lo, hi, out.from(g * n, o, e, a),
                static_cast<bool>(fast[p]), g * n, failed, scratch.data());
    });
  };
  try {
    parallel_run(threads, T::kMinPerThread, T::kPartsPerThread, total, check, step,
                 [&] { return !bad_action.found() && !bad_state.found(); });
  } catch (const std::exception& e) {  // no exception may cross into XLA
    return ffi::Error(ffi::ErrorCode::kResourceExhausted, task.id() + " step: " + e.what());
  } catch (...) {  // a task that threw something else
    return ffi::Error(ffi::ErrorCode::kInternal,
                      task.id() + " step: the task threw an exception (not a "
                          "std::exception)");
  }
  // The state was not touched when a check failed; the program fails all the same, so that
  // no caller reads a step that did not happen.
  if (bad_action.found()) return ffi::Error::InvalidArgument(bad_action.message());
  if (bad_state.found()) return ffi::Error::InvalidArgument(bad_state.message());
  if (failed.found()) return ffi::Error(ffi::ErrorCode::kFailedPrecondition, failed.message());
  return ffi::Error::Success();
}

// state: uint32[..., W, n, 2]; mask: bool[..., n, num_actions], the legal actions of each
// environment's state (all true for a task without `legal`).
template <class Task>
ffi::Error ffi_legal(ffi::Buffer<ffi::U32> state, ffi::ResultBuffer<ffi::PRED> mask,
                     int64_t instance) {
  using T = Traits<Task>;
  const Instance<Task>* owner = Instance<Task>::find(instance);
  if (owner == nullptr)
    return ffi::Error::InvalidArgument("legal: unknown task instance " + std::to_string(instance));
  const Task& task = owner->task();
  if constexpr (!T::kDiscrete) {
    return ffi::Error::InvalidArgument(task.id() + ": continuous actions have no legal mask");
  } else {
    const int64_t w = Batch<Task>::rows(task);
    const int64_t a = task.num_actions();
    const int64_t n = block_envs(state, w);
    if (n == 0) return not_a_state(task.id() + " legal", w);
    const int64_t total = static_cast<int64_t>(state.element_count() / (w * 2));
    if (mask->element_count() != static_cast<size_t>(total * a))
      return ffi::Error::InvalidArgument(task.id() + " legal: inconsistent buffer sizes");
    if (!aligned8(state.untyped_data()))
      return ffi::Error::Internal(task.id() + " legal: state buffer is not 8-byte aligned");
    std::vector<double> s(w);
    bool* out = mask->typed_data();
    try {
      for (int64_t i = 0; i < total; ++i) {
        const Batch<Task> batch(
            task, const_cast<uint32_t*>(state.typed_data()) + (i / n) * w * n * 2, n);
        batch.load(i % n, s.data());
        T::legal_mask(task, s.data(), out + i * a);
      }
    } catch (const std::exception& e) {  // no exception may cross into XLA
      return ffi::Error::Internal(task.id() + " legal: the task threw: " + e.what());
    } catch (...) {
      return ffi::Error::Internal(task.id() + " legal: the task threw an exception (not a "
                                  "std::exception)");
    }
    return ffi::Error::Success();
  }
}

// Random playouts: key uint32[G, 2] (G >= 1, as reset's; with vmap's broadcast, one per
// leading index), state uint32[..., W, n, 2], left as it is. Each environment plays actions
// drawn uniformly among its legal ones (every action for a task without `legal`) from the
// stream of (key g, j), j its index within the key's share of the environments, until its
// episode terminates or its step count reaches max_steps: `returns` float32[..., n] the rewards
// summed along the way, `extras` float32[..., n, E] those of the state it ended in (a game's
// outcome for both players), `length` int32[..., n] the steps played. A state that reset and
// step could not have produced fails the call, as a step does (discrete tasks only), and so
// does a state without a legal action whose game goes on. A task's own random_legal drawing
// an action out of range fails it always; one `legal()` refuses, with `check_draws` (the
// conformance check; not in every playout, which a legality test a move would slow where
// `legal()` is dear: Othello's walks eight directions).
template <class Task>
ffi::Error ffi_playout(ffi::Buffer<ffi::U32> key, ffi::Buffer<ffi::U32> state_in,
                       ffi::ResultBuffer<ffi::F32> returns, ffi::ResultBuffer<ffi::F32> extras,
                       ffi::ResultBuffer<ffi::S32> length, int32_t num_threads,
                       bool check_draws, int64_t instance) {
  using T = Traits<Task>;
  const Instance<Task>* owner = Instance<Task>::find(instance);
  if (owner == nullptr)
    return ffi::Error::InvalidArgument("playout: unknown task instance " +
                                       std::to_string(instance));
  const Task& task = owner->task();
  if constexpr (!T::kDiscrete) {
    return ffi::Error::InvalidArgument(task.id() + ": playouts draw discrete actions only");
  } else {
    const int64_t w = Batch<Task>::rows(task);
    const int64_t e = T::extras_dim(task);
    const int64_t n = block_envs(state_in, w);
    if (n == 0) return not_a_state(task.id() + " playout", w);
    const int64_t total = static_cast<int64_t>(state_in.element_count() / (w * 2));
    const int64_t num_keys = static_cast<int64_t>(key.element_count() / 2);
    if (num_keys < 1 || key.element_count() % 2 != 0 || total % num_keys != 0 ||
        returns->element_count() != static_cast<size_t>(total) ||
        extras->element_count() != static_cast<size_t>(total * e) ||
        length->element_count() != static_cast<size_t>(total))
      return ffi::Error::InvalidArgument(task.id() + " playout: inconsistent buffer sizes");
    if (!aligned8(state_in.untyped_data()))
      return ffi::Error::Internal(task.id() + " playout: state buffer is not 8-byte aligned");
    auto* words = const_cast<uint32_t*>(state_in.typed_data());
    const uint32_t* keys = key.typed_data();
    const int64_t per_key = total / num_keys;
    const int a = task.num_actions();
    // A game's extra naming the player to move (-1 where the game ended): a state without a
    // legal action whose game goes on is the task's error, not the playout's end.
    const std::vector<std::string> names = T::extras_names(task);
    const auto found = std::find(names.begin(), names.end(), "player_to_move");
    const int64_t to_move = found == names.end() ? -1 : found - names.begin();
    FirstProblem bad_state, failed;
    const ThreadPool::Job play = [&](int, int, int64_t begin, int64_t end) {
      typename Instance<Task>::Lease ws(*owner);
      std::vector<double> s(w);
      std::vector<float> ended(static_cast<size_t>(e));
      std::vector<char> mask_store(static_cast<size_t>(a));
      bool* mask = reinterpret_cast<bool*>(mask_store.data());
      for (int64_t i = begin; i < end; ++i) {
        const Batch<Task> batch(task, words + (i / n) * w * n * 2, n);
        if (!batch.valid(i % n, s.data())) {  // loads the state into s
          bad_state.offer(i, batch.invalid_message(i % n, i));
          return;
        }
        const int64_t g = i / per_key;
        const uint64_t seed = (static_cast<uint64_t>(keys[2 * g]) << 32) | keys[2 * g + 1];
        uint64_t rng = stream_state(seed, static_cast<uint64_t>(i % per_key));
        int64_t t = batch.steps()[i % n];
        const int64_t start = t;
        double sum = 0.0;
        for (bool done = false; !done;) {
          // (each step from a valid state leaves a valid one: no check inside the loop)
          int32_t action = T::random_legal(task, s.data(), rng, mask);
          if (action < 0) {  // nothing legal: the game ended, or the task is wrong
            if constexpr (T::kHasExtras) {
              if (to_move >= 0) {
                task.extras(s.data(), ended.data());
                if (ended[to_move] >= 0) {
                  const int player = static_cast<int>(ended[to_move]);
                  failed.offer(i, task.id() + ": environment " + std::to_string(i) +
                                      " offers no legal action, yet its game is not over "
                                      "(player " + std::to_string(player) + " to move); a "
                                      "game that goes on must offer a move, a pass if "
                                      "nothing else (task.h)");
                  return;
                }
              }
            }
            break;
          }
          // a task's own random_legal gone wrong: never stepped
          if (action >= a ||
              (HasRandomLegal<Task>::value && check_draws && !T::legal(task, s.data(), action))) {
            failed.offer(i, task.id() + ": random_legal drew action " + std::to_string(action) +
                                (action >= a ? " outside [0, " + std::to_string(a) + ")"
                                             : std::string(", which legal() refuses")) +
                                " in environment " + std::to_string(i) + "'s state");
            return;
          }
          Step r;
          T::template step<false>(task, ws.get(), s.data(), &action, r);
          if (r.error >= 0) {
            failed.offer(i, task.id() + ": environment " + std::to_string(i) + " " +
                                T::error_message(task, r.error));
            return;
          }
          sum += r.reward;
          ++t;
          done = r.terminated || t >= task.max_steps();
        }
        returns->typed_data()[i] = static_cast<float>(sum);
        length->typed_data()[i] = static_cast<int32_t>(t - start);
        if constexpr (T::kHasExtras) task.extras(s.data(), extras->typed_data() + i * e);
      }
    };
    try {
      parallel_run(std::max(1, static_cast<int>(num_threads)), T::kMinPerThread,
                   T::kPartsPerThread, total, play);
    } catch (const std::exception& ex) {  // no exception may cross into XLA
      return ffi::Error(ffi::ErrorCode::kResourceExhausted, task.id() + " playout: " + ex.what());
    } catch (...) {  // a task that threw something else
      return ffi::Error(ffi::ErrorCode::kInternal,
                        task.id() + " playout: the task threw an exception (not a "
                            "std::exception)");
    }
    if (bad_state.found()) return ffi::Error::InvalidArgument(bad_state.message());
    if (failed.found()) return ffi::Error(ffi::ErrorCode::kFailedPrecondition, failed.message());
    return ffi::Error::Success();
  }
}

// The bindings: `base` is ffi::Ffi::Bind() for the CPU handlers, and the same with the GPU
// stream in front for the GPU ones (ffi_gpu.h).
template <class Base>
auto legal_binding(Base base) {
  return std::move(base).template Arg<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Attr<int64_t>("instance");
}

template <class Task, class Base>
auto reset_binding(Base base) {
  return std::move(base).template Arg<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<kObservationType<Task>>>()
      .template Attr<int64_t>("instance");
}

template <class Task, class Base>
auto playout_binding(Base base) {
  return std::move(base).template Arg<ffi::Buffer<ffi::U32>>()
      .template Arg<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::S32>>()
      .template Attr<int32_t>("num_threads")
      .template Attr<bool>("check_draws")
      .template Attr<int64_t>("instance");
}

template <class Task, class Base>
auto step_binding(Base base) {
  return std::move(base).template Arg<ffi::Buffer<ffi::U32>>()
      .template Arg<ActionBuffer<Task>>()
      .template Ret<ffi::Buffer<ffi::U32>>()
      .template Ret<ffi::Buffer<kObservationType<Task>>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Ret<ffi::Buffer<kObservationType<Task>>>()
      .template Ret<ffi::Buffer<ffi::F32>>()
      .template Ret<ffi::Buffer<ffi::PRED>>()
      .template Attr<int32_t>("num_threads")
      .template Attr<int64_t>("instance");
}

}  // namespace metagraph::engine
