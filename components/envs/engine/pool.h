// The host pool of every task: n environments in one structure-of-arrays block (batch.h),
// stepped by the pool's own C++ threads with the GIL released, returning fresh NumPy arrays.
//
// Safe to call from several Python threads at once: every call that reads or writes the
// environments holds the pool's lock (taken with the GIL released), so concurrent calls give
// the results of some serial order.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "batch.h"
#include "given_actions.h"
#include "instance.h"
#include "numpy_arrays.h"
#include "thread_pool.h"

namespace metagraph::engine {

namespace nb = nanobind;

// A C++ exception the task's own code threw (RuntimeError in Python), caught on whichever
// thread ran it.
struct TaskException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class Task>
class Pool {
 public:
  using T = Traits<Task>;
  using Action = typename T::Action;
  using Workspace = typename T::Workspace;
  using O = typename T::HostObservation;
  using R = typename T::HostReward;
  static constexpr int64_t kMaxEnvs = int64_t{1} << 28;
  static constexpr int kMaxThreads = 1024;

  // One step's outputs by name (Python: `<Name>PoolStep`, read by `VectorEnv`). Arrays the
  // pool reuses once the caller let go of them: `done` says which episodes ended this step
  // and `final_done` is its own copy of it (Gymnasium's `_final_obs` and `_final_info` masks,
  // two arrays as Gymnasium's are); `final_obs` holds the ended episodes' last observations
  // (zeros in the other rows); `extras` is float32 (num_envs, extras_dim), (num_envs, 0) for a
  // task without extra outputs; `any_done` whether any episode ended (the masks are all false
  // otherwise, and a caller need not read them).
  struct Step {
    nb::object obs, reward, terminated, truncated, final_obs, done, final_done, extras;
    bool any_done;
  };

  // Environment i draws from the stream of (seed, first_stream + i): a pool of a slice of a
  // larger batch (the asynchronous pool's groups) steps as that slice of one pool would.
  Pool(std::shared_ptr<const Task> task, int64_t num_envs, uint64_t seed, int num_threads,
       uint64_t first_stream = 0)
      : task_(std::move(task)),
        n_(check_size(*task_, num_envs)),
        first_stream_(first_stream),
        words_(Batch<Task>::rows(*task_)),
        dim_(T::action_dim(*task_)),
        storage_(static_cast<size_t>(words_) * Batch<Task>::padded_stride(n_)),
        actions_(static_cast<size_t>(n_) * dim_),
        threads_(check_threads(*task_, num_threads), T::kMinPerThread, T::kPartsPerThread),
        parts_(threads_.max_parts()),
        scratch_(threads_.size(), std::vector<double>(words_)) {
    for (int t = 0; t < threads_.size(); ++t) workspaces_.push_back(T::workspace(*task_));
    const npy_intp rows = n_;
    obs_shape_ = {rows};
    for (const int64_t d : T::obs_shape(*task_)) obs_shape_.push_back(d);
    npy_intp extras_dim = 0;
    if constexpr (T::kHasExtras) extras_dim = T::extras_dim(*task_);
    step_shapes_ = {obs_shape_, {rows}, {rows}, {rows}, {rows}, {rows}, obs_shape_,
                    {rows, extras_dim}};
    // (not std::vector: its bool specialisation has no data())
    const std::unique_ptr<O[]> obs(new O[static_cast<size_t>(n_) * task_->obs_dim()]);
    reseed(seed, obs.get());
  }

  int64_t num_envs() const { return n_; }
  int num_threads() const { return threads_.size(); }
  bool closed() const { return closed_.load(); }
  void close() { closed_.store(true); }

  // With a seed, environment i restarts its stream from (seed, i); without one, each draws its
  // next initial state from where its stream is. Returns the first observations.
  nb::object reset(std::optional<uint64_t> seed) {
    check_open();
    auto [array, obs] = new_array<O>(obs_shape_);
    locked([&] {
      distrust();
      if (seed) {
        reseed(*seed, obs);
      } else {
        parallel([&](Workspace& ws, int64_t i, double* scratch) {
          batch().restart(ws, i, obs + i * task_->obs_dim(), scratch);
        });
      }
    });
    return array;
  }

