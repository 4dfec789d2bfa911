// components.envs.games._tasks: two-player board games on the engine (board_game.h).
#include "connect_four.h"
#include "engine/module.h"
#include "hex.h"
#include "othello.h"

namespace games = metagraph::games;

METAGRAPH_TASK_HANDLERS(ConnectFour, games::BoardGame<games::ConnectFour>)
METAGRAPH_TASK_HANDLERS(Othello, games::BoardGame<games::Othello>)
METAGRAPH_TASK_HANDLERS(Hex, games::BoardGame<games::Hex>)

NB_MODULE(_tasks, m) {
  metagraph::engine::init_module(m);
  METAGRAPH_BIND_TASK(m, ConnectFour, games::BoardGame<games::ConnectFour>);
  METAGRAPH_BIND_TASK(m, Othello, games::BoardGame<games::Othello>);
  METAGRAPH_BIND_TASK(m, Hex, games::BoardGame<games::Hex>);
}
