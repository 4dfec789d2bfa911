// A family's compiled module: each task's Python class (a task object made from keyword
// arguments, with its sizes, its host pool and its XLA FFI handlers). A family's module.cpp is
// these lines and nothing else:
//
//   #include "engine/module.h"
//   #include "catch.h"
//   METAGRAPH_TASK_HANDLERS(Catch, catch_env::Catch)
//   NB_MODULE(_catch, m) {
//     metagraph::engine::init_module(m);
//     METAGRAPH_BIND_TASK(m, Catch, catch_env::Catch);
//   }
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <utility>
#include <variant>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "config.h"
#include "ffi.h"
#include "ffi_gpu.h"
#include "instance.h"
#include "numpy_arrays.h"
#include "pool.h"
#include "task.h"

namespace metagraph::engine {

namespace nb = nanobind;

// A task object as Python holds it: the object, and its number for the FFI handlers.
template <class Task>
struct Handle {
  std::shared_ptr<const Task> task;
  int64_t instance;
};

// One keyword argument as a Config value; a TypeError naming it otherwise.
inline Config::Value config_value(const std::string& env_id, const std::string& key,
                                  nb::handle value) {
  PyObject* v = value.ptr();
  if (PyBool_Check(v)) return static_cast<bool>(v == Py_True);
  if (PyLong_Check(v)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0)
      throw std::invalid_argument(env_id + ": " + key + " is out of range (" +
                                  nb::cast<std::string>(nb::str(value)) + ")");
    return static_cast<int64_t>(x);
  }
  if (PyFloat_Check(v)) return PyFloat_AsDouble(v);
  if (PyUnicode_Check(v)) return nb::cast<std::string>(value);
  if (PyTuple_Check(v) || PyList_Check(v)) {
    std::vector<double> numbers;
    for (nb::handle item : nb::borrow<nb::sequence>(value)) {
      if (PyFloat_Check(item.ptr()) || (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())))
        numbers.push_back(PyFloat_AsDouble(item.ptr()));
      else
        throw nb::type_error((env_id + ": " + key + " must hold numbers").c_str());
      if (PyErr_Occurred()) throw nb::python_error();
    }
    return numbers;
  }
  throw nb::type_error((env_id + ": " + key + " must be a bool, int, float, str or a list of " +
                        "numbers, got " + nb::cast<std::string>(nb::str(value.type()))).c_str());
}

inline Config make_config(const std::string& env_id, const nb::dict& kwargs) {
  std::map<std::string, Config::Value> values;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    values.emplace(name, config_value(env_id, name, value));
  }
  return Config(env_id, std::move(values));
}

inline nb::object to_python(const Config::Value& value) {
  return std::visit([](const auto& v) -> nb::object {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::vector<double>>) {
      nb::list out;
      for (double x : v) out.append(nb::float_(x));
      return out;
    } else {
      return nb::cast(v);
    }
  }, value);
}

template <class Task, class = void>
struct HasInfo : std::false_type {};
template <class Task>
struct HasInfo<Task, std::void_t<decltype(std::declval<const Task&>().info())>>
    : std::true_type {};

// The rows of records uint64 (m, W) of `task`, and m (TypeError for another shape).
template <class Task>
std::pair<const uint64_t*, npy_intp> records_view(const Task& task, nb::handle records) {
  const int w = Batch<Task>::rows(task);
  auto* a = reinterpret_cast<PyArrayObject*>(records.ptr());
  if (!PyArray_Check(records.ptr()) || PyArray_NDIM(a) != 2 || PyArray_DIM(a, 1) != w)
    throw nb::type_error((task.id() + ": records must be uint64 (m, " + std::to_string(w) +
                          ")").c_str());
  const npy_intp m = PyArray_DIM(a, 0);
  return {array_data<uint64_t>(records, static_cast<size_t>(m) * w, task.id().c_str(),
                               "record words"), m};
}

