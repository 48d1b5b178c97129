"""Tactical solve rates of hexzero's searches beside OpenSpiel's MCTS, in one run.

    python benchmarks/tactics.py [--per-class 30] [--budget 400] [--games gomoku9,gomoku15,connect4]

Positions come from random games and are classified by brute force with the game's own
rules (``mctsfw.tactics``: win now, stop the opponent's immediate win, win in three). Each
player searches each position once with ``--budget`` search games (simulations) and is
scored on whether its move is one of the position's solutions:

- hexzero UCT without proofs and threats (``solver=False, threats=False``; a final winning
  move once tried is still played: ``mcts.best_child``);
- hexzero UCT and RAVE (proofs, threats), and the shipped network of the game with PUCT;
- OpenSpiel's C++ ``MCTSBot`` with one random rollout per simulation, uct_c = 2 (its
  examples' value, on results in [-1, 1]), without and with its solver: the player
  ``openspiel:BUDGET`` (``plugins/openspiel.py``).

Then the cost of one ``Game.forcing_actions`` call per game, over the same positions, and
of one ``Game.forced_win`` call (the game's threat search: Gomoku's victory by continuous
fours, compiled, and beside it the same search in Python, as for ``threat_defences``; ``thorough``, as at a search's
root, by threes too) and one ``Game.threat_defences`` call (Gomoku's answers to a three)
over positions of random games where nobody can win at once.
Without OpenSpiel (``pip install -e .[differential]``) its rows are left out.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw import MCTS, make_tree_policy  # noqa: E402
from hexzero.mctsfw.actors import ActorError  # noqa: E402
from hexzero.mctsfw.tactics import CLASSES, collect, play_positions, random_players  # noqa: E402
from shipped import shipped_model  # noqa: E402

GAMES = {
    "gomoku9": ("gomoku 9x9", ("gomoku", {"size": 9}), "gomoku9"),
    "gomoku15": ("gomoku 15x15", ("gomoku", {"size": 15, "history": 2}), "gomoku15"),
    "connect4": ("connect four", ("connect4", {}), "connect4"),
}


def hexzero_search(game, budget, tree_policy="uct", **options):
    def move(tactic, seed):
        mcts = MCTS(game, make_tree_policy(tree_policy), seed=seed, **options)
        return mcts.best_action(mcts.search(tactic.state, search_games=budget))
    return move


def hexzero_net(game, budget, folder):
    actor = mctsfw.make_actor(shipped_model(folder), game, search_games=budget, seed=1)  # the network loaded once

    def move(tactic, seed):
        actor.reset()  # no tree kept from another position
        return actor.select_action(tactic.state)
    return move


def openspiel_bot(game, budget, solve):
    """OpenSpiel's C++ MCTS (``plugins/openspiel.py``), told the moves to each position; None without OpenSpiel."""
    try:
        actor = mctsfw.make_actor(f"openspiel:{budget}{'' if solve else ',nosolve'}", game, seed=1)
    except ActorError:
        return None

    def move(tactic, seed):
        actor.reset()  # a new game, with a seed of its own
        actor.opening_played(tactic.starting_player, list(tactic.moves))
        return actor.select_action(tactic.state)
    return move


def solve_rates(move, found, seed=1):
    """Per class: (share solved, seconds a position)."""
    rates = {}
    for kind, tactics in found.items():
        start = time.perf_counter()
        solved = sum(move(t, seed + i) in t.solutions for i, t in enumerate(tactics))
        rates[kind] = (solved / len(tactics) if tactics else float("nan"),
                       (time.perf_counter() - start) / max(len(tactics), 1))
    return rates