  // Starts every environment from a physical state, float64 (n, physical_dim), each finite
  // (checked before any environment moves).
  nb::object reset_to(nb::handle physics) {
    check_open();
    const int p = task_->physical_dim();
    const std::vector<double> x = copy_of<double>(physics, n_ * p, "physical states");
    for (int64_t i = 0; i < n_; ++i)
      for (int k = 0; k < p; ++k)
        if (!std::isfinite(x[i * p + k]))
          throw std::invalid_argument(task_->id() + ": the physical state of environment " +
                                      std::to_string(i) + " is not finite");
    auto [array, obs] = new_array<O>(obs_shape_);
    locked([&] {
      distrust();
      parallel([&](Workspace& ws, int64_t i, double* scratch) {
        batch().start_from(ws, i, x.data() + i * p, obs + i * task_->obs_dim(), scratch);
      });
    });
    return array;
  }

  // One step of every environment, its outputs by name (`Step`). Actions of a type given_actions does
  // not take, or of another shape, are a TypeError (the Python door converts or refuses
  // them); bad actions and states are refused (before any environment moves) with the
  // in-graph door's messages; a step the task fails (MuJoCo went unstable) names the
  // environment.
  Step step(nb::handle actions) {
    check_open();
    check_action_shape(actions);
    // The caller's data is copied (another Python thread may write it once the GIL is free)
    // inside the threaded pass, by each thread for its part, as it checks it.
    // NumPy's other integer types (discrete) and float64 (continuous) are converted there too.
    const GivenActions given = given_actions<Action>(actions, static_cast<size_t>(n_) * dim_,
                                                     task_->id().c_str());
    const StepArrays arrays = step_arrays();
    O* const obs = data<O>(arrays.obs);
    // Zeros where no episode ended (as Gymnasium's vector envs fill final_obs): each thread
    // clears its rows, then the step writes the rows of ended episodes.
    O* const final_obs = data<O>(arrays.final_obs);
    const size_t obs_dim = static_cast<size_t>(task_->obs_dim());
    R* const reward = data<R>(arrays.reward);
    bool* const terminated = data<bool>(arrays.terminated);
    bool* const truncated = data<bool>(arrays.truncated);
    bool* const done = data<bool>(arrays.done);
    float* const extras = T::kHasExtras ? data<float>(arrays.extras) : nullptr;
    bool* const done_copy = data<bool>(arrays.done_copy);
    FirstProblem bad_action, bad_state, failed;
    locked([&] {
      const Batch<Task> all = batch();
      const StepOut<O, R> out{obs,    reward,  terminated, truncated, final_obs,
                              extras, nullptr, done,       true};
      Action* a = actions_.data();
      threads_.run(
          n_,
          [&](int p, int t, int64_t begin, int64_t end) {
            take_actions(*task_, given, a, dim_, begin, end, 0, bad_action);
            parts_[p].fast = check_part(*task_, all, a, begin, end, 0, bad_action, bad_state,
                                        scratch(t), parts_[p].own, parts_[p].in_fast_range);
          },
          [&](int p, int t, int64_t begin, int64_t end) {
            bool fast_after = false;
            parts_[p].own = parts_[p].in_fast_range = false;  // until the step is done
            std::memset(final_obs + begin * obs_dim, 0, (end - begin) * obs_dim * sizeof(O));
            try {
              parts_[p].any_done = step_part(*task_, workspaces_[t], all, a, begin, end, out,
                                             parts_[p].fast, 0, failed, scratch(t),
                                             &fast_after);
            } catch (...) {
              throw_task_exception("the step of environments " + std::to_string(begin) + ".." +
                                   std::to_string(end - 1));
            }
            parts_[p].own = !failed.found();  // (another part's failure only costs a scan)
            parts_[p].in_fast_range = fast_after;
            std::memcpy(done_copy + begin, done + begin, static_cast<size_t>(end - begin));
          },
          [&] { return !bad_action.found() && !bad_state.found(); });
    });
    if (bad_action.found()) throw std::invalid_argument(bad_action.message());
    if (bad_state.found()) throw std::invalid_argument(bad_state.message());
    if (failed.found()) throw std::runtime_error(failed.message());
    const int used = threads_.parts(n_);
    bool any_done = false;
    for (int p = 0; p < used; ++p) any_done |= parts_[p].any_done;
    return Step{arrays.obs,      arrays.reward, arrays.terminated, arrays.truncated,
                arrays.final_obs, arrays.done,   arrays.done_copy,  arrays.extras,
                any_done};
  }

