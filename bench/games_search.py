"""Search simulations per second at Connect Four or Othello: the AlphaZero agent's search (mctx's
Gumbel MuZero, its model the native game stepped through the in-graph door) against the same
mctx search over pgx's pure-JAX game (`pgx.make("connect_four")`, `pgx.make("othello")`, the
recurrent function of pgx's own AlphaZero example), with the same network (the agent's default
`PolicyValueNetwork`, the same parameters), the same simulation count and batch, from the same
positions. (Hex is left out: pgx's Hex has the swap rule, a 122nd action and four planes, so
one network cannot serve both.)

    python bench/games_search.py [--game othello] [--batch 256] [--simulations 32]

Each contender runs in a fresh process (no other program's threads or compiled code beside
it). One timed call is one search of every game of the batch (jitted, compiled before
timing); the best of `--rounds` rounds of `--calls` calls is kept (load only ever slows one
down). Beside it, what the search's model step costs without the network: one move in every
game of the batch, to the next planes and legal moves (ours: the door's step and legal mask;
pgx: `vmap(env.step)`), and mctx's own cost: the same search with a free model (constant
outputs, no game, no network), what both contenders pay whatever their game. The positions
are reached by `--moves` random legal moves (drawn in our game, the same moves played in
pgx's), so searches meet the games' ends inside their trees.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

CONTENDERS = ("ours", "pgx", "floor")
GAMES = {"connect_four": ("ConnectFour-v0", "Connect Four"), "othello": ("Othello-v0", "Othello")}


def network(game: str, batch: int):
    """The AlphaZero agent at `game` (default config, `batch` games) and its network's
    parameters."""
    from components.agents.alphazero_agent import AlphaZeroAgent
    from components.agents.alphazero_config import AlphaZeroConfig

    agent = AlphaZeroAgent(GAMES[game][0], AlphaZeroConfig(num_envs=batch))
    planes = jnp.zeros((1, *agent.planes_shape))
    params = agent.network.transformed.init(jax.random.PRNGKey(0), planes)
    return agent, params


def random_moves(agent, batch: int, moves: int) -> tuple:
    """The state of our `batch` games after `moves` random legal moves, and those moves
    [moves, batch] (to play the same in pgx's game); a game that ends is searched all the
    same (the engine starts the next one)."""
    games = agent.games
    state = games.init(jax.random.PRNGKey(0), batch)
    step = jax.jit(games.step)
    rng = np.random.default_rng(0)
    chosen = np.zeros((moves, batch), np.int32)
    for t in range(moves):
        legal = np.asarray(state.legal_action_mask)
        chosen[t] = [rng.choice(np.flatnonzero(row)) for row in legal]
        state = step(state, jnp.asarray(chosen[t]))
    return state, chosen


def first_legal(legal: jax.Array) -> jax.Array:
    """The first legal move of each game, int32[n]."""
    return jnp.argmax(legal, -1).astype(jnp.int32)


def ours(game: str, batch: int, simulations: int, moves: int) -> tuple:
    """The agent's search over the native games: (search(key) -> action weights)."""
    from components.envs.games.self_play import SelfPlay
    from components.search import embedding_of

    agent, params = network(game, batch)
    games: SelfPlay = agent.games
    state, _ = random_moves(agent, batch, moves)
    search = jax.jit(lambda key: agent.search(params, key, state, simulations).action_weights)
    embedding = embedding_of(state.env_state)
    action = first_legal(state.legal_action_mask)[:, None]

    @jax.jit
    def game_step():  # what the search's model step costs without the network
        after = games.door.step(embedding, action, legal_mask=True)
        return after.obs, after.legal_mask

    return search, game_step


def pgx_recurrent_fn(env, evaluate):
    """pgx's AlphaZero example's `recurrent_fn` (examples/alphazero/train.py) over pgx's game
    `env`, with the network `evaluate(params, planes) -> (logits, value)`: the peer here, and
    the reference of tests/components/search/test_game_search.py."""
    import mctx

    def recurrent_fn(params, rng_key, action, state):
        del rng_key
        mover = state.current_player
        state = jax.vmap(env.step)(state, action)
        logits, value = evaluate(params, state.observation.astype(jnp.float32))
        logits = logits - jnp.max(logits, axis=-1, keepdims=True)
        logits = jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min)
        reward = state.rewards[jnp.arange(state.rewards.shape[0]), mover]
        value = jnp.where(state.terminated, 0.0, value)
        discount = jnp.where(state.terminated, 0.0, -1.0)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits,
                                      value=value), state

    return recurrent_fn


