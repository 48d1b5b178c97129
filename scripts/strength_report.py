"""How strong is a trained network? Win rates against fixed opponents, both colours.

    python scripts/strength_report.py models/hex5/anet_ep0200.keras [--games 40] [--search-games 200]
    python scripts/strength_report.py models/go9/pv_resnet_gen0010.keras --game go --size 9 \
        --seconds 1 --value-weight 0.5 --no-raw --first-player-starts --gnugo 1,5,10 --games 20
    python scripts/strength_report.py models/go13/pv_resnet_gen0004.keras --config configs/go13.toml \
        --seconds 1 --first-player-starts --opponents random --gnugo 1 --games 10

Agents: the raw network playing greedily, and MCTS with the network's rollouts
(``--search-games``, or ``--seconds`` a move; ``--random-symmetry``: its network judges
each position in one of the board's symmetries drawn at random), with the search settings
its file carries unless given. The game is the one the file was made for, or ``--game``
(and ``--size``) or a config's (``--config``). Opponents: a uniformly random player and plain UCT-MCTS with
random rollouts at 100, 500 and 1,000 search games; saved networks, outside GTP engines,
OpenSpiel's MCTS, GNU Go at the ``--gnugo`` levels (komi 7.5, Chinese rules, ``--capture-all-dead
--positional-superko``). Every pairing plays ``--games``
games: half with the agent as player 1, half as player 2, and within each half the
agent moves first in half of the games, so neither colour nor the first move favours
anyone (``--first-player-starts``: player 1, Black in Go, opens every game). A finished game's
winner is what an outside engine that counts games says (GNU Go's ``final_score``, with
its judgement of dead stones), else the rules'. Prints a table; ``--json FILE`` writes it too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.search_options import add_search_options, check_search_options, search_label, search_params  # noqa: E402
from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.actors import registered_actor_kind  # noqa: E402
from hexzero.mctsfw.config import load_config, plugin_params  # noqa: E402
from hexzero.cli import USER_ERRORS, openings_flag  # noqa: E402
from hexzero.mctsfw.match import BALANCED, PLAYER_1_OPENS, distinct_warning, play_pairs  # noqa: E402
from hexzero.plugins.gtp import gnugo_spec  # noqa: E402


def evaluate(game, agent, opponent, games: int, first_player_starts: bool = False, openings: str | int = "auto",
             seed: int = 0) -> dict:
    """The agent's results against the opponent over ``games`` games in pairs (the agent
    once in each seat, the same player opening both), overall and by whether it moved first;
    each pair from its own opening as ``match_openings`` chooses (by default the game's own
    when both players would replay one game); an outside engine that counts games
    referees them."""
    match = play_pairs(game, agent, opponent, games, PLAYER_1_OPENS if first_player_starts else BALANCED, openings,
                       seed, judged=True)
    total = match.tally()
    return {
        "games": games,
        "wins": total.wins,
        "draws": total.draws,
        "win_rate": total.win_rate,
        "as_player_1": f"{match.tally(a_player=1).wins}/{match.tally(a_player=1).games}",
        "as_player_2": f"{match.tally(a_player=2).wins}/{match.tally(a_player=2).games}",
        "win_rate_moving_first": match.tally(a_opens=True).win_rate,
        "win_rate_moving_second": match.tally(a_opens=False).win_rate,
        "distinct_games": match.distinct_games,
        "openings": match.openings.describe() if match.openings else None,
        "warning": distinct_warning(match),
        "seconds": round(match.seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a saved network (.keras)")
    parser.add_argument("--game", help="the game (default: the one the network file was made for, with its settings)")
    parser.add_argument("--config", metavar="FILE", help="the game and its settings from this config (a network "
                                                         "trained with history planes needs its config's game)")
    parser.add_argument("--size", type=int, help="board side, for games that have one (default: the game's own)")
    parser.add_argument("--games", type=int, default=40, help="games per pairing (a multiple of 4 is fair)")
    parser.add_argument("--search-games", type=int, default=200, help="search games of the network-guided MCTS agent (0: only the raw network)")
    parser.add_argument("--opponents", default="random,100,500,1000",
                        help="random, UCT budgets, saved networks, outside engines (gtp:COMMAND) and/or OpenSpiel's MCTS "
                             "(openspiel:SIMULATIONS), comma-separated")
    parser.add_argument("--gnugo", metavar="LEVELS", help="also GNU Go at these levels, comma-separated (Go)")
    parser.add_argument("--seconds", type=float, help="the searching agent thinks this long a move instead of "
                                                       "--search-games")
    parser.add_argument("--no-raw", action="store_true", help="leave out the raw network")
    add_search_options(parser)
    parser.add_argument("--first-player-starts", action="store_true", help="player 1 opens every game")
    openings_flag(parser)
    parser.add_argument("--seed", type=int, default=0, help="the players' seed and the openings'")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    check_search_options(parser, args)

    size = {"size": args.size} if args.size else {}
    if args.config:
        config = load_config(ROOT / "hexzero.toml", args.config)
        game = mctsfw.make_game(config["game"], **{**plugin_params(config, "games", config["game"]), **size})
    elif args.game:
        game = mctsfw.make_game(args.game, **size)
    else:
        game = mctsfw.make_model_game(args.model, **size)
    agents = {}
    if not args.no_raw:
        agents["raw network (greedy)"] = mctsfw.make_actor(args.model, game, search_games=0, selection="greedy", seed=args.seed)
    if args.search_games > 0 or args.seconds:
        extra, lam = search_params(args), search_label(args)
        budget = {"time_limit": args.seconds, "search_games": 0} if args.seconds else {"search_games": args.search_games}
        agents[f"network + search({f'{args.seconds:g} s' if args.seconds else args.search_games}{lam})"] = \
            mctsfw.make_actor(args.model, game, seed=args.seed, **budget, **extra)
    opponents = {}
    specs = [spec for spec in args.opponents.split(",") if spec]
    specs += [gnugo_spec(int(level)) for level in (args.gnugo or "").split(",") if level]
    for spec in specs:
        if spec == "random":
            opponents["random"] = mctsfw.make_actor("random", game, seed=args.seed + 1)
        elif not spec.isdigit():  # a saved network, or an outside engine (gtp:COMMAND)
            opponent = mctsfw.make_actor(spec, game, search_games=0, selection="greedy", seed=args.seed)
            name = opponent.label if registered_actor_kind(spec) else Path(spec).stem
            if spec.startswith("gtp:gnugo") and "--level" in spec:
                name += f" level {spec.split('--level')[1].split()[0]}"
            opponents[name] = opponent
        else:
            opponents[f"UCT({spec})"] = mctsfw.make_actor("mcts", game, search_games=int(spec), seed=args.seed + 2)
    print(f"{args.model} on {game!r}, {args.games} games a pairing, in pairs with the agent once in each seat"
          + (", player 1 opening every game" if args.first_player_starts else ", each player opening half the pairs"))
    print(f"{'agent':<36} {'opponent':<24} {'wins':>9} {'draws':>5} {'as p1':>6} {'as p2':>6} {'moving 1st':>11}"
          f" {'moving 2nd':>11} {'distinct':>8} {'seconds':>8}  openings")
    results = []
    for agent_name, agent in agents.items():
        for opponent_name, opponent in opponents.items():
            r = evaluate(game, agent, opponent, args.games, args.first_player_starts, args.openings, args.seed)
            results.append({"agent": agent_name, "opponent": opponent_name, "seed": args.seed, **r})
            print(
                f"{agent_name:<36} {opponent_name:<24} {r['wins']:>3}/{r['games']:<3} {r['win_rate']:>4.0%} {r['draws']:>5}"
                f" {r['as_player_1']:>6} {r['as_player_2']:>6} {r['win_rate_moving_first']:>10.0%}"
                f" {r['win_rate_moving_second']:>11.0%} {r['distinct_games']:>8} {r['seconds']:>8}"
                f"  {r['openings'] or 'the empty board'}",
                flush=True,
            )
            if r["warning"]:
                print(f"{'':<4}{r['warning']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "game": repr(game), "command": " ".join(sys.argv),
                                               "results": results}, indent=2))


if __name__ == "__main__":
    try:
        main()
    except USER_ERRORS as error:  # a missing engine, a broken model file: one line, exit 2, as cli.py says it
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
