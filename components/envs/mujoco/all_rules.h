// The rules of each of Gymnasium's eleven v5 MuJoCo tasks, by id (rules.h, rules/*.h).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include "rules/ant.h"
#include "rules/half_cheetah.h"
#include "rules/hopper.h"
#include "rules/humanoid.h"
#include "rules/inverted_double_pendulum.h"
#include "rules/inverted_pendulum.h"
#include "rules/pusher.h"
#include "rules/reacher.h"

namespace metagraph::mujoco {

// The rules of `task` ("HalfCheetah-v5", ...) made with the task's keyword arguments in `c`.
inline std::unique_ptr<Rules> make_rules(const std::string& task, const engine::Config& c) {
  if (task == "HalfCheetah-v5") return std::make_unique<HalfCheetah>(c, task, false);
  if (task == "Hopper-v5") return std::make_unique<Hopper>(c, task, /*state_range=*/true);
  if (task == "Walker2d-v5") return std::make_unique<Hopper>(c, task, /*state_range=*/false);
  if (task == "Ant-v5") return std::make_unique<Ant>(c);
  if (task == "Swimmer-v5") return std::make_unique<HalfCheetah>(c, task, /*swimmer=*/true);
  if (task == "InvertedPendulum-v5") return std::make_unique<InvertedPendulum>(c);
  if (task == "InvertedDoublePendulum-v5") return std::make_unique<InvertedDoublePendulum>(c);
  if (task == "Reacher-v5") return std::make_unique<Reacher>(c);
  if (task == "Pusher-v5") return std::make_unique<Pusher>(c);
  if (task == "Humanoid-v5") return std::make_unique<Humanoid>(c);
  if (task == "HumanoidStandup-v5") return std::make_unique<HumanoidStandup>(c);
  throw std::invalid_argument(c.task() + ": task " + task + " is none of Gymnasium's v5 MuJoCo "
                              "tasks");
}

}  // namespace metagraph::mujoco
