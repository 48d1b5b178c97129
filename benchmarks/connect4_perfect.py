"""A Connect Four agent against perfect play: how often its move throws away value.

    python benchmarks/connect4_perfect.py [--model MODEL (models/connect4's network)]
                                          [--search-games 200] [--tree-policy puct] [--games 40]
                                          [--value-weight 1] [--playouts tactical] [--first-play reduction]
                                          [--mean-symmetry]

BitBully (``pip install -e ".[differential]"``), a perfect Connect Four solver with an
opening book, scores every move of every position the agent meets: the game's value
after the move with best play on both sides (a win, a draw or a loss for the mover).
A move is *value-losing* when its value is below the best move's (a won position let
slip to a draw or a loss, a drawn one to a loss), as AlphaZero.jl's Connect Four
benchmark counts them. The agent (the model searching with ``--search-games`` of
``--tree-policy``, or the raw network with 0) plays ``--games`` games against the
perfect player, which picks uniformly among its best moves (seeded): player 1 in half of
them (player 1 moves first, and wins with perfect play), player 2 in the other half.

Prints the share of the agent's moves that lose value (with its 95% interval), the same
for the positions where it moved first and second, and the results.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.actors import Actor  # noqa: E402
from search_options import add_search_options, check_search_options, search_label, search_params  # noqa: E402
from search_strength import wilson  # noqa: E402
from shipped import shipped_model  # noqa: E402


def solver():
    try:
        import bitbully
    except ImportError:
        raise SystemExit('BitBully is not installed: pip install -e ".[differential]"') from None
    return bitbully


class Perfect:
    """BitBully's scores of the moves of a position of ours (player 1 moved first)."""

    def __init__(self, game):
        self.game = game
        self.bitbully = solver()
        self.agent = self.bitbully.BitBully()

    def scores(self, state) -> dict[int, int]:
        """Column -> its score: > 0 the mover wins, 0 a draw, < 0 the mover loses."""
        board = self.bitbully.Board.from_array(self.game.board(state)[::-1].tolist())  # top row first
        return {int(column): int(score) for column, score in self.agent.score_all_moves(board).items()}


def sign(score: int) -> int:
    return (score > 0) - (score < 0)


class PerfectActor(Actor):
    """Plays one of the best moves, uniformly at random among them."""

    kind = "perfect"

    def __init__(self, game, perfect: Perfect, seed: int):
        super().__init__(game)
        self.perfect, self.rng = perfect, random.Random(seed)
        self.label = "perfect"

    def select_action(self, state):
        scores = self.perfect.scores(state)
        best = max(scores.values())
        return self.rng.choice(sorted(c for c, s in scores.items() if s == best))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(shipped_model("connect4")))
    parser.add_argument("--search-games", type=int, default=200, help="0: the raw network")
    parser.add_argument("--tree-policy", default="puct", help="puct or gumbel")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    add_search_options(parser)
    args = parser.parse_args()
    check_search_options(parser, args)
    game = mctsfw.make_game("connect4")
    perfect = Perfect(game)
    agent = mctsfw.make_actor(args.model, game, search_games=args.search_games, seed=args.seed,
                              tree_policy=args.tree_policy if args.search_games else None,
                              **(search_params(args) if args.search_games else {}))
    lam = search_label(args) if args.search_games else " (raw network)"
    print(f"{agent.label}{lam} against perfect play, {args.games} games; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    # (seat, moves) -> (the agent's moves, its value-losing ones, its result): a deterministic agent
    # meets the same game again wherever the perfect player's choices repeat, and it counts once
    played: dict[tuple, tuple[int, int, str]] = {}
    for number in range(args.games):
        seat = 1 + number % 2
        opponent = PerfectActor(game, perfect, seed=args.seed * 1000 + number)
        agent.reset()
        state, actions, counted = game.initial_state(1), [], [0, 0]
        while not game.is_final(state):
            if game.current_player(state) == seat:
                scores = perfect.scores(state)
                action = agent.select_action(state)
                counted[0] += 1
                counted[1] += sign(scores[action]) < sign(max(scores.values()))
            else:
                action = opponent.select_action(state)
            actions.append(action)
            state = game.next_state(state, action)
        winner = game.winner(state)
        played[seat, tuple(actions)] = (*counted, "draws" if winner is None else "wins" if winner == seat else "losses")
    moves = {1: [0, 0], 2: [0, 0]}  # agent's seat -> [moves, value-losing moves] over the distinct games
    results = {"wins": 0, "draws": 0, "losses": 0}
    for (seat, _), (n, k, result) in played.items():
        moves[seat][0] += n
        moves[seat][1] += k
        results[result] += 1
    print(f"{len(played)} different games of the {args.games} played (a game met again counts once)")
    total, lost = moves[1][0] + moves[2][0], moves[1][1] + moves[2][1]
    low, high = wilson(lost / max(total, 1), total)
    print(f"value-losing moves: {lost} of {total} = {lost / max(total, 1):.1%} (95% {low:.1%}-{high:.1%})")
    for seat, name in ((1, "moving first"), (2, "moving second")):
        n, k = moves[seat]
        print(f"  {name}: {k} of {n} = {k / max(n, 1):.1%}")
    print(f"results against perfect play: {results['wins']} wins, {results['draws']} draws, {results['losses']} losses "
          "(a perfect first player wins every game)")


if __name__ == "__main__":
    main()
