// components.envs._native: the classic-control cores behind two doors, a threaded host pool
// (nanobind, GIL released while stepping) and XLA FFI handlers (capsules for jax.ffi).
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "batch.h"
#include "classic_control.h"
#include "ffi_handlers.h"
#include "thread_pool.h"

namespace nb = nanobind;
namespace envs = metagraph::envs;

namespace {

template <class T>
using Array = nb::ndarray<nb::numpy, T>;

// A fresh NumPy array that owns `count` elements of T, filled in place by the C++ code.
template <class T>
std::pair<T*, Array<T>> new_array(std::initializer_list<size_t> shape) {
  size_t count = 1;
  for (size_t d : shape) count *= d;
  T* data = new T[count > 0 ? count : 1]();
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return {data, Array<T>(data, shape.size(), shape.begin(), owner)};
}

template <class Env>
class Pool {
 public:
  using Action = typename Env::Action;
  Pool(int64_t num_envs, uint64_t seed, int num_threads)
      : slots_(check_size(num_envs)), threads_(num_threads < 1 ? 1 : num_threads) {
    reseed(seed);
  }

  int64_t num_envs() const { return static_cast<int64_t>(slots_.size()); }
  int num_threads() const { return threads_.size(); }
  bool closed() const { return closed_; }
  void close() { closed_ = true; }

  // With a seed, every environment restarts its stream from (seed, index); without one,
  // each draws its next initial state from where its stream is.
  Array<float> reset(std::optional<uint64_t> seed) {
    check_open();
    if (seed) {
      reseed(*seed);
    } else {
      for (auto& slot : slots_) {
        slot.steps = 0;
        Env::reset(slot.physics, slot.rng);
      }
    }
    return observe_all();
  }

  // Start every environment from the given physical states (Gymnasium's own layout).
  Array<float> reset_to(nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> physics) {
    check_open();
    if (physics.shape(0) != slots_.size() || physics.shape(1) != Env::kStateDim)
      throw std::invalid_argument(std::string(Env::kId) + ": state must have shape (" +
                                  std::to_string(slots_.size()) + ", " +
                                  std::to_string(Env::kStateDim) + ")");
    const double* p = physics.data();
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!Env::valid(p + i * Env::kStateDim))
        throw std::invalid_argument(std::string(Env::kId) + ": state of environment " +
                                    std::to_string(i) + " is not finite");
    for (size_t i = 0; i < slots_.size(); ++i) {
      std::memcpy(slots_[i].physics, p + i * Env::kStateDim, sizeof(double) * Env::kStateDim);
      slots_[i].steps = 0;
    }
    return observe_all();
  }

  nb::tuple step(nb::ndarray<const Action, nb::c_contig, nb::device::cpu> actions) {
    check_open();
    const size_t n = slots_.size();
    if (actions.size() != n)
      throw std::invalid_argument(std::string(Env::kId) + ": expected " + std::to_string(n) +
                                  " actions, got " + std::to_string(actions.size()));
    const Action* a = actions.data();
    const std::string problem = envs::check_actions<Env>(a, static_cast<int64_t>(n));
    if (!problem.empty()) throw std::invalid_argument(problem);
    // The five outputs share one allocation, owned by one capsule (fresh arrays every step,
    // for the price of one). Every element is written by step_range.
    const size_t d = Env::kObsDim;
    char* block = new char[(2 * n * d + n) * sizeof(float) + 2 * n];
    nb::capsule owner(block, [](void* p) noexcept { delete[] static_cast<char*>(p); });
    float* obs = reinterpret_cast<float*>(block);
    float* final_obs = obs + n * d;
    float* reward = final_obs + n * d;
    bool* terminated = reinterpret_cast<bool*>(reward + n);
    bool* truncated = terminated + n;
    const size_t obs_shape[2] = {n, d};
    Array<float> obs_array(obs, 2, obs_shape, owner), final_array(final_obs, 2, obs_shape, owner);
    Array<float> reward_array(reward, 1, &n, owner);
    Array<bool> terminated_array(terminated, 1, &n, owner), truncated_array(truncated, 1, &n, owner);
    {
      nb::gil_scoped_release release;
      envs::StepOut out{obs, reward, terminated, truncated, final_obs};
      envs::Slot<Env>* slots = slots_.data();
      threads_.run(static_cast<int64_t>(n), [&](int64_t begin, int64_t end) {
        envs::step_range<Env>(slots, a, begin, end, out);
      });
    }
    bool any_done = false;  // saves the caller a pass over both flag arrays
    for (size_t i = 0; i < n && !any_done; ++i) any_done = terminated[i] || truncated[i];
    return nb::make_tuple(obs_array, reward_array, terminated_array, truncated_array,
                          final_array, any_done);
  }

