// components.envs._native: the classic-control cores behind two doors, a threaded host pool
// (nanobind, GIL released while stepping) and XLA FFI handlers (capsules for jax.ffi).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "batch.h"
#include "classic_control.h"
#include "ffi_handlers.h"
#include "numpy_arrays.h"
#include "thread_pool.h"

namespace nb = nanobind;
namespace envs = metagraph::envs;
using envs::array_data;
using envs::new_array;

namespace {

// A host pool of n environments. Safe to call from several Python threads at once: every
// call that reads or writes the environments holds the pool's lock (taken with the GIL
// released), so concurrent calls give the results of some serial order.
template <class Env>
class Pool {
 public:
  using Action = typename Env::Action;
  Pool(int64_t num_envs, uint64_t seed, int num_threads)
      : num_envs_(check_size(num_envs)),
        storage_(static_cast<size_t>(envs::kRows<Env>) * num_envs_),
        threads_(num_threads < 1 ? 1 : num_threads) {
    reseed(seed);
  }

  int64_t num_envs() const { return static_cast<int64_t>(num_envs_); }
  int num_threads() const { return threads_.size(); }
  bool closed() const { return closed_.load(); }
  void close() { closed_.store(true); }

  // With a seed, every environment restarts its stream from (seed, index); without one,
  // each draws its next initial state from where its stream is.
  nb::object reset(std::optional<uint64_t> seed) {
    check_open();
    auto [array, obs] = new_array<float>({rows(), Env::kObsDim});
    locked([&] {
      if (seed) {
        reseed(*seed);
      } else {
        for (size_t i = 0; i < num_envs_; ++i) batch().restart(i);
      }
      observe_all(obs);
    });
    return array;
  }

  // Start every environment from the given physical states (Gymnasium's own layout).
  nb::object reset_to(nb::handle physics) {
    check_open();
    const std::vector<double> p = copy_of<double>(physics, num_envs_ * Env::kStateDim,
                                                  "physical states");
    for (size_t i = 0; i < num_envs_; ++i)
      if (!Env::valid(p.data() + i * Env::kStateDim))
        throw std::invalid_argument(std::string(Env::kId) + ": state of environment " +
                                    std::to_string(i) + " is not finite");
    auto [array, obs] = new_array<float>({rows(), Env::kObsDim});
    locked([&] {
      for (size_t i = 0; i < num_envs_; ++i) {
        batch().store(i, p.data() + i * Env::kStateDim);
        batch().steps()[i] = 0;
      }
      observe_all(obs);
    });
    return array;
  }

  // One step of every environment. Refuses (before any environment moves) actions out of
  // range or not finite, and environments whose state is not finite (set far out of range by
  // reset_to, the physics overflowed), with the in-graph step's messages.
  nb::tuple step(nb::handle actions) {
    check_open();
    const size_t n = num_envs_;
    // A private copy: another Python thread may write the caller's array once the GIL is free.
    const std::vector<Action> a = copy_of<Action>(actions, n, "actions");
    const std::string problem = envs::check_actions<Env>(a.data(), static_cast<int64_t>(n));
    if (!problem.empty()) throw std::invalid_argument(problem);
    // Fresh arrays every step: a caller may keep them. Every element is written by step_range.
    const npy_intp d = Env::kObsDim;
    auto [obs_array, obs] = new_array<float>({rows(), d});
    auto [final_array, final_obs] = new_array<float>({rows(), d});
    auto [reward_array, reward] = new_array<float>({rows()});
    auto [terminated_array, terminated] = new_array<bool>({rows()});
    auto [truncated_array, truncated] = new_array<bool>({rows()});
    std::string invalid;
    locked([&] {
      const envs::SoaBatch<Env> all = batch();
      const int64_t bad = all.first_invalid(0, static_cast<int64_t>(n));
      if (bad < static_cast<int64_t>(n)) {
        invalid = all.invalid_message(bad);
        return;
      }
      const envs::StepOut out{obs, reward, terminated, truncated, final_obs};
      threads_.run(static_cast<int64_t>(n), [&](int64_t begin, int64_t end) {
        envs::step_range<Env>(all, a.data(), begin, end, out);
      });
    });
    if (!invalid.empty()) throw std::invalid_argument(invalid);
    bool any_done = false;  // saves the caller a pass over both flag arrays
    for (size_t i = 0; i < n && !any_done; ++i) any_done = terminated[i] || truncated[i];
    return nb::make_tuple(obs_array, reward_array, terminated_array, truncated_array,
                          final_array, any_done);
  }

  nb::object physics() {
    auto [array, data] = new_array<double>({rows(), Env::kStateDim});
    locked([&] {
      for (size_t i = 0; i < num_envs_; ++i) batch().load(i, data + i * Env::kStateDim);
    });
    return array;
  }

