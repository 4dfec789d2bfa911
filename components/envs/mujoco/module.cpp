// components.envs.mujoco._tasks: Gymnasium's v5 MuJoCo tasks on the engine, built
// against the headers of the installed `mujoco` wheel and linked to its libmujoco.
#include <stdexcept>
#include <string>

#include "engine/module.h"
#include "mujoco_task.h"

METAGRAPH_TASK_HANDLERS(MujocoTask, metagraph::mujoco::MujocoTask)

NB_MODULE(_tasks, m) {
  if (mj_version() != mjVERSION_HEADER)
    throw std::runtime_error("components.envs.mujoco._tasks was built against MuJoCo " +
                             std::to_string(mjVERSION_HEADER) + " but libmujoco is " +
                             std::to_string(mj_version()) +
                             ": rebuild metagraph (pip install -e .) against this mujoco");
  metagraph::engine::init_module(m);
  METAGRAPH_BIND_TASK(m, MujocoTask, metagraph::mujoco::MujocoTask);
  m.attr("MUJOCO_VERSION") = mj_versionString();
}
