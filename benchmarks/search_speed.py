"""Search games per second of UCT with random rollouts, from the empty board / start.

    python benchmarks/search_speed.py [--games 20000] [--repeats 3] [--model models/hex5/anet_ep0250.keras]

Prints hexzero's figure for 5x5 and 7x7 Hex and NIM (3, 4, 5), and, when OpenSpiel is
installed (``pip install -e .[differential]``), OpenSpiel's Python MCTS on the same
positions (game logic in C++, one random rollout per search game) and the ratio.
Without OpenSpiel it compares with the reference figures measured on the 2-core
development machine: 3,600 search games/s on 5x5 and 2,500 on 7x7.

Then 5x5 Hex with the ANET as rollout policy (epsilon 0, the shipped model by default):
batched (32 playouts in lock-step, virtual loss) and one playout at a time, against
random rollouts. The target is at least a third of the random-rollout rate.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mctsfw  # noqa: E402
from mctsfw import MCTS, make_tree_policy  # noqa: E402

REFERENCE = {"hex 5x5": 3600, "hex 7x7": 2500}


def ours(game, games: int, repeats: int, default_policy=None, batch_size=None) -> float:
    best = 0.0
    for seed in range(repeats):
        mcts = MCTS(game, make_tree_policy("uct", c=1.4), default_policy, seed=seed, batch_size=batch_size)
        start = time.perf_counter()
        mcts.search(game.initial_state(), search_games=games)
        best = max(best, games / (time.perf_counter() - start))
    return best


def openspiel(name: str, params: dict, games: int, repeats: int) -> float | None:
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None
    game = pyspiel.load_game(name, params)
    best = 0.0
    for seed in range(repeats):
        rng = np.random.RandomState(seed)
        bot = mcts.MCTSBot(game, 1.4, games, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=False)
        start = time.perf_counter()
        bot.mcts_search(game.new_initial_state())
        best = max(best, games / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20000, help="search games per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is shown")
    parser.add_argument("--model", default=str(Path(__file__).resolve().parent.parent / "models/hex5/anet_ep0250.keras"))
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    cases = [
        ("hex 5x5", mctsfw.make_game("hex", size=5), ("hex", {"board_size": 5})),
        ("hex 7x7", mctsfw.make_game("hex", size=7), ("hex", {"board_size": 7})),
        ("nim 3,4,5", mctsfw.make_game("nim", piles=[3, 4, 5]), ("nim", {"pile_sizes": "3;4;5", "is_misere": False})),
    ]
    print(f"{'case':<11} {'hexzero/s':>10} {'openspiel/s':>12} {'ratio':>7}   reference")
    for label, game, (spiel_name, spiel_params) in cases:
        rate = ours(game, args.games, args.repeats)
        theirs = openspiel(spiel_name, spiel_params, max(args.games // 10, 500), args.repeats)
        ref = REFERENCE.get(label)
        theirs_text = f"{theirs:12,.0f}" if theirs else f"{'-':>12}"
        ratio = f"{rate / theirs:6.1f}x" if theirs else f"{'-':>7}"
        ref_text = f"{ref:,} -> {rate / ref:.1f}x" if ref else ""
        print(f"{label:<11} {rate:10,.0f} {theirs_text} {ratio}   {ref_text}")

    from mctsfw.checkpoints import load_net
    from mctsfw.rollout import NetRolloutPolicy

    game = mctsfw.make_game("hex", size=5)
    net = load_net(args.model, game)
    policy = NetRolloutPolicy(game, net, epsilon=0.0, seed=0)
    random_rate = ours(game, args.games, args.repeats)
    batched = ours(game, args.games // 2, args.repeats, policy)
    single = ours(game, max(args.games // 20, 200), args.repeats, policy, batch_size=1)
    print(f"\n5x5 Hex rollouts with {Path(args.model).name} ({net.params()['hidden_layers']} hidden):")
    print(f"  random rollouts           {random_rate:10,.0f} search games/s")
    print(f"  ANET rollouts, batched    {batched:10,.0f} search games/s   {batched / random_rate:.2f} of random (target >= 0.33)")
    print(f"  ANET rollouts, one a time {single:10,.0f} search games/s   {single / random_rate:.2f} of random")


if __name__ == "__main__":
    main()