def forcing_cost(game, found) -> float:
    """Microseconds a ``forcing_actions`` call over the positions found."""
    states = [t.state for tactics in found.values() for t in tactics]
    repeats = max(1, 20000 // max(len(states), 1))
    start = time.perf_counter()
    for _ in range(repeats):
        for state in states:
            game.forcing_actions(state)
    return (time.perf_counter() - start) / (repeats * len(states)) * 1e6


def threat_search_costs(game, quiet: int = 300) -> list[tuple[str, float, float]]:
    """(the call, milliseconds a call, share of calls that found something) of
    ``Game.forced_win`` (a win) and ``Game.threat_defences`` (a threat to answer) over the
    first ``quiet`` positions of random games where ``forcing_actions`` says nothing (where
    a search asks them); those the game declares."""
    states = []
    for moves, starting in play_positions(game, random_players(game), 200, seed=13):
        state = game.state_after(moves, starting)
        if game.forcing_actions(state) is None:
            states.append(state)
        if len(states) == quiet:
            break
    calls = [("forced_win", "forced_win", game.forced_win),
             ("forced_win thorough", "forced_win", lambda state: game.forced_win(state, thorough=True)),
             ("threat_defences", "threat_defences", game.threat_defences)]
    reference = getattr(sys.modules[type(game).__module__], "python_threats", None)
    if reference is not None:  # Gomoku's threat search in Python too: the compiled one's peer
        def in_python(call):
            def called(state):
                with reference():
                    return call(state)
            return called
        calls.insert(1, ("forced_win, in Python", "forced_win", in_python(game.forced_win)))
        calls.append(("threat_defences, in Python", "threat_defences", in_python(game.threat_defences)))
    costs = []
    for label, hook, call in calls:
        if getattr(type(game), hook) is getattr(mctsfw.Game, hook):
            continue
        for state in states[:20]:  # compiled kernels compiled (or loaded) before the clock starts
            call(state)
        start = time.perf_counter()
        found = sum(call(state) is not None for state in states)
        costs.append((label, (time.perf_counter() - start) / len(states) * 1e3, found / len(states)))
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=30, help="positions of each class per game")
    parser.add_argument("--budget", type=int, default=400, help="search games (simulations) per move")
    parser.add_argument("--games", default=",".join(GAMES), help=f"some of {', '.join(GAMES)}")
    args = parser.parse_args()
    print(f"tactics at {args.budget} search games a move, {args.per_class} positions a class; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    costs = []
    for key in args.games.split(","):
        title, (name, params), net = GAMES[key]
        game = mctsfw.make_game(name, **params)
        found = collect(game, play_positions(game, random_players(game), 2000, seed=11), args.per_class)
        counts = ", ".join(f"{len(v)} {k}" for k, v in found.items())
        print(f"\n{title} ({counts})")
        print(f"  {'player':<36}" + "".join(f"{kind:>18}" for kind in CLASSES))
        players = [
            ("hexzero UCT, no proofs/threats", hexzero_search(game, args.budget, solver=False, threats=False)),
            ("hexzero UCT (proofs, threats)", hexzero_search(game, args.budget)),
            ("hexzero RAVE (proofs, threats)", hexzero_search(game, args.budget, "rave")),
        ]
        if net:
            players.append((f"hexzero {net} net + PUCT", hexzero_net(game, args.budget, net)))
        for solve in (False, True):
            bot = openspiel_bot(game, args.budget, solve)
            if bot:
                players.append((f"OpenSpiel C++ MCTS{' + solver' if solve else ''}", bot))
        for label, move in players:
            rates = solve_rates(move, found)
            print(f"  {label:<36}" + "".join(f"{100 * rates[k][0]:7.0f}% {1000 * rates[k][1]:6.0f} ms" for k in CLASSES))
        costs.append((title, forcing_cost(game, found), threat_search_costs(game)))
    print("\nforcing_actions: " + ", ".join(f"{title} {cost:.1f} us a call" for title, cost, _ in costs))
    print("the game's threat search, where forcing_actions says nothing:")
    for title, _, searches in costs:
        for hook, ms, share in searches:
            print(f"  {title} {hook}: {ms:.2f} ms a call, found in {100 * share:.0f}%")


if __name__ == "__main__":
    main()
