// A loaded MuJoCo model with its task (task.h), and the step and reset of one environment that
// both doors share: the host pool steps a persistent mjData per environment; the XLA FFI
// handlers load an environment's record (MuJoCo's integration state, mj_getState with
// mjSTATE_INTEGRATION, plus the tracked position, random stream and step count) into a scratch
// mjData, step it with the same code, and save the record back. mj_step reads nothing of an
// mjData but its integration state, so both give the same bits.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "task.h"

namespace metagraph::envs::mujoco {

constexpr int kStateSig = mjSTATE_INTEGRATION;

class Model {
 public:
  Model(const std::string& xml_path, const Config& config) : config_(config) {
    char error[1000] = "";
    model_ = mj_loadXML(xml_path.c_str(), nullptr, error, sizeof(error));
    if (model_ == nullptr)
      throw std::invalid_argument(std::string(task_name(config.task)) + ": cannot load " +
                                  xml_path + ": " + error);
    try {
      if (!config_.main_body_name.empty()) {
        config_.main_body = mj_name2id(model_, mjOBJ_BODY, config_.main_body_name.c_str());
        if (config_.main_body < 0)
          throw std::invalid_argument(std::string(task_name(config.task)) + ": the model has no body named " +
                                      config_.main_body_name);
      }
      check_model(config_, model_);
    } catch (...) {
      mj_deleteModel(model_);
      throw;
    }
    obs_dim_ = observation_size(config_, model_);
    state_size_ = mj_stateSize(model_, kStateSig);
    // control_cost's float32 squares (nu floats) or contact_cost's 6 * nbody doubles; then a
    // copy of a record's state and an observation.
    reward_scratch_ = std::max(model_->nu, 6 * model_->nbody);
    scratch_size_ = reward_scratch_ + state_size_ + obs_dim_;
  }
  ~Model() {
    for (mjData* d : free_) mj_deleteData(d);
    mj_deleteModel(model_);
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const mjModel* get() const { return model_; }
  const Config& config() const { return config_; }
  const char* id() const { return task_name(config_.task); }
  int obs_dim() const { return obs_dim_; }
  int state_size() const { return state_size_; }
  // One environment's record in 8-byte words: the integration state, the tracked position
  // (2), the random stream, the step count.
  int record_words() const { return state_size_ + 4; }
  int scratch_size() const { return scratch_size_; }
  int reward_scratch() const { return reward_scratch_; }

  // A fresh mjData; throws std::runtime_error when MuJoCo cannot allocate one.
  mjData* make_data() const {
    mjData* d = mj_makeData(model_);
    if (d == nullptr)
      throw std::runtime_error(std::string(id()) + ": MuJoCo could not allocate an mjData");
    return d;
  }
  // A scratch mjData for the in-graph door (kept for reuse by release).
  mjData* acquire() const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        mjData* d = free_.back();
        free_.pop_back();
        return d;
      }
    }
    return make_data();
  }
  void release(mjData* d) const {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(d);
  }

 private:
  Config config_;
  mjModel* model_ = nullptr;
  int obs_dim_ = 0;
  int state_size_ = 0;
  int reward_scratch_ = 0;
  int scratch_size_ = 0;
  mutable std::mutex mutex_;
  mutable std::vector<mjData*> free_;
};

// A scratch mjData held for the length of a scope.
class ScratchData {
 public:
  explicit ScratchData(const Model& model) : model_(model), data_(model.acquire()) {}
  ~ScratchData() { model_.release(data_); }
  ScratchData(const ScratchData&) = delete;
  ScratchData& operator=(const ScratchData&) = delete;
  mjData* get() const { return data_; }

 private:
  const Model& model_;
  mjData* data_;
};

// What an environment carries besides its mjData.
struct EnvCarry {
  double tracked[2];  // the tracked position at the end of the last step (task.h)
  uint64_t rng;
  int64_t steps;
};

inline const char* warning_name(int w) {
  switch (w) {
    case mjWARN_INERTIA: return "(near) singular inertia matrix";
    case mjWARN_CONTACTFULL: return "too many contacts";
    case mjWARN_CNSTRFULL: return "too many constraints";
    case mjWARN_BADQPOS: return "bad number in qpos";
    case mjWARN_BADQVEL: return "bad number in qvel";
    case mjWARN_BADQACC: return "bad number in qacc";
    case mjWARN_BADCTRL: return "bad number in ctrl";
  }
  return "NaN or inf in qpos, qvel or qacc";
}

// The message for an environment that went unstable (`warning` from step_env).
inline std::string unstable_message(const Model& model, int64_t index, int warning) {
  return std::string(model.id()) + ": environment " + std::to_string(index) +
         " became unstable (MuJoCo: " + warning_name(warning) +
         "); MuJoCo reset its data, so its episode cannot go on: reset the environments";
}

// Gymnasium's reset of one environment from its stream; its first observation into obs.
template <class T>
void reset_env(const Model& model, mjData* d, EnvCarry& carry, T* obs, double* scratch) {
  const Config& c = model.config();
  reset_data(c, model.get(), d, carry.rng);
  tracked_position(c, d, carry.tracked);
  carry.steps = 0;
  double* o = scratch + model.reward_scratch() + model.state_size();
  observe(c, model.get(), d, o);
  for (int k = 0; k < model.obs_dim(); ++k) obs[k] = static_cast<T>(o[k]);
}

