// components.envs.classic_control._tasks: Gymnasium's classic-control tasks on the engine.
#include "classic_control.h"
#include "engine/module.h"

namespace cc = metagraph::classic_control;

METAGRAPH_TASK_HANDLERS(CartPole, cc::Classic<cc::CartPole>)
METAGRAPH_TASK_HANDLERS(Acrobot, cc::Classic<cc::Acrobot>)
METAGRAPH_TASK_HANDLERS(MountainCar, cc::Classic<cc::MountainCar>)
METAGRAPH_TASK_HANDLERS(MountainCarContinuous, cc::Classic<cc::MountainCarContinuous>)
METAGRAPH_TASK_HANDLERS(Pendulum, cc::Classic<cc::Pendulum>)

NB_MODULE(_tasks, m) {
  metagraph::engine::init_module(m);
  METAGRAPH_BIND_TASK(m, CartPole, cc::Classic<cc::CartPole>);
  METAGRAPH_BIND_TASK(m, Acrobot, cc::Classic<cc::Acrobot>);
  METAGRAPH_BIND_TASK(m, MountainCar, cc::Classic<cc::MountainCar>);
  METAGRAPH_BIND_TASK(m, MountainCarContinuous, cc::Classic<cc::MountainCarContinuous>);
  METAGRAPH_BIND_TASK(m, Pendulum, cc::Classic<cc::Pendulum>);
}
