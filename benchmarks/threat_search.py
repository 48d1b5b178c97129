"""The game's threat-space search (``Game.forced_win``: Gomoku's victories by continuous
fours and threes; ``Game.threat_defences``: its answers to a three) at equal time: UCT with
it against UCT without it, each with the same seconds a move.

    python benchmarks/threat_search.py [--games 20] [--seconds 0.3] [--sizes 9,15]

Both players have the rest of the tactics (proofs, ``forcing_actions``); only the one
without has ``MCTS.forced_wins`` and ``MCTS.defences`` turned off. Each side is player 1
in half the games and opens in half of each half (``mctsfw.match.BALANCED``). The
score of the player with the threat search is printed with its 95% interval (draws count
half).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.match import play_pairs  # noqa: E402
from search_strength import player, wilson  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games a board size")
    parser.add_argument("--seconds", type=float, default=0.3, help="each player's time a move")
    parser.add_argument("--sizes", default="9,15", help="Gomoku board sizes")
    args = parser.parse_args()
    print(f"Gomoku, UCT at {args.seconds} s a move, with the threat search against without; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for size in (int(s) for s in args.sizes.split(",")):
        game = mctsfw.make_game("gomoku", size=size)
        with_search = player(game, args.seconds, 1, "with")
        without = player(game, args.seconds, 2, "without")
        without.mcts.forced_wins = without.mcts.defences = False  # the rest of the tactics kept
        match = play_pairs(game, with_search, without, args.games)
        tally = match.tally()
        score = (tally.wins + 0.5 * tally.draws) / args.games
        low, high = wilson(score, args.games)
        print(f"  {size}x{size}: {tally.wins} wins, {tally.draws} draws, {tally.losses} losses of {args.games}: "
              f"score {score:.0%} ({low:.0%}-{high:.0%}), {match.distinct_games} different games")


if __name__ == "__main__":
    main()