// Refuses a task whose sizes the engine cannot work with (a user's task with a negative or
// absurd state size, observation or action count), when it is made and before any pool
// allocates by them.
template <class Task>
void check_sizes(const Task& task) {
  using T = Traits<Task>;
  auto need = [&](int64_t value, int64_t lo, int64_t hi, const std::string& what) {
    if (value < lo || value > hi)
      throw std::invalid_argument(task.id() + ": the task's " + what + " is " +
                                  std::to_string(value) + ", expected one in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  constexpr int64_t kLarge = int64_t{1} << 24;
  need(T::state_words(task), 1, kLarge, "state size (kStateWords or state_words())");
  need(task.obs_dim(), 1, kLarge, "obs_dim()");
  const std::vector<int64_t> shape = T::obs_shape(task);
  int64_t cells = 1;
  for (const int64_t d : shape) {
    need(d, 1, kLarge, "obs_shape() dimension");
    cells *= d;
  }
  if (shape.empty() || cells != task.obs_dim())
    throw std::invalid_argument(task.id() + ": the task's obs_shape() has " +
                                std::to_string(shape.size()) + " dimensions whose product is " +
                                std::to_string(cells) + ", expected a product of obs_dim() = " +
                                std::to_string(task.obs_dim()));
  if constexpr (T::kDiscrete)
    need(task.num_actions(), 1, kLarge, "num_actions()");
  else
    need(T::action_dim(task), 1, kLarge, "action_dim()");
  need(task.max_steps(), 1, int64_t{1} << 62, "max_steps()");
  need(task.physical_dim(), 0, kLarge, "physical_dim()");
  need(T::extras_dim(task), 0, kLarge, "extras_dim()");
}

// Binds `Task` as class `name` (made with `name(env_id, kwargs)`), its pool as `namePool`,
// and its FFI handlers as the class attribute `ffi_handlers`: {XLA platform ("cpu", "CUDA"):
// {"reset", "step", "legal", "playout": capsule}}.
struct TaskHandlers {
  void* reset;
  void* step;
  void* legal;
  void* playout;
};

template <class Task>
void bind_task(nb::module_& m, const char* name, TaskHandlers cpu, TaskHandlers gpu) {
  using H = Handle<Task>;
  using P = Pool<Task>;
  using T = Traits<Task>;
  nb::class_<H> task(m, name);
  task.def("__init__",
           [](H* self, const std::string& env_id, const nb::dict& kwargs) {
             auto object = std::make_shared<const Task>(make_config(env_id, kwargs));
             check_sizes(*object);
             const int64_t instance = Instance<Task>::add(object);
             new (self) H{std::move(object), instance};
           },
           nb::arg("env_id"), nb::arg("kwargs"))
      .def_prop_ro("instance", [](const H& h) { return h.instance; })
      .def_prop_ro("id", [](const H& h) { return h.task->id(); })
      .def_prop_ro("obs_dim", [](const H& h) { return h.task->obs_dim(); })
      .def_prop_ro("discrete", [](const H&) { return T::kDiscrete; })
      .def_prop_ro("action_dim", [](const H& h) { return T::action_dim(*h.task); })
      .def_prop_ro("num_actions",
                   [](const H& h) {
                     if constexpr (T::kDiscrete) return h.task->num_actions();
                     else return 0;
                   })
      .def_prop_ro("max_steps", [](const H& h) { return h.task->max_steps(); })
      .def_prop_ro("state_words", [](const H& h) { return T::state_words(*h.task); })
      .def_prop_ro("record_words", [](const H& h) { return Batch<Task>::rows(*h.task); })
      .def_prop_ro("physical_dim", [](const H& h) { return h.task->physical_dim(); })
      .def_prop_ro("float64_outputs", [](const H&) { return T::kFloat64Outputs; })
      .def_prop_ro("bool_observations", [](const H&) { return T::kBoolObservations; })
      .def_prop_ro("obs_shape",
                   [](const H& h) {
                     nb::list shape;
                     for (const int64_t d : T::obs_shape(*h.task)) shape.append(d);
                     return nb::tuple(shape);
                   })
      .def_prop_ro("extras_dim", [](const H& h) { return T::extras_dim(*h.task); })
      .def_prop_ro("has_legal", [](const H&) { return T::kHasLegal; })
      .def_prop_ro("extras_names",
                   [](const H& h) {
                     nb::list names;
                     for (const std::string& name : T::extras_names(*h.task))
                       names.append(nb::str(name.c_str()));
                     return nb::tuple(names);
                   })
      .def_prop_ro("num_players", [](const H& h) { return T::num_players(*h.task); })
      .def_prop_ro("min_per_thread", [](const H&) { return T::kMinPerThread; })
      .def("physical",
           [](const H& h, nb::handle records) {
             // The physical states of records uint64 (m, W), unchecked (for reading any state).
             const int w = Batch<Task>::rows(*h.task);
             const int p = h.task->physical_dim();
             const auto [in, m] = records_view(*h.task, records);
             auto [array, out] = new_array<double>({m, p});
             std::vector<double> s(w);
             for (npy_intp i = 0; i < m; ++i) {
               std::memcpy(s.data(), in + i * w, sizeof(double) * w);
               h.task->physical(s.data(), out + i * p);
             }
             return array;
           },
           nb::arg("records"))
      .def("check_records",
           [](const H& h, nb::handle records) {
             // ValueError naming the first of records uint64 (m, W) that reset and step could
             // not have produced (a forged or edited state); nothing is kept.
             const auto [in, m] = records_view(*h.task, records);
             checked_block(*h.task, in, m);
           },
           nb::arg("records"))
      .def_prop_ro("info", [](const H& h) {
        nb::dict out;
        if constexpr (HasInfo<Task>::value)
          for (const auto& [key, value] : h.task->info()) out[key.c_str()] = to_python(value);
        return out;
      });
  auto capsules = [](const TaskHandlers& h) {
    nb::dict out;
    out["reset"] = nb::capsule(h.reset);
    out["step"] = nb::capsule(h.step);
    out["legal"] = nb::capsule(h.legal);
    out["playout"] = nb::capsule(h.playout);
    return out;
  };
  nb::dict handlers;
  handlers["cpu"] = capsules(cpu);
  handlers["CUDA"] = capsules(gpu);
  task.attr("ffi_handlers") = handlers;
  const std::string pool_name = std::string(name) + "Pool";
  using S = typename P::Step;
  nb::class_<S>(m, (pool_name + "Step").c_str())
      .def_ro("obs", &S::obs)
      .def_ro("reward", &S::reward)
      .def_ro("terminated", &S::terminated)
      .def_ro("truncated", &S::truncated)
      .def_ro("final_obs", &S::final_obs)
      .def_ro("done", &S::done)
      .def_ro("final_done", &S::final_done)
      .def_ro("extras", &S::extras)
      .def_ro("any_done", &S::any_done);
  nb::class_<P>(m, pool_name.c_str())
      .def("__init__",
           [](P* self, const H& h, int64_t num_envs, uint64_t seed, int num_threads,
              uint64_t first_stream) {
             new (self) P(h.task, num_envs, seed, num_threads, first_stream);
           },
           nb::arg("task"), nb::arg("num_envs"), nb::arg("seed"), nb::arg("num_threads") = 1,
           nb::arg("first_stream") = 0)
      .def_prop_ro("num_envs", &P::num_envs)
      .def_prop_ro("num_threads", &P::num_threads)
      .def_prop_ro("closed", &P::closed)
      .def("close", &P::close)
      .def("reset", &P::reset, nb::arg("seed").none() = nb::none())
      .def("reset_to", &P::reset_to, nb::arg("physics"))
      .def("step", &P::step, nb::arg("actions"))
      .def("physics", &P::physics)
      .def("elapsed_steps", &P::elapsed_steps)
      .def("records", &P::records)
      .def("set_records", &P::set_records, nb::arg("records"))
      .def("legal_mask", &P::legal_mask);
  task.attr("Pool") = m.attr(pool_name.c_str());
}

// What every family module does first.
inline void init_module(nb::module_& m) {
  // Pools captured by JAX's compilation caches (an Environment's host door) are still alive
  // when the interpreter exits; that is not a reference-counting bug, so don't report it.
  nb::set_leak_warnings(false);
  if (_import_array() < 0) throw nb::python_error();  // NumPy's C API
  m.attr("ENGINE_VERSION") = 1;
}

}  // namespace metagraph::engine

#define METAGRAPH_TASK_HANDLERS(Name, Type)                                                   \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Name##_ffi_reset, ::metagraph::engine::ffi_reset<Type>,       \
                                ::metagraph::engine::reset_binding<Type>(                     \
                                    ::xla::ffi::Ffi::Bind()));                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Name##_ffi_step, ::metagraph::engine::ffi_step<Type>,         \
                                ::metagraph::engine::step_binding<Type>(                      \
                                    ::xla::ffi::Ffi::Bind()));                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Name##_ffi_legal, ::metagraph::engine::ffi_legal<Type>,       \
                                ::metagraph::engine::legal_binding(                           \
                                    ::xla::ffi::Ffi::Bind()));                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(Name##_ffi_playout, ::metagraph::engine::ffi_playout<Type>,   \
                                ::metagraph::engine::playout_binding<Type>(                   \
                                    ::xla::ffi::Ffi::Bind()));                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                               \
      Name##_ffi_reset_gpu,                                                                    \
      ::metagraph::engine::OnHost<&::metagraph::engine::ffi_reset<Type>>::run,                 \
      ::metagraph::engine::reset_binding<Type>(::metagraph::engine::gpu_base()));              \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                               \
      Name##_ffi_step_gpu,                                                                     \
      ::metagraph::engine::OnHost<&::metagraph::engine::ffi_step<Type>>::run,                  \
      ::metagraph::engine::step_binding<Type>(::metagraph::engine::gpu_base()));               \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                               \
      Name##_ffi_legal_gpu,                                                                    \
      ::metagraph::engine::OnHost<&::metagraph::engine::ffi_legal<Type>>::run,                 \
      ::metagraph::engine::legal_binding(::metagraph::engine::gpu_base()));                    \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                               \
      Name##_ffi_playout_gpu,                                                                  \
      ::metagraph::engine::OnHost<&::metagraph::engine::ffi_playout<Type>>::run,               \
      ::metagraph::engine::playout_binding<Type>(::metagraph::engine::gpu_base()));

#define METAGRAPH_BIND_TASK(m, Name, Type)                                                    \
  ::metagraph::engine::bind_task<Type>(                                                       \
      m, #Name,                                                                               \
      {reinterpret_cast<void*>(Name##_ffi_reset), reinterpret_cast<void*>(Name##_ffi_step),   \
       reinterpret_cast<void*>(Name##_ffi_legal), reinterpret_cast<void*>(Name##_ffi_playout)}, \
      {reinterpret_cast<void*>(Name##_ffi_reset_gpu),                                         \
       reinterpret_cast<void*>(Name##_ffi_step_gpu),                                          \
       reinterpret_cast<void*>(Name##_ffi_legal_gpu),                                         \
       reinterpret_cast<void*>(Name##_ffi_playout_gpu)})