  nb::object elapsed_steps() {
    auto [array, data] = new_array<int32_t>({rows()});
    locked([&] {
      for (size_t i = 0; i < num_envs_; ++i) data[i] = static_cast<int32_t>(batch().steps()[i]);
    });
    return array;
  }

  // Pickling: (num_envs, num_threads, closed, the whole state as uint64[kRows, num_envs]),
  // so that a copy goes on exactly where the original is (streams and step counts included).
  nb::tuple get_state() {
    auto [array, data] = new_array<uint64_t>({static_cast<npy_intp>(envs::kRows<Env>), rows()});
    locked([&] { std::memcpy(data, storage_.data(), sizeof(uint64_t) * storage_.size()); });
    return nb::make_tuple(num_envs(), num_threads(), closed(), array);
  }
  // The pool pickled by get_state, built in place at `self` (nanobind's __setstate__).
  static void set_state(Pool* self, const nb::tuple& state) {
    if (state.size() != 4)
      throw std::invalid_argument(std::string(Env::kId) + ": a pickled pool is a 4-tuple");
    const auto num_envs = nb::cast<int64_t>(state[0]);
    const std::vector<uint64_t> words = copy_of<uint64_t>(
        state[3], static_cast<size_t>(envs::kRows<Env>) * check_size(num_envs), "pickled state");
    const envs::SoaBatch<Env> pickled(const_cast<uint64_t*>(words.data()), num_envs);
    const int64_t bad = pickled.first_invalid(0, num_envs);
    if (bad < num_envs)
      throw std::invalid_argument("pickled pool: " + pickled.invalid_message(bad));
    new (self) Pool(num_envs, 0, nb::cast<int>(state[1]));
    self->storage_ = words;
    self->closed_.store(nb::cast<bool>(state[2]));
  }

 private:
  static size_t check_size(int64_t n) {
    if (n < 1 || n > (int64_t{1} << 28))
      throw std::invalid_argument(std::string(Env::kId) + ": num_envs must be in [1, 2^28], got " +
                                  std::to_string(n));
    return static_cast<size_t>(n);
  }
  void check_open() const {
    if (closed_.load()) throw std::runtime_error(std::string(Env::kId) + ": the pool is closed");
  }
  // Runs f, which touches the environments but no Python object, under the pool's lock with
  // the GIL released (a thread waiting for the lock never blocks the interpreter).
  template <class F>
  void locked(F&& f) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    f();
  }
  // A copy of `count` T from a NumPy array (checked as array_data does).
  template <class T>
  static std::vector<T> copy_of(nb::handle obj, size_t count, const char* what) {
    const T* data = array_data<T>(obj, count, Env::kId, what);
    return std::vector<T>(data, data + count);
  }
  void reseed(uint64_t seed) {
    for (size_t i = 0; i < num_envs_; ++i) batch().reseed(i, seed, i);
  }
  npy_intp rows() const { return static_cast<npy_intp>(num_envs_); }
  // The environments' state, structure of arrays (batch.h), in storage_.
  envs::SoaBatch<Env> batch() const {
    return envs::SoaBatch<Env>(const_cast<uint64_t*>(storage_.data()), num_envs());
  }
  void observe_all(float* obs) const {
    for (size_t i = 0; i < num_envs_; ++i) batch().observe(i, obs + i * Env::kObsDim);
  }

  size_t num_envs_;
  std::vector<uint64_t> storage_;
  envs::ThreadPool threads_;
  std::mutex mutex_;  // held by every call that reads or writes storage_
  std::atomic<bool> closed_{false};
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
      .def("reset_to", &P::reset_to, nb::arg("physics"))
      .def("step", &P::step, nb::arg("actions"))
      .def("physics", &P::physics)
      .def("elapsed_steps", &P::elapsed_steps)
      .def("__getstate__", &P::get_state)
      .def("__setstate__", &P::set_state);
  nb::dict info;
  info["pool"] = m.attr(pool_name);
  info["state_dim"] = Env::kStateDim;
  info["obs_dim"] = Env::kObsDim;
  info["max_steps"] = Env::kMaxSteps;
  info["state_rows"] = envs::kRows<Env>;
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
  if (_import_array() < 0) throw nb::python_error();  // NumPy's C API
  nb::dict registry;
  METAGRAPH_BIND(CartPole);
  METAGRAPH_BIND(Acrobot);
  METAGRAPH_BIND(MountainCar);
  METAGRAPH_BIND(MountainCarContinuous);
  METAGRAPH_BIND(Pendulum);
  m.attr("ENVIRONMENTS") = registry;
}