  // Every environment's legal actions, bool (n, num_actions) (discrete tasks; all true for a
  // task without `legal`, none for an invalid state).
  nb::object legal_mask() {
    if constexpr (!T::kDiscrete) {
      throw std::invalid_argument(task_->id() + ": continuous actions have no legal mask");
    } else {
      const int a = task_->num_actions();
      auto [array, data] = new_array<bool>({rows(), a});
      locked([&] {
        for (int64_t i = 0; i < n_; ++i) {
          batch().load(i, scratch(0));
          T::legal_mask(*task_, scratch(0), data + i * a);
        }
      });
      return array;
    }
  }

  // Every environment's physical state, float64 (n, physical_dim).
  nb::object physics() {
    const int p = task_->physical_dim();
    auto [array, data] = new_array<double>({rows(), p});
    locked([&] {
      for (int64_t i = 0; i < n_; ++i) batch().physical(i, data + i * p, scratch(0));
    });
    return array;
  }

  nb::object elapsed_steps() {
    auto [array, data] = new_array<int32_t>({rows()});
    locked([&] {
      for (int64_t i = 0; i < n_; ++i) data[i] = static_cast<int32_t>(batch().steps()[i]);
    });
    return array;
  }

  // Every environment's record, uint64 (n, W): its state words, random stream and step count
  // (the words the in-graph door carries), for pickling and exact copies.
  nb::object records() {
    auto [array, data] = new_array<uint64_t>({rows(), static_cast<npy_intp>(words_)});
    locked([&] {
      for (int64_t i = 0; i < n_; ++i) batch().read_record(i, data + i * words_);
    });
    return array;
  }

  // Sets every environment from records, uint64 (n, W) exactly, each checked first.
  void set_records(nb::handle records) {
    check_open();
    const uint64_t* given = array_data<uint64_t>(records, static_cast<size_t>(n_) * words_,
                                                 task_->id().c_str(), "record words");
    auto* array = reinterpret_cast<PyArrayObject*>(records.ptr());
    if (PyArray_NDIM(array) != 2 || PyArray_DIM(array, 0) != n_ || PyArray_DIM(array, 1) != words_)
      throw std::invalid_argument(task_->id() + ": records must have shape (" +
                                  std::to_string(n_) + ", " + std::to_string(words_) + ")");
    std::vector<uint64_t> block =
        checked_block(*task_, given, n_, Batch<Task>::padded_stride(n_));
    locked([&] {
      distrust();
      storage_ = std::move(block);
    });
  }

