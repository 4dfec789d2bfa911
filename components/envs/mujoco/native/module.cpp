// components.envs._mujoco: Gymnasium's v5 MuJoCo locomotion tasks on MuJoCo's C API, behind
// two doors: a threaded host pool (one persistent mjData per environment, GIL released while
// stepping) and XLA FFI handlers (capsules for jax.ffi). Built against the headers of the
// installed `mujoco` wheel and linked to its libmujoco.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "ffi_handlers.h"
#include "model.h"
#include "numpy_arrays.h"
#include "thread_pool.h"

namespace nb = nanobind;
namespace envs = metagraph::envs;
namespace mj = metagraph::envs::mujoco;
using envs::array_data;
using envs::new_array;

namespace {

template <class T>
T config_value(const nb::dict& config, const char* key) {
  if (!config.contains(key))
    throw std::invalid_argument(std::string("MuJoCo model config: missing ") + key);
  return nb::cast<T>(config[key]);
}

mj::Range config_range(const nb::dict& config, const char* key) {
  const nb::tuple pair = config_value<nb::tuple>(config, key);
  if (pair.size() != 2)
    throw std::invalid_argument(std::string("MuJoCo model config: ") + key + " must be a pair");
  return {nb::cast<double>(pair[0]), nb::cast<double>(pair[1])};
}

// A Model from Python: the task number, the XML file and every keyword argument (tasks.py).
std::shared_ptr<mj::Model> make_model(int task, const std::string& xml_path,
                                      const nb::dict& config) {
  if (task < 0 || task > static_cast<int>(mj::Task::kAnt))
    throw std::invalid_argument("MuJoCo model: unknown task " + std::to_string(task));
  mj::Config c;
  c.task = static_cast<mj::Task>(task);
  c.frame_skip = config_value<int>(config, "frame_skip");
  c.max_steps = config_value<int64_t>(config, "max_episode_steps");
  c.forward_reward_weight = config_value<double>(config, "forward_reward_weight");
  c.ctrl_cost_weight = config_value<double>(config, "ctrl_cost_weight");
  c.contact_cost_weight = config_value<double>(config, "contact_cost_weight");
  c.healthy_reward = config_value<double>(config, "healthy_reward");
  c.terminate_when_unhealthy = config_value<bool>(config, "terminate_when_unhealthy");
  c.healthy_state_range = config_range(config, "healthy_state_range");
  c.healthy_z_range = config_range(config, "healthy_z_range");
  c.healthy_angle_range = config_range(config, "healthy_angle_range");
  c.contact_force_range = config_range(config, "contact_force_range");
  c.reset_noise_scale = config_value<double>(config, "reset_noise_scale");
  c.exclude_current_positions_from_observation =
      config_value<bool>(config, "exclude_current_positions_from_observation");
  c.include_cfrc_ext_in_observation = config_value<bool>(config, "include_cfrc_ext_in_observation");
  c.main_body = config_value<int>(config, "main_body");
  c.main_body_name = config_value<std::string>(config, "main_body_name");
  return std::make_shared<mj::Model>(xml_path, c);
}

// A Model as Python sees it: the model, and its number for the FFI handlers.
struct ModelHandle {
  std::shared_ptr<const mj::Model> model;
  int64_t id;
};

ModelHandle new_handle(int task, const std::string& xml_path, const nb::dict& config) {
  std::shared_ptr<const mj::Model> model = make_model(task, xml_path, config);
  const int64_t id = mj::register_model(model);
  return {model, id};
}

// A host pool of n environments of one Model, one persistent mjData each. Every call that
// reads or writes the environments holds the pool's lock, taken with the GIL released.
class Pool {
 public:
  Pool(const ModelHandle& handle, int64_t num_envs, uint64_t seed, int num_threads)
      : model_(handle.model),
        n_(check_size(num_envs)),
        carry_(n_),
        threads_(num_threads < 1 ? 1 : num_threads, /*min_per_thread=*/1) {
    data_.reserve(n_);
    for (size_t i = 0; i < n_; ++i) data_.push_back(model_->make_data());
    reseed(seed);
    std::vector<double> obs(model_->obs_dim());
    std::vector<double> scratch(model_->scratch_size());
    for (size_t i = 0; i < n_; ++i)
      mj::reset_env(*model_, data_[i], carry_[i], obs.data(), scratch.data());
  }
  ~Pool() {
    for (mjData* d : data_) mj_deleteData(d);
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int64_t num_envs() const { return static_cast<int64_t>(n_); }
  int num_threads() const { return threads_.size(); }
  bool closed() const { return closed_.load(); }
  void close() { closed_.store(true); }

  // With a seed, environment i restarts its stream from (seed, i); without, each draws its
  // next initial state from where its stream is. Returns the first observations.
  nb::object reset(std::optional<uint64_t> seed) {
    check_open();
    auto [array, obs] = new_array<double>({rows(), model_->obs_dim()});
    locked([&] {
      if (seed) reseed(*seed);
      parallel([&](int64_t i, double* scratch) {
        mj::reset_env(*model_, data_[i], carry_[i], obs + i * model_->obs_dim(), scratch);
      });
    });
    return array;
  }

  // Gymnasium's reset to exact qpos (n, nq) and qvel (n, nv), float64; finite (checked).
  nb::object reset_to(nb::handle qpos, nb::handle qvel) {
    check_open();
    const mjModel* m = model_->get();
    const std::vector<double> p = copy_of<double>(qpos, n_ * m->nq, "qpos values");
    const std::vector<double> v = copy_of<double>(qvel, n_ * m->nv, "qvel values");
    for (double x : p)
      if (!std::isfinite(x)) throw std::invalid_argument(prefix() + "qpos must be finite");
    for (double x : v)
      if (!std::isfinite(x)) throw std::invalid_argument(prefix() + "qvel must be finite");
    auto [array, obs] = new_array<double>({rows(), model_->obs_dim()});
    locked([&] {
      parallel([&](int64_t i, double* scratch) {
        mj::reset_env_to(*model_, data_[i], carry_[i], p.data() + i * m->nq,
                         v.data() + i * m->nv, obs + i * model_->obs_dim(), scratch);
      });
    });
    return array;
  }

  // One step of every environment with float32 actions (n, nu), finite (checked before any
  // environment moves). An environment that goes unstable fails the step with its index.
  nb::tuple step(nb::handle actions) {
    check_open();
    const int nu = model_->get()->nu;
    const int o = model_->obs_dim();
    const std::vector<float> a = copy_of<float>(actions, n_ * nu, "action values");
    for (size_t k = 0; k < a.size(); ++k)
      if (!std::isfinite(a[k]))
        throw std::invalid_argument(prefix() + "action at index " + std::to_string(k / nu) +
                                    " is not finite (NaN or inf)");
    auto [obs_array, obs] = new_array<double>({rows(), o});
    auto [final_array, final_obs] = new_array<double>({rows(), o});
    auto [reward_array, reward] = new_array<double>({rows()});
    auto [terminated_array, terminated] = new_array<bool>({rows()});
    auto [truncated_array, truncated] = new_array<bool>({rows()});
    std::atomic<int64_t> first_bad{num_envs()};
    std::mutex message_mutex;
    std::string message;
    locked([&] {
      parallel([&](int64_t i, double* scratch) {
        const int bad = mj::step_env(*model_, data_[i], carry_[i], a.data() + i * nu,
                                     obs + i * o, final_obs + i * o, reward + i, terminated + i,
                                     truncated + i, scratch);
        if (bad >= 0) {
          std::lock_guard<std::mutex> lock(message_mutex);
          if (i < first_bad.load()) {
            first_bad.store(i);
            message = mj::unstable_message(*model_, i, bad);
          }
        }
      });
    });
    if (first_bad.load() < num_envs()) throw std::runtime_error(message);
    bool any_done = false;
    for (size_t i = 0; i < n_ && !any_done; ++i) any_done = terminated[i] || truncated[i];
    return nb::make_tuple(obs_array, reward_array, terminated_array, truncated_array,
                          final_array, any_done);
  }

  nb::object qpos() { return copy_rows(model_->get()->nq, [](const mjData* d) { return d->qpos; }); }
  nb::object qvel() { return copy_rows(model_->get()->nv, [](const mjData* d) { return d->qvel; }); }

  nb::object elapsed_steps() {
    auto [array, data] = new_array<int32_t>({rows()});
    locked([&] {
      for (size_t i = 0; i < n_; ++i) data[i] = static_cast<int32_t>(carry_[i].steps);
    });
    return array;
  }

  // Every environment's record (model.h), uint64[n, W]: what the in-graph door carries, and
  // what pickling keeps.
  nb::object records() {
    const int64_t w = model_->record_words();
    auto [array, data] = new_array<uint64_t>({rows(), static_cast<npy_intp>(w)});
    locked([&] {
      std::vector<double> scratch(model_->scratch_size());
      for (size_t i = 0; i < n_; ++i)
        mj::save_record(*model_, data_[i], carry_[i], data + i * w, scratch.data());
    });
    return array;
  }

  // Sets every environment from records (uint64[n, W]) that records() or the in-graph door
  // gave; each is checked first.
  void set_records(nb::handle records) {
    check_open();
    const int64_t w = model_->record_words();
    const std::vector<uint64_t> words = copy_of<uint64_t>(records, n_ * w, "record words");
    for (size_t i = 0; i < n_; ++i)
      if (!mj::record_valid(*model_, words.data() + i * w))
        throw std::invalid_argument(mj::invalid_record_message(*model_, i));
    locked([&] {
      std::vector<double> scratch(model_->scratch_size());
      for (size_t i = 0; i < n_; ++i)
        mj::load_record(*model_, data_[i], carry_[i], words.data() + i * w, scratch.data());
    });
  }

 private:
  std::string prefix() const { return std::string(model_->id()) + ": "; }
  size_t check_size(int64_t n) const {
    if (n < 1 || n > (int64_t{1} << 20))
      throw std::invalid_argument(prefix() + "num_envs must be in [1, 2^20], got " +
                                  std::to_string(n));
    return static_cast<size_t>(n);
  }
  void check_open() const {
    if (closed_.load()) throw std::runtime_error(prefix() + "the pool is closed");
  }
  template <class F>
  void locked(F&& f) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    f();
  }
  // f(i, scratch) for every environment, on the pool's threads.
  template <class F>
  void parallel(F&& f) {
    threads_.run(num_envs(), [&](int64_t begin, int64_t end) {
      std::vector<double> scratch(model_->scratch_size());
      for (int64_t i = begin; i < end; ++i) f(i, scratch.data());
    });
  }
  template <class T>
  std::vector<T> copy_of(nb::handle obj, size_t count, const char* what) const {
    const T* data = array_data<T>(obj, count, model_->id(), what);
    return std::vector<T>(data, data + count);
  }
  template <class Field>
  nb::object copy_rows(int width, Field field) {
    auto [array, data] = new_array<double>({rows(), width});
    locked([&] {
      for (size_t i = 0; i < n_; ++i) std::memcpy(data + i * width, field(data_[i]), 8 * width);
    });
    return array;
  }
  void reseed(uint64_t seed) {
    for (size_t i = 0; i < n_; ++i) carry_[i].rng = envs::stream_state(seed, i);
  }
  npy_intp rows() const { return static_cast<npy_intp>(n_); }

