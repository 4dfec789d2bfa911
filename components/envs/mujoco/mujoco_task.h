// Gymnasium's v5 MuJoCo tasks as one engine task (engine/task.h): a loaded model and the task's
// rules (rules.h: what it observes, rewards and resets, one class per task), stepping a
// workspace mjData.
//
// An environment's state is MuJoCo's integration state (mj_getState with mjSTATE_INTEGRATION:
// time, qpos, qvel, act, the warm start, ctrl, applied forces, ...), the position the next
// step's velocity is measured from (2 words), then the last step's info terms (Gymnasium's
// `info`, by the rules' info_names: the task's extras; zeros after a reset). A step loads it into the thread's mjData
// (mj_setState), steps, and saves it back: mj_step reads nothing of an mjData but its
// integration state, so this gives the bits a persistent mjData gives, on every door.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "engine/config.h"
#include "engine/task.h"
#include "all_rules.h"

namespace metagraph::mujoco {

constexpr int kStateSig = mjSTATE_INTEGRATION;

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

class MujocoTask {
 public:
  using Action = float;
  static constexpr int kStateWords = engine::kDynamic;
  static constexpr int64_t kMinPerThread = 1;
  static constexpr bool kFloat64Outputs = true;  // Gymnasium's MuJoCo tasks are float64

  // The thread's scratch: an mjData, the reward terms' scratch and an observation in float64.
  struct Workspace {
    std::unique_ptr<mjData, void (*)(mjData*)> data{nullptr, mj_deleteData};
    std::vector<double> scratch;
    std::vector<double> obs;
  };

  explicit MujocoTask(const engine::Config& c)
      : id_(c.task()),
        rules_(make_rules(c.text("task"), c)),
        frame_skip_(static_cast<int>(c.integer("frame_skip", 1, 1000000))),
        max_steps_(c.integer("max_episode_steps", 1, (int64_t{1} << 31) - 1)) {
    std::vector<std::string> known = rules_->keys();
    for (const char* key : {"task", "xml_file", "frame_skip", "max_episode_steps"})
      known.push_back(key);
    c.only(known);
    const std::string path = c.text("xml_file");
    char error[1000] = "";
    mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
    if (m == nullptr) throw std::invalid_argument(id() + ": cannot load " + path + ": " + error);
    model_.reset(m);
    rules_->bind(m);
    obs_dim_ = rules_->observation_size(m);
    state_size_ = mj_stateSize(m, kStateSig);
    info_names_ = rules_->info_names(m);
  }

  std::string id() const { return id_; }
  int state_words() const { return state_size_ + 2 + extras_dim(); }
  // The extras: Gymnasium's info terms of the step that ended in the state (float32).
  int extras_dim() const { return static_cast<int>(info_names_.size()); }
  std::vector<std::string> extras_names() const { return info_names_; }
  void extras(const double* state, float* out) const {
    const double* info = state + state_size_ + 2;
    for (int k = 0; k < extras_dim(); ++k) out[k] = static_cast<float>(info[k]);
  }
  int obs_dim() const { return obs_dim_; }
  int action_dim() const { return model_->nu; }
  int64_t max_steps() const { return max_steps_; }
  int physical_dim() const { return model_->nq + model_->nv; }
  std::map<std::string, engine::Config::Value> info() const {
    const mjModel* m = model_.get();
    return {{"nq", int64_t{m->nq}}, {"nv", int64_t{m->nv}}, {"nu", int64_t{m->nu}},
            {"nbody", int64_t{m->nbody}}, {"dt", m->opt.timestep * frame_skip_},
            {"ctrl_range", std::vector<double>(m->actuator_ctrlrange,
                                               m->actuator_ctrlrange + 2 * m->nu)}};
  }

  Workspace workspace() const {
    Workspace ws;
    ws.data.reset(mj_makeData(model_.get()));
    if (!ws.data) throw std::runtime_error(id() + ": MuJoCo could not allocate an mjData");
    ws.scratch.resize(rules_->scratch_size(model_.get()));
    ws.obs.resize(obs_dim_);
    return ws;
  }

  // Gymnasium's reset: mj_resetData, the task's reset_model (qpos and qvel), mj_forward.
  void reset(Workspace& ws, double* state, uint64_t& rng) const {
    mj_resetData(model_.get(), ws.data.get());
    rules_->reset(model_.get(), ws.data.get(), rng);
    mj_forward(model_.get(), ws.data.get());
    save(ws, state);
    std::fill_n(state + state_size_ + 2, extras_dim(), 0.0);
  }
  // Gymnasium's reset followed by set_state(qpos, qvel): physics is qpos then qvel.
  void set_physical(Workspace& ws, double* state, const double* physics) const {
    const mjModel* m = model_.get();
    mjData* d = ws.data.get();
    mj_resetData(m, d);
    std::memcpy(d->qpos, physics, sizeof(double) * m->nq);
    std::memcpy(d->qvel, physics + m->nq, sizeof(double) * m->nv);
    mj_forward(m, d);
    save(ws, state);
    std::fill_n(state + state_size_ + 2, extras_dim(), 0.0);
  }
  // One Gymnasium step (ctrl, frame_skip mj_steps, mj_rnePostConstraint; reward, terminated).
  // An unstable step (a MuJoCo warning, NaN or inf) sets out.error and leaves the state as it
  // was.
  void step(Workspace& ws, double* state, const float* action, engine::Step& out) const {
    const mjModel* m = model_.get();
    mjData* d = ws.data.get();
    mj_setState(m, d, state, kStateSig);
    for (int j = 0; j < m->nu; ++j) d->ctrl[j] = action[j];
    for (int w = 0; w < mjNWARNING; ++w) d->warning[w].number = 0;
    for (int k = 0; k < frame_skip_; ++k) mj_step(m, d);
    mj_rnePostConstraint(m, d);
    out.error = instability(m, d);
    if (out.error >= 0) return;
    double after[2];
    rules_->tracked(m, d, after);
    const StepView view{m, d, action, state + state_size_, after, m->opt.timestep * frame_skip_,
                        ws.scratch.data(), state + state_size_ + 2};
    out.reward = rules_->reward(view, &out.terminated);
    save(ws, state);
  }
  template <class T>
  void observe(Workspace& ws, const double*, T* obs) const {
    rules_->observe(model_.get(), ws.data.get(), ws.obs.data());
    for (int k = 0; k < obs_dim_; ++k) obs[k] = static_cast<T>(ws.obs[k]);
  }
  bool valid(const double* state) const {
    bool ok = true;
    for (int k = 0; k < state_words(); ++k) ok = ok && std::isfinite(state[k]);
    return ok;
  }
  void physical(const double* state, double* physics) const {
    std::memcpy(physics, state + 1, sizeof(double) * physical_dim());  // after the time
  }
  std::string error_message(int warning) const {
    return std::string("became unstable (MuJoCo: ") + warning_name(warning) +
           "): its episode cannot go on; reset the environments";
  }

 private:
  // The workspace's integration state and tracked position into the state words.
  void save(Workspace& ws, double* state) const {
    mj_getState(model_.get(), ws.data.get(), state, kStateSig);
    rules_->tracked(model_.get(), ws.data.get(), state + state_size_);
  }

  struct ModelDeleter {
    void operator()(mjModel* m) const { mj_deleteModel(m); }
  };
  std::string id_;
  std::unique_ptr<Rules> rules_;
  int frame_skip_;
  int64_t max_steps_;
  std::unique_ptr<mjModel, ModelDeleter> model_;
  int obs_dim_ = 0;
  int state_size_ = 0;
  std::vector<std::string> info_names_;
};

}  // namespace metagraph::mujoco