// Gymnasium's reset to given qpos and qvel (mj_resetData, set_state's mj_forward).
template <class T>
void reset_env_to(const Model& model, mjData* d, EnvCarry& carry, const double* qpos,
                  const double* qvel, T* obs, double* scratch) {
  const mjModel* m = model.get();
  mj_resetData(m, d);
  std::memcpy(d->qpos, qpos, sizeof(double) * m->nq);
  std::memcpy(d->qvel, qvel, sizeof(double) * m->nv);
  mj_forward(m, d);
  tracked_position(model.config(), d, carry.tracked);
  carry.steps = 0;
  double* o = scratch + model.reward_scratch() + model.state_size();
  observe(model.config(), m, d, o);
  for (int k = 0; k < model.obs_dim(); ++k) obs[k] = static_cast<T>(o[k]);
}

// -1 when the step left d finite and MuJoCo raised no warning, else the warning's index
// (mjNWARNING: a NaN or inf that MuJoCo did not flag).
inline int instability(const mjModel* m, const mjData* d) {
  for (int w = 0; w < mjNWARNING; ++w)
    if (d->warning[w].number > 0) return w;
  bool finite = true;
  for (int i = 0; i < m->nq; ++i) finite = finite && std::isfinite(d->qpos[i]);
  for (int i = 0; i < m->nv; ++i)
    finite = finite && std::isfinite(d->qvel[i]) && std::isfinite(d->qacc[i]);
  return finite ? -1 : mjNWARNING;
}

// One Gymnasium step of one environment (ctrl, frame_skip mj_steps, mj_rnePostConstraint;
// observation, reward, terminated; truncated at max_steps as TimeLimit does, whether or not it
// terminated) with same-step auto-reset: final_obs holds the step's last observation, obs the
// next episode's first where it ended. `actions` are finite (checked by the caller). Returns
// -1, or the warning index of instability() (the outputs are then not written).
template <class T>
int step_env(const Model& model, mjData* d, EnvCarry& carry, const float* action, T* obs,
             T* final_obs, T* reward, bool* terminated, bool* truncated, double* scratch) {
  const Config& c = model.config();
  const mjModel* m = model.get();
  for (int j = 0; j < m->nu; ++j) d->ctrl[j] = action[j];
  for (int w = 0; w < mjNWARNING; ++w) d->warning[w].number = 0;
  for (int k = 0; k < c.frame_skip; ++k) mj_step(m, d);
  mj_rnePostConstraint(m, d);
  const int bad = instability(m, d);
  if (bad >= 0) return bad;
  double after[2];
  tracked_position(c, d, after);
  bool term = false;
  const double r = mujoco::reward(c, m, d, action, carry.tracked, after, scratch, &term);
  carry.tracked[0] = after[0];
  carry.tracked[1] = after[1];
  carry.steps += 1;
  double* o = scratch + model.reward_scratch() + model.state_size();
  observe(c, m, d, o);
  for (int k = 0; k < model.obs_dim(); ++k) final_obs[k] = static_cast<T>(o[k]);
  *reward = static_cast<T>(r);
  *terminated = term;
  *truncated = carry.steps >= c.max_steps;
  if (term || *truncated) {
    reset_env(model, d, carry, obs, scratch);
  } else {
    std::memcpy(obs, final_obs, sizeof(T) * model.obs_dim());
  }
  return -1;
}

// ---- records: an environment as model.record_words() 8-byte words ---------------------------

// Whether a record can be stepped: every number finite, the step count in [0, max_steps).
inline bool record_valid(const Model& model, const void* record) {
  const int s = model.state_size();
  const char* bytes = static_cast<const char*>(record);
  for (int k = 0; k < s + 2; ++k) {
    double x;
    std::memcpy(&x, bytes + 8 * k, 8);
    if (!std::isfinite(x)) return false;
  }
  int64_t steps;
  std::memcpy(&steps, static_cast<const char*>(record) + 8 * (s + 3), 8);
  return steps >= 0 && steps < model.config().max_steps;
}

inline std::string invalid_record_message(const Model& model, int64_t index) {
  return std::string(model.id()) + ": the state of environment " + std::to_string(index) +
         " did not come from reset or step (a non-finite number, or a step count outside [0, " +
         std::to_string(model.config().max_steps) + "))";
}

inline void load_record(const Model& model, mjData* d, EnvCarry& carry, const void* record,
                        double* scratch) {
  const int s = model.state_size();
  double* state = scratch + model.reward_scratch();
  std::memcpy(state, record, sizeof(double) * s);
  mj_setState(model.get(), d, state, kStateSig);
  const char* rest = static_cast<const char*>(record) + 8 * s;
  std::memcpy(carry.tracked, rest, 16);
  std::memcpy(&carry.rng, rest + 16, 8);
  std::memcpy(&carry.steps, rest + 24, 8);
}

inline void save_record(const Model& model, const mjData* d, const EnvCarry& carry, void* record,
                        double* scratch) {
  const int s = model.state_size();
  double* state = scratch + model.reward_scratch();
  mj_getState(model.get(), d, state, kStateSig);
  std::memcpy(record, state, sizeof(double) * s);
  char* rest = static_cast<char*>(record) + 8 * s;
  std::memcpy(rest, carry.tracked, 16);
  std::memcpy(rest + 16, &carry.rng, 8);
  std::memcpy(rest + 24, &carry.steps, 8);
}

// ---- models the in-graph door can name: an int64 attribute of its FFI calls -----------------

inline std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
inline std::vector<std::shared_ptr<const Model>>& registry() {
  static std::vector<std::shared_ptr<const Model>> models;
  return models;
}
// Keeps `model` for the life of the process (a compiled program may name it) and returns its
// number.
inline int64_t register_model(std::shared_ptr<const Model> model) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(std::move(model));
  return static_cast<int64_t>(registry().size()) - 1;
}
// The model numbered `id`, or nullptr.
inline std::shared_ptr<const Model> find_model(int64_t id) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (id < 0 || id >= static_cast<int64_t>(registry().size())) return nullptr;
  return registry()[id];
}

}  // namespace metagraph::envs::mujoco