 private:
  static int64_t check_size(const Task& task, int64_t n) {
    if (n < 1 || n > kMaxEnvs)
      throw std::invalid_argument(task.id() + ": num_envs must be in [1, 2^28], got " +
                                  std::to_string(n));
    return n;
  }
  static int check_threads(const Task& task, int n) {
    if (n < 1 || n > kMaxThreads)
      throw std::invalid_argument(task.id() + ": num_threads must be in [1, " +
                                  std::to_string(kMaxThreads) + "], got " + std::to_string(n));
    return n;
  }
  // The arrays a step returns and reuses (extras (num_envs, 0) for a task without extras).
  struct StepArrays {
    nb::object obs, reward, terminated, truncated, done, done_copy, final_obs, extras;
  };
  // Whether the caller let go of all of `arrays`: every array's reference count is this
  // pool's alone (so no Python object, view or exported buffer can see them change), no weak
  // reference to it is left (it would see later steps), and each is as it was made: its own
  // data, writeable, aligned, in the machine's byte order, with its dtype, shape and
  // C-contiguous strides (none set in place).
  bool unheld(const StepArrays& arrays) const {
    const nb::object* all[] = {&arrays.obs,       &arrays.reward, &arrays.terminated,
                               &arrays.truncated, &arrays.done,   &arrays.done_copy,
                               &arrays.final_obs, &arrays.extras};
    constexpr int kAsMade = NPY_ARRAY_OWNDATA | NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED;
    for (size_t k = 0; k < step_shapes_.size(); ++k) {
      auto* a = reinterpret_cast<PyArrayObject*>(all[k]->ptr());
      const std::vector<npy_intp>& shape = step_shapes_[k];
      if (Py_REFCNT(all[k]->ptr()) != 1 ||
          reinterpret_cast<PyArrayObject_fields*>(a)->weakreflist != nullptr ||
          !PyArray_CHKFLAGS(a, kAsMade) || !PyArray_ISNOTSWAPPED(a) ||
          PyArray_TYPE(a) != kStepTypes[k] || PyArray_NDIM(a) != static_cast<int>(shape.size()))
        return false;
      // (an empty array has nothing to write: its strides, which NumPy versions set apart,
      // do not matter)
      const bool empty = PyArray_SIZE(a) == 0;
      npy_intp stride = PyArray_ITEMSIZE(a);
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (PyArray_DIM(a, d) != shape[d] || (!empty && PyArray_STRIDE(a, d) != stride))
          return false;
        stride *= shape[d];
      }
    }
    return true;
  }
  // The arrays of a step: a set the caller let go of (`unheld`), else new ones, kept for a
  // later step. Reusing them keeps each thread's part of the outputs at the same addresses,
  // in its own core's cache (arrays new from the allocator move around, and their lines cross
  // cores: the second thread's speed), and saves the allocations. A caller holds a step's
  // arrays until its next step at least, so a few sets are kept. Returned as this step's own
  // references (under the GIL), so that a concurrent step finds the set held.
  StepArrays step_arrays() {
    for (const StepArrays& kept : kept_arrays_)
      if (unheld(kept)) return kept;
    StepArrays made{new_array<O>(step_shapes_[0]).first, new_array<R>(step_shapes_[1]).first,
                    new_array<bool>(step_shapes_[2]).first,
                    new_array<bool>(step_shapes_[3]).first,
                    new_array<bool>(step_shapes_[4]).first,
                    new_array<bool>(step_shapes_[5]).first,
                    new_array<O>(step_shapes_[6]).first,
                    new_array<float>(step_shapes_[7]).first};
    if (kept_arrays_.size() >= kKeptArrays) kept_arrays_.erase(kept_arrays_.begin());
    kept_arrays_.push_back(made);
    return made;
  }
  template <class V>
  static V* data(const nb::object& array) {
    return static_cast<V*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array.ptr())));
  }
  // That the actions are a NumPy array of their exact shape, (n,) discrete, (n, action_dim)
  // continuous (given_actions checks the rest); a TypeError, as a wrong dtype is: the Python door
  // then converts or refuses them.
  void check_action_shape(nb::handle actions) const {
    if (!PyArray_Check(actions.ptr()))
      throw nb::type_error((task_->id() + ": actions must be a NumPy array").c_str());
    auto* array = reinterpret_cast<PyArrayObject*>(actions.ptr());
    const int ndim = T::kDiscrete ? 1 : 2;
    if (PyArray_NDIM(array) != ndim || PyArray_DIM(array, 0) != n_ ||
        (!T::kDiscrete && PyArray_DIM(array, 1) != dim_))
      throw nb::type_error((task_->id() + ": actions must have shape (" + std::to_string(n_) +
                            (T::kDiscrete ? std::string(",") : ", " + std::to_string(dim_)) +
                            ")").c_str());
  }
  void check_open() const {
    if (closed_.load()) throw std::runtime_error(task_->id() + ": the pool is closed");
  }
  // Runs f, which touches the environments but no Python object, under the pool's lock with
  // the GIL released (a thread waiting for the lock never blocks the interpreter). An
  // exception the task's code threw, on any thread, comes out as a TaskException naming
  // the task (a RuntimeError in Python).
  template <class F>
  void locked(F&& f) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      f();
    } catch (const TaskException&) {
      throw;
    } catch (...) {
      throw_task_exception("a call of the pool");
    }
  }
  // Rethrows the exception being handled, thrown by the task's code during `when`, as a
  // TaskException saying so.
  [[noreturn]] void throw_task_exception(const std::string& when) const {
    try {
      throw;
    } catch (const TaskException&) {
      throw;
    } catch (const std::exception& e) {
      throw TaskException(task_->id() + ": the task threw an exception in " + when + ": " +
                          e.what());
    } catch (...) {
      throw TaskException(task_->id() + ": the task threw an exception in " + when +
                          " (not a std::exception)");
    }
  }
  // f(workspace, i, scratch) for every environment, on the pool's threads.
  template <class F>
  void parallel(F&& f) {
    threads_.run(n_, [&](int, int t, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) f(workspaces_[t], i, scratch(t));
    });
  }
  double* scratch(int t) { return scratch_[t].data(); }
  // States written by anything but a step are scanned by the next step's checks.
  void distrust() {
    for (PartFlags& part : parts_) part.own = part.in_fast_range = false;
  }
  template <class V>
  std::vector<V> copy_of(nb::handle obj, size_t count, const char* what) const {
    const V* data = array_data<V>(obj, count, task_->id().c_str(), what);
    return std::vector<V>(data, data + count);
  }
  void reseed(uint64_t seed, O* obs) {
    parallel([&](Workspace& ws, int64_t i, double* scratch) {
      batch().reseed(ws, i, seed, first_stream_ + static_cast<uint64_t>(i),
                     obs + i * task_->obs_dim(), scratch);
    });
  }
  npy_intp rows() const { return static_cast<npy_intp>(n_); }
  Batch<Task> batch() const {
    return Batch<Task>(*task_, const_cast<uint64_t*>(storage_.data()), n_,
                       Batch<Task>::padded_stride(n_));
  }

  std::shared_ptr<const Task> task_;
  int64_t n_;
  uint64_t first_stream_;
  int words_;
  int dim_;
  std::vector<uint64_t> storage_;
  std::vector<Action> actions_;  // the step's private copy of the caller's actions
  static constexpr size_t kKeptArrays = 3;
  std::vector<StepArrays> kept_arrays_;  // step arrays made, reused once the caller let go
  // the shapes of StepArrays' arrays in order and their dtypes
  std::vector<std::vector<npy_intp>> step_shapes_;
  std::vector<npy_intp> obs_shape_;  // the observations' array shape: (num_envs, *obs_shape)
  static constexpr int kStepTypes[] = {kNumpyType<O>, kNumpyType<R>, NPY_BOOL,
                                       NPY_BOOL,      NPY_BOOL,      NPY_BOOL,
                                       kNumpyType<O>, NPY_FLOAT32};
  ThreadPool threads_;
  // What each part of a step knows of its environments, one cache line each (written by its
  // own thread every step: on a shared line the two threads' writes would bounce it).
  struct alignas(64) PartFlags {
    bool fast = false;      // the check let it take the fast flavour
    bool own = false;            // its states are the ones the last step left (valid)
    bool in_fast_range = false;  // and all in the fast flavour's range
    bool any_done = false;  // an episode of the part ended this step
  };
  std::vector<PartFlags> parts_;
  std::vector<std::vector<double>> scratch_;  // per thread: one environment's words
  std::vector<Workspace> workspaces_;
  std::mutex mutex_;
  std::atomic<bool> closed_{false};
};

}  // namespace metagraph::engine