def pgx_search(game: str, batch: int, simulations: int, moves: int) -> tuple:
    """mctx over pgx's game with the agent's network: (search(key) -> weights)."""
    import mctx
    import pgx

    agent, params = network(game, batch)
    evaluate = agent.network.forward_with
    env = pgx.make(game)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    step = jax.jit(jax.vmap(env.step))
    for actions in random_moves(agent, batch, moves)[1]:
        state = step(state, jnp.asarray(actions))

    recurrent_fn = pgx_recurrent_fn(env, evaluate)

    @jax.jit
    def search(key):
        logits, value = evaluate(params, state.observation.astype(jnp.float32))
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        return mctx.gumbel_muzero_policy(
            params, key, root, recurrent_fn, simulations,
            invalid_actions=~state.legal_action_mask,
            max_num_considered_actions=agent.config.max_considered_actions).action_weights

    action = first_legal(state.legal_action_mask)

    @jax.jit
    def game_step():  # what the search's model step costs without the network
        after = jax.vmap(env.step)(state, action)
        return after.observation, after.legal_action_mask

    return search, game_step


def floor(game: str, batch: int, simulations: int, moves: int) -> tuple:
    """mctx's own cost: the same search with a free model (no game, no network: constant
    outputs, a one-word embedding), (search(key) -> weights)."""
    import mctx

    del moves
    agent, _ = network(game, batch)
    actions = agent.num_actions

    def recurrent_fn(params, rng_key, action, embedding):
        del params, rng_key
        zeros = jnp.zeros((batch,), jnp.float32) + 0.0 * action
        return mctx.RecurrentFnOutput(reward=zeros, discount=zeros - 1.0,
                                      prior_logits=jnp.zeros((batch, actions)),
                                      value=zeros), embedding

    @jax.jit
    def search(key):
        root = mctx.RootFnOutput(prior_logits=jnp.zeros((batch, actions)),
                                 value=jnp.zeros((batch,)),
                                 embedding=jnp.zeros((batch, 1), jnp.uint32))
        return mctx.gumbel_muzero_policy(
            None, key, root, recurrent_fn, simulations,
            max_num_considered_actions=agent.config.max_considered_actions).action_weights

    return search, lambda: jnp.zeros(())


def measure(name: str, game: str, batch: int, simulations: int, moves: int, rounds: int,
            calls: int) -> dict:
    """Simulations per second of one contender, in this process."""
    make = {"ours": ours, "pgx": pgx_search, "floor": floor}[name]
    search, game_step = make(game, batch, simulations, moves)
    jax.block_until_ready((search(jax.random.PRNGKey(0)), game_step()))  # compile
    best = step_best = float("inf")
    for r in range(rounds):
        start = time.perf_counter()
        for c in range(calls):
            out = search(jax.random.PRNGKey(1 + r * calls + c))
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(20 * calls):
            out = game_step()
        jax.block_until_ready(out)
        step_best = min(step_best, (time.perf_counter() - start) / (20 * calls))
    return {"contender": name, "seconds_per_search": best,
            "simulations_per_second": batch * simulations / best,
            "game_step_seconds": step_best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=tuple(GAMES), default="connect_four")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--moves", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--only", choices=CONTENDERS, help=argparse.SUPPRESS)  # the child
    args = parser.parse_args()
    settings = (args.game, args.batch, args.simulations, args.moves, args.rounds, args.calls)
    if args.only:
        print(json.dumps(measure(args.only, *settings)))
        return
    results = {}
    for name in CONTENDERS:
        child = subprocess.run(
            [sys.executable, __file__, "--only", name, "--game", args.game,
             "--batch", str(args.batch),
             "--simulations", str(args.simulations), "--moves", str(args.moves),
             "--rounds", str(args.rounds), "--calls", str(args.calls)],
            capture_output=True, text=True, check=True)
        results[name] = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"{GAMES[args.game][1]}, Gumbel MuZero (mctx), batch {args.batch}, {args.simulations} "
          f"simulations, the agent's default network, best of {args.rounds} x {args.calls}")
    for name, label in (("ours", "ours: native game, in-graph door"),
                        ("pgx", "mctx over pgx's game")):
        r = results[name]
        print(f"  {label:34s} {r['simulations_per_second']:12,.0f} simulations/s "
              f"({r['seconds_per_search'] * 1e3:.1f} ms per search; the model's game step "
              f"alone, {args.batch} games, next planes and legal moves: "
              f"{r['game_step_seconds'] * 1e6:.0f} us)")
    print(f"  {'mctx alone (a free model)':34s} "
          f"{results['floor']['simulations_per_second']:12,.0f} simulations/s "
          f"({results['floor']['seconds_per_search'] * 1e3:.1f} ms per search: no game, no "
          f"network)")
    ratio = (results["ours"]["simulations_per_second"]
             / results["pgx"]["simulations_per_second"])
    print(f"  ratio ours / pgx: {ratio:.2f}x")


if __name__ == "__main__":
    main()
