// components.envs.minatar._tasks: MinAtar's five games on the engine (minatar.h).
#include "asterix.h"
#include "breakout.h"
#include "engine/module.h"
#include "freeway.h"
#include "minatar.h"
#include "seaquest.h"
#include "space_invaders.h"

namespace minatar = metagraph::minatar;

METAGRAPH_TASK_HANDLERS(Breakout, minatar::MinAtar<minatar::Breakout>)
METAGRAPH_TASK_HANDLERS(Asterix, minatar::MinAtar<minatar::Asterix>)
METAGRAPH_TASK_HANDLERS(Freeway, minatar::MinAtar<minatar::Freeway>)
METAGRAPH_TASK_HANDLERS(Seaquest, minatar::MinAtar<minatar::Seaquest>)
METAGRAPH_TASK_HANDLERS(SpaceInvaders, minatar::MinAtar<minatar::SpaceInvaders>)

NB_MODULE(_tasks, m) {
  metagraph::engine::init_module(m);
  METAGRAPH_BIND_TASK(m, Breakout, minatar::MinAtar<minatar::Breakout>);
  METAGRAPH_BIND_TASK(m, Asterix, minatar::MinAtar<minatar::Asterix>);
  METAGRAPH_BIND_TASK(m, Freeway, minatar::MinAtar<minatar::Freeway>);
  METAGRAPH_BIND_TASK(m, Seaquest, minatar::MinAtar<minatar::Seaquest>);
  METAGRAPH_BIND_TASK(m, SpaceInvaders, minatar::MinAtar<minatar::SpaceInvaders>);
}
