"""A 5x5 Hex agent against perfect play: how often it keeps a won position won.

    python benchmarks/hex_perfect.py [--model models/hex5/anet_ep0250.keras] [--search-games 0]
                                     [--tree-policy uct] [--games 200] [--opening 6]

``games/hex_solver.py`` solves every position the agent meets. A position is *won* when
the player to move wins with perfect play (Hex has no draws); the agent *keeps* it when
its move leads to a position that is still won for it. Each game starts from a random
opening of 0 to ``--opening`` moves (seeded, so every run meets the same openings); the
agent plays one seat (the player to move after the opening in even games, the other in
odd ones) and a perfect player the other: one winning move where it has one (the first
in the solver's centre-first order), a random move where it has none. A lost agent thus
gets won positions back only from its opponent's random moves in lost positions, never
by a perfect player's slip, and each of its slips is scored where it happens.

The agent is the model's raw network with ``--search-games 0`` (its most probable legal
move, as ``cli.py topp`` plays it), or the model searching with that many search games
of ``--tree-policy`` (its leaves judged as ``cli.py play`` judges them: rollouts for an
ANET, the value head for a policy-and-value net).

Prints the share of won positions the agent keeps (with its 95% interval), that share by
the number of stones on the board, and the games' results.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.games.hex_solver import HexSolver  # noqa: E402
from hexzero.mctsfw.checkpoints import ModelFileError  # noqa: E402
from hexzero.mctsfw.plugin_manager import UnknownPluginError  # noqa: E402
from search_strength import wilson  # noqa: E402
from shipped import shipped_model  # noqa: E402

#: stones on the board: the buckets of the breakdown
BUCKETS = ((0, 4), (5, 9), (10, 25))


def kept_share(agent, game, solver: HexSolver, games: int, opening: int, seed: int) -> dict:
    """Plays the games (see the module's text) and counts, per number of stones on the
    board, the agent's moves in won positions and those that kept the win, over the
    distinct games (a game met again, the agent deterministic, counts once)."""
    rng = random.Random(seed)
    played: dict[tuple, tuple[dict, str]] = {}  # (seat, moves) -> (its counts, the agent's result)
    for number in range(games):
        state, moves = game.initial_state(1), []
        for _ in range(rng.randint(0, opening)):
            moves.append(rng.choice(game.legal_actions(state)))
            state = game.next_state(state, moves[-1])
            if game.is_final(state):
                break
        if game.is_final(state):
            continue
        seat = game.current_player(state) if number % 2 == 0 else 3 - game.current_player(state)
        agent.reset()
        counts = {bucket: [0, 0] for bucket in BUCKETS}  # bucket -> [won positions, kept]
        while not game.is_final(state):
            if game.current_player(state) == seat:
                action = agent.select_action(state)
                if solver.wins(state):
                    stones = bin(state[1] | state[2]).count("1")
                    bucket = next(b for b in BUCKETS if b[0] <= stones <= b[1])
                    counts[bucket][0] += 1
                    counts[bucket][1] += not solver.wins(game.next_state(state, action))
            else:
                action = solver.winning_move(state)
                if action is None:
                    action = rng.choice(game.legal_actions(state))
            moves.append(action)
            state = game.next_state(state, action)
            solver.forget()
        played[seat, tuple(moves)] = (counts, "wins" if game.winner(state) == seat else "losses")
    counts = {bucket: [0, 0] for bucket in BUCKETS}
    results = {"wins": 0, "losses": 0}
    for game_counts, result in played.values():
        for bucket, (n, k) in game_counts.items():
            counts[bucket][0] += n
            counts[bucket][1] += k
        results[result] += 1
    return {"counts": counts, "results": results, "distinct_games": len(played)}


def totals(counts: dict) -> tuple[int, int]:
    """(won positions met, those kept) over every bucket of ``kept_share``'s counts."""
    return sum(n for n, _ in counts.values()), sum(k for _, k in counts.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(shipped_model("hex5")))
    parser.add_argument("--search-games", type=int, default=0, help="0: the raw network")
    parser.add_argument("--tree-policy", default=None, help="uct, puct, gumbel, ... (default: the net's)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--opening", type=int, default=6, help="random moves before the agent plays, at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.games < 1 or args.search_games < 0 or args.opening < 0:
        parser.error("--games must be at least 1, --search-games and --opening at least 0")
    game = mctsfw.make_game("hex", size=5)
    try:
        agent = mctsfw.make_actor(args.model, game, search_games=args.search_games, seed=args.seed,
                                  tree_policy=args.tree_policy if args.search_games else None)
    except (ModelFileError, UnknownPluginError, ValueError) as error:  # a bad model file; an unknown tree policy
        parser.error(str(error))
    how = f"{args.tree_policy or 'default search'}" if args.search_games else "raw network"
    print(f"{agent.label} ({how}) against perfect play on 5x5 Hex, {args.games} games, random openings of "
          f"0-{args.opening} moves; {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    start = time.perf_counter()
    found = kept_share(agent, game, HexSolver(game), args.games, args.opening, args.seed)
    won, kept = totals(found["counts"])
    low, high = wilson(kept / max(won, 1), won)
    print(f"won positions kept: {kept} of {won} = {kept / max(won, 1):.1%} (95% {low:.1%}-{high:.1%})")
    for (fewest, most), (n, k) in found["counts"].items():
        print(f"  {fewest}-{most} stones on the board: {k} of {n} = {k / max(n, 1):.1%}")
    results = found["results"]
    print(f"results: {results['wins']} wins, {results['losses']} losses in the {found['distinct_games']} different "
          f"games (of {args.games} played; a game met again counts once); {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
