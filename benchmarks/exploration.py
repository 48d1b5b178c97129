"""Which exploration settings play strongest, per game, at equal search games.

    python benchmarks/exploration.py [--games 24] [--search-games 400] [--net-search-games 200]
                                     [--games-list gomoku9,connect4,hex7] [--sections uct,fpu,gumbel]
                                     [--gumbel-search-games 8,32]

1. UCT's exploration constant c (random rollouts, proofs and threats): each value of
   ``--cs`` against c = 1.4 (today's one default) at ``--search-games`` a move.
2. PUCT's first-play value (``first_play``) with the game's shipped network: "reduction"
   (0.2), "loss" and "win" against "parent" (today's) at ``--net-search-games`` a move.
3. The root search with the game's shipped network: Gumbel AlphaZero's (``gumbel``:
   sequential halving) against PUCT at each of ``--gumbel-search-games`` a move.

Every pairing plays ``--games`` games in pairs from the same opening of two random moves
(a different one for each pair, ``mctsfw.match.Openings``), each side playing each colour
once, so that the deterministic network players do not repeat one game. Prints the score of the setting
against the reference with its 95% interval.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.match import PLAYER_1_OPENS, play_pairs  # noqa: E402
from search_strength import wilson  # noqa: E402
from shipped import shipped_model  # noqa: E402

GAMES = {  # key: (game, its settings, the folder of models/ whose network plays it)
    "gomoku9": ("gomoku", {"size": 9}, "gomoku9"),
    "connect4": ("connect4", {}, "connect4"),
    "hex7": ("hex", {"size": 7}, "hex7"),
    "hex5": ("hex", {"size": 5}, "hex5-az"),
    "hex9": ("hex", {"size": 9}, None),  # no network shipped: UCT only
    "go9": ("go", {"size": 9}, None),
}


def score(game, make_a, make_b, games: int, seed: int) -> tuple[float, int]:
    """A's score (draws half) over ``games`` games played in pairs from random two-move openings."""
    match = play_pairs(game, make_a(seed), make_b(seed + 1000), games // 2 * 2, PLAYER_1_OPENS, openings=2, seed=seed)
    tally = match.tally()
    return (tally.wins + 0.5 * tally.draws) / max(match.games, 1), match.games


def line(label: str, result: tuple[float, int]) -> str:
    value, n = result
    low, high = wilson(value, n)
    return f"  {label:<28} {value:5.0%} of {n} games (95% {low:.0%}-{high:.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--search-games", type=int, default=400, help="UCT's search games a move")
    parser.add_argument("--net-search-games", type=int, default=200, help="PUCT's search games a move")
    parser.add_argument("--cs", default="0.25,0.5,0.7,1.0", help="UCT constants to try against 1.4")
    parser.add_argument("--games-list", default="gomoku9,connect4,hex7")
    parser.add_argument("--sections", default="uct,fpu", help="some of uct, fpu, gumbel")
    parser.add_argument("--gumbel-search-games", default="8,32", help="search games a move of the gumbel section")
    args = parser.parse_args()
    print(f"{args.games} games a pairing; {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    sections = args.sections.split(",")
    for key in args.games_list.split(","):
        name, params, net = GAMES[key]
        game = mctsfw.make_game(name, **params)
        print(f"\n{key}")
        if "uct" in sections:
            def uct(c):
                return lambda seed: mctsfw.make_actor("mcts", game, search_games=args.search_games, c=c, seed=seed)
            for c in (float(x) for x in args.cs.split(",")):
                print(line(f"UCT c={c} vs c=1.4", score(game, uct(c), uct(1.4), args.games, seed=1)))
        if "fpu" in sections and net is not None:
            def puct(first_play):
                return lambda seed: mctsfw.make_actor(shipped_model(net), game, search_games=args.net_search_games, seed=seed,
                                                      policy_params={"first_play": first_play})
            for option in ("reduction", "loss", "win"):
                print(line(f"PUCT first_play={option}", score(game, puct(option), puct("parent"), args.games, seed=2)))
        if "gumbel" in sections and net is not None:
            def searching(tree_policy, n):
                return lambda seed: mctsfw.make_actor(shipped_model(net), game, search_games=n, seed=seed, tree_policy=tree_policy)
            for n in (int(x) for x in args.gumbel_search_games.split(",")):
                print(line(f"Gumbel vs PUCT, {n} a move", score(game, searching("gumbel", n), searching("puct", n),
                                                               args.games, seed=3)))


if __name__ == "__main__":
    main()