  std::shared_ptr<const mj::Model> model_;
  size_t n_;
  std::vector<mjData*> data_;
  std::vector<mj::EnvCarry> carry_;
  envs::ThreadPool threads_;
  std::mutex mutex_;
  std::atomic<bool> closed_{false};
};

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MujocoReset, mj::MujocoResetImpl, mj::mujoco_reset_binding());
XLA_FFI_DEFINE_HANDLER_SYMBOL(MujocoStep, mj::MujocoStepImpl, mj::mujoco_step_binding());

NB_MODULE(_mujoco, m) {
  m.doc() = "MuJoCo locomotion environments (Gymnasium v5) in C++: host pools and XLA FFI";
  nb::set_leak_warnings(false);
  if (_import_array() < 0) throw nb::python_error();  // NumPy's C API
  if (mj_version() != mjVERSION_HEADER)
    throw std::runtime_error("components.envs._mujoco was built against MuJoCo " +
                             std::to_string(mjVERSION_HEADER) + " but libmujoco is " +
                             std::to_string(mj_version()) +
                             ": rebuild metagraph (pip install -e .) against this mujoco");

  nb::class_<ModelHandle>(m, "Model")
      .def(nb::new_(&new_handle), nb::arg("task"), nb::arg("xml_path"), nb::arg("config"))
      .def_prop_ro("id", [](const ModelHandle& h) { return h.id; })
      .def_prop_ro("nq", [](const ModelHandle& h) { return h.model->get()->nq; })
      .def_prop_ro("nv", [](const ModelHandle& h) { return h.model->get()->nv; })
      .def_prop_ro("nu", [](const ModelHandle& h) { return h.model->get()->nu; })
      .def_prop_ro("nbody", [](const ModelHandle& h) { return h.model->get()->nbody; })
      .def_prop_ro("obs_dim", [](const ModelHandle& h) { return h.model->obs_dim(); })
      .def_prop_ro("record_words", [](const ModelHandle& h) { return h.model->record_words(); })
      .def_prop_ro("state_size", [](const ModelHandle& h) { return h.model->state_size(); })
      .def_prop_ro("dt", [](const ModelHandle& h) {
        return h.model->get()->opt.timestep * h.model->config().frame_skip;
      })
      .def_prop_ro("max_episode_steps",
                   [](const ModelHandle& h) { return h.model->config().max_steps; })
      .def("ctrl_range", [](const ModelHandle& h) {
        const mjModel* mm = h.model->get();
        auto [array, data] = new_array<double>({mm->nu, 2});
        std::memcpy(data, mm->actuator_ctrlrange, sizeof(double) * 2 * mm->nu);
        return array;
      });

  nb::class_<Pool>(m, "Pool")
      .def(nb::init<const ModelHandle&, int64_t, uint64_t, int>(), nb::arg("model"),
           nb::arg("num_envs"), nb::arg("seed"), nb::arg("num_threads") = 1)
      .def_prop_ro("num_envs", &Pool::num_envs)
      .def_prop_ro("num_threads", &Pool::num_threads)
      .def_prop_ro("closed", &Pool::closed)
      .def("close", &Pool::close)
      .def("reset", &Pool::reset, nb::arg("seed").none() = nb::none())
      .def("reset_to", &Pool::reset_to, nb::arg("qpos"), nb::arg("qvel"))
      .def("step", &Pool::step, nb::arg("actions"))
      .def("qpos", &Pool::qpos)
      .def("qvel", &Pool::qvel)
      .def("elapsed_steps", &Pool::elapsed_steps)
      .def("records", &Pool::records)
      .def("set_records", &Pool::set_records, nb::arg("records"));

  m.attr("ffi_reset") = nb::capsule(reinterpret_cast<void*>(MujocoReset));
  m.attr("ffi_step") = nb::capsule(reinterpret_cast<void*>(MujocoStep));
  m.attr("MUJOCO_VERSION") = mj_versionString();
}
