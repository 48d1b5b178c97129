"""The search against itself as it was, at equal time per move, both colours, in one run.

    python benchmarks/search_strength.py [--seconds 0.2] [--games 20] [--games-list gomoku9,connect4,hex7,go9]

For each game, matches of ``--games`` games (the new player is player 1 in half of
them, and moves first in half of each half), every player with ``--seconds`` a move:

- new (proofs and threats, UCT with random rollouts) against old (no proofs, no
  threats: the search before them);
- RAVE (proofs, threats) against new UCT;
- tactical playouts (``mcts.playouts = "tactical"``) against random playouts, both new;
- on Go, with ``--gnugo``, new UCT and RAVE against GNU Go at level 1 (komi 7.5, Chinese
  rules), at ``--gnugo-seconds`` a move (docs/search.md's RAVE figure: 1 s, 8 games).

Prints each pairing's score with its 95% interval (Wilson) and the Elo difference.
"""

from __future__ import annotations

import argparse
import math
import platform
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.match import distinct_warning, play_pairs  # noqa: E402
from hexzero.plugins.gtp import gnugo_spec  # noqa: E402

GAMES = {
    "gomoku9": ("gomoku", {"size": 9}),
    "connect4": ("connect4", {}),
    "hex7": ("hex", {"size": 7}),
    "go9": ("go", {"size": 9}),
}


def player(game, seconds, seed, label, **options):
    actor = mctsfw.make_actor("mcts", game, search_games=None, time_limit=seconds, seed=seed, **options)
    actor.label = label
    return actor


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def report(match) -> str:
    tally = match.tally()
    score = (tally.wins + 0.5 * tally.draws) / max(match.games, 1)
    low, high = wilson(score, match.games)
    elo = "" if score in (0.0, 1.0) else f", Elo {400 * math.log10(score / (1 - score)):+.0f}"
    warning = distinct_warning(match)
    return (f"{match.a} vs {match.b}: {tally.wins}-{tally.draws}-{match.games - tally.wins - tally.draws} "
            f"(score {score:.0%}, 95% {low:.0%}-{high:.0%}{elo}; {match.distinct_games} different games"
            + (f" from openings of {match.openings.describe()}" if match.openings else "")
            + f"; {match.seconds:.0f} s)" + (f"\n    {warning}" if warning else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="seconds a move for every player")
    parser.add_argument("--games", type=int, default=20, help="games a pairing (a multiple of 4 is fair)")
    parser.add_argument("--games-list", default=",".join(GAMES), help=f"some of {', '.join(GAMES)}")
    parser.add_argument("--pairings", default="old,rave,tactical", help="some of old, rave, tactical")
    parser.add_argument("--gnugo", action="store_true", help="on Go, also new UCT and RAVE against GNU Go level 1")
    parser.add_argument("--gnugo-seconds", type=float, default=None, help="seconds a move against GNU Go (default: --seconds)")
    args = parser.parse_args()
    print(f"{args.seconds} s a move, {args.games} games a pairing; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    pairings = args.pairings.split(",")
    for key in args.games_list.split(","):
        name, params = GAMES[key]
        game = mctsfw.make_game(name, **params)
        print(f"\n{key}")
        s = args.seconds
        if "old" in pairings:
            print("  " + report(play_pairs(game, player(game, s, 1, "new"), player(game, s, 2, "old", solver=False,
                                                                                      threats=False), args.games)))
        if "rave" in pairings:
            print("  " + report(play_pairs(game, player(game, s, 3, "rave", tree_policy="rave"),
                                           player(game, s, 4, "new"), args.games)))
        if "tactical" in pairings and type(game).forcing_actions is not mctsfw.Game.forcing_actions:
            print("  " + report(play_pairs(game, player(game, s, 5, "tactical", playouts="tactical"),
                                           player(game, s, 6, "new"), args.games)))
        if args.gnugo and name == "go":
            gnugo = shutil.which("gnugo") or shutil.which("gnugo", path="/usr/games")
            if gnugo:
                engine = mctsfw.make_actor(gnugo_spec(1, gnugo), game)
                seconds = args.gnugo_seconds or s
                try:
                    for label, options in (("new", {}), ("rave", {"tree_policy": "rave"})):
                        print("  " + report(play_pairs(game, player(game, seconds, 7, f"{label} {seconds}s", **options),
                                                       engine, args.games)))
                finally:
                    engine.close()


if __name__ == "__main__":
    main()