  Array<double> physics() const {
    auto [data, array] = new_array<double>({slots_.size(), static_cast<size_t>(Env::kStateDim)});
    for (size_t i = 0; i < slots_.size(); ++i)
      std::memcpy(data + i * Env::kStateDim, slots_[i].physics, sizeof(double) * Env::kStateDim);
    return array;
  }

  Array<int32_t> elapsed_steps() const {
    auto [data, array] = new_array<int32_t>({slots_.size()});
    for (size_t i = 0; i < slots_.size(); ++i) data[i] = slots_[i].steps;
    return array;
  }

 private:
  static size_t check_size(int64_t n) {
    if (n < 1 || n > (int64_t{1} << 28))
      throw std::invalid_argument(std::string(Env::kId) + ": num_envs must be in [1, 2^28], got " +
                                  std::to_string(n));
    return static_cast<size_t>(n);
  }
  void check_open() const {
    if (closed_) throw std::runtime_error(std::string(Env::kId) + ": the pool is closed");
  }
  void reseed(uint64_t seed) {
    for (size_t i = 0; i < slots_.size(); ++i) envs::reset_slot<Env>(slots_[i], seed, i);
  }
  Array<float> observe_all() const {
    auto [obs, array] = new_array<float>({slots_.size(), static_cast<size_t>(Env::kObsDim)});
    for (size_t i = 0; i < slots_.size(); ++i)
      Env::observe(slots_[i].physics, obs + i * Env::kObsDim);
    return array;
  }

  std::vector<envs::Slot<Env>> slots_;
  envs::ThreadPool threads_;
  bool closed_ = false;
};

template <class Env>
void bind_env(nb::module_& m, const char* pool_name, nb::dict& registry, nb::capsule reset,
              nb::capsule step) {
  using P = Pool<Env>;
  nb::class_<P>(m, pool_name)
      .def(nb::init<int64_t, uint64_t, int>(), nb::arg("num_envs"), nb::arg("seed"),
           nb::arg("num_threads") = 1)
      .def_prop_ro("num_envs", &P::num_envs)
      .def_prop_ro("num_threads", &P::num_threads)
      .def_prop_ro("closed", &P::closed)
      .def("close", &P::close)
      .def("reset", &P::reset, nb::arg("seed").none() = nb::none())
      .def("reset_to", &P::reset_to, nb::arg("physics").noconvert())
      .def("step", &P::step, nb::arg("actions").noconvert())
      .def("physics", &P::physics)
      .def("elapsed_steps", &P::elapsed_steps);
  nb::dict info;
  info["pool"] = m.attr(pool_name);
  info["state_dim"] = Env::kStateDim;
  info["obs_dim"] = Env::kObsDim;
  info["max_steps"] = Env::kMaxSteps;
  info["state_words"] = envs::kWords<Env>;
  info["discrete"] = envs::kDiscrete<Env>;
  info["ffi_reset"] = reset;
  info["ffi_step"] = step;
  registry[Env::kId] = info;
}

}  // namespace

#define METAGRAPH_ENV_HANDLERS(Env)                                                            \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Env##Reset, envs::ResetImpl<envs::Env>,                        \
                                envs::reset_binding<envs::Env>());                             \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Env##Step, envs::StepImpl<envs::Env>,                          \
                                envs::step_binding<envs::Env>());

METAGRAPH_ENV_HANDLERS(CartPole)
METAGRAPH_ENV_HANDLERS(Acrobot)
METAGRAPH_ENV_HANDLERS(MountainCar)
METAGRAPH_ENV_HANDLERS(MountainCarContinuous)
METAGRAPH_ENV_HANDLERS(Pendulum)

#define METAGRAPH_BIND(Env)                                                                    \
  bind_env<envs::Env>(m, #Env "Pool", registry, nb::capsule(reinterpret_cast<void*>(Env##Reset)), \
                      nb::capsule(reinterpret_cast<void*>(Env##Step)))

NB_MODULE(_native, m) {
  m.doc() = "Classic-control environments in C++: threaded host pools and XLA FFI handlers";
  // Pools captured by JAX's compilation caches (an Environment's host door) are still alive
  // when the interpreter exits; that is not a reference-counting bug, so don't report it.
  nb::set_leak_warnings(false);
  nb::dict registry;
  METAGRAPH_BIND(CartPole);
  METAGRAPH_BIND(Acrobot);
  METAGRAPH_BIND(MountainCar);
  METAGRAPH_BIND(MountainCarContinuous);
  METAGRAPH_BIND(Pendulum);
  m.attr("ENVIRONMENTS") = registry;
}
