"""How strong is a trained network? Win rates against fixed opponents, both colours.

    python scripts/strength_report.py models/hex5/anet_ep0200.keras [--games 40] [--search-games 200]

Agents: the raw network playing greedily, and MCTS with the network's rollouts
(``--search-games``). Opponents: a uniformly random player and plain UCT-MCTS with
random rollouts at 100, 500 and 1,000 search games. Every pairing plays ``--games``
games: half with the agent as player 1, half as player 2, and within each half the
agent moves first in half of the games, so neither colour nor the first move favours
anyone. Prints a table; ``--json FILE`` writes it too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mctsfw  # noqa: E402
from mctsfw.match import play_game  # noqa: E402


def evaluate(game, agent, opponent, games: int, first_player_starts: bool = False) -> dict:
    wins = {"first": 0, "second": 0}
    played = {"first": 0, "second": 0}
    draws = 0
    started = time.perf_counter()
    for i in range(games):
        agent_player = 1 if i % 2 == 0 else 2
        agent_starts = agent_player == 1 if first_player_starts else (i // 2) % 2 == 0
        start = agent_player if agent_starts else 3 - agent_player
        actors = {agent_player: agent, 3 - agent_player: opponent}
        record = play_game(game, actors, start)
        key = "first" if agent_starts else "second"
        played[key] += 1
        wins[key] += record.winner == agent_player
        draws += record.winner is None
    total = wins["first"] + wins["second"]
    return {
        "games": games,
        "wins": total,
        "draws": draws,
        "win_rate": total / games,
        "win_rate_moving_first": wins["first"] / max(played["first"], 1),
        "win_rate_moving_second": wins["second"] / max(played["second"], 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a saved network (.keras)")
    parser.add_argument("--game", default="hex")
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--games", type=int, default=40, help="games per pairing (a multiple of 4 is fair)")
    parser.add_argument("--search-games", type=int, default=200, help="search games of the network-guided MCTS agent (0: only the raw network)")
    parser.add_argument("--opponents", default="random,100,500,1000",
                        help="random, UCT budgets and/or saved networks, comma-separated")
    parser.add_argument("--no-raw", action="store_true", help="leave out the raw network")
    parser.add_argument("--value-weight", type=float, default=1.0,
                        help="PUCT's lambda for a policy-and-value network: lambda * value + (1 - lambda) * playout")
    parser.add_argument("--first-player-starts", action="store_true", help="player 1 opens every game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    game = mctsfw.make_game(args.game, **({"size": args.size} if args.game == "hex" else {}))
    agents = {}
    if not args.no_raw:
        agents["raw network (greedy)"] = mctsfw.make_actor(args.model, game, search_games=0, selection="greedy", seed=args.seed)
    if args.search_games > 0:
        extra = {"policy_params": {"value_weight": args.value_weight}} if args.value_weight != 1.0 else {}
        lam = f", lambda {args.value_weight}" if extra else ""
        agents[f"network + search({args.search_games}{lam})"] = mctsfw.make_actor(
            args.model, game, search_games=args.search_games, seed=args.seed, **extra
        )
    opponents = {}
    for spec in args.opponents.split(","):
        if spec == "random":
            opponents["random"] = mctsfw.make_actor("random", game, seed=args.seed + 1)
        elif not spec.isdigit():
            opponents[Path(spec).stem] = mctsfw.make_actor(spec, game, search_games=0, selection="greedy")
        else:
            opponents[f"UCT({spec})"] = mctsfw.make_actor("mcts", game, search_games=int(spec), seed=args.seed + 2)
    print(f"{args.model} on {game!r}, {args.games} games a pairing")
    print(f"{'agent':<26} {'opponent':<13} {'wins':>9} {'draws':>5} {'moving 1st':>11} {'moving 2nd':>11} {'seconds':>8}")
    results = []
    for agent_name, agent in agents.items():
        for opponent_name, opponent in opponents.items():
            r = evaluate(game, agent, opponent, args.games, args.first_player_starts)
            results.append({"agent": agent_name, "opponent": opponent_name, **r})
            print(
                f"{agent_name:<26} {opponent_name:<13} {r['wins']:>3}/{r['games']:<3} {r['win_rate']:>4.0%} {r['draws']:>5}"
                f" {r['win_rate_moving_first']:>10.0%} {r['win_rate_moving_second']:>11.0%} {r['seconds']:>8}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "results": results}, indent=2))


if __name__ == "__main__":
    main()
