// components.envs.minatar._tasks: MinAtar's five games on the engine (minatar.h).
#include "breakout.h"
#include "engine/module.h"
#include "minatar.h"

namespace minatar = metagraph::minatar;

METAGRAPH_TASK_HANDLERS(Breakout, minatar::MinAtar<minatar::Breakout>)

NB_MODULE(_tasks, m) {
  metagraph::engine::init_module(m);
  METAGRAPH_BIND_TASK(m, Breakout, minatar::MinAtar<minatar::Breakout>);
}
