"""Leaf evaluations per second of PUCT search with a policy-and-value network, batched
(leaves gathered under virtual loss, one network call per batch) against one at a time.

    python benchmarks/leaf_eval_speed.py [--simulations 800] [--repeats 3]

Untrained networks of the default sizes of hexzero.toml (speed does not depend on the
weights), from the empty board, on 5x5 Hex and Connect Four.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw import MCTS, make_tree_policy  # noqa: E402
from hexzero.mctsfw.evaluators import NetValue  # noqa: E402


def measure(game, net, batch_size: int, simulations: int, repeats: int) -> tuple[float, float]:
    """(leaf evaluations per second, network calls per second), best of ``repeats``."""
    best = (0.0, 0.0)
    for seed in range(repeats):
        evaluator = NetValue(game, net)
        mcts = MCTS(game, make_tree_policy("puct"), evaluator, seed=seed,
                    batch_size=batch_size)
        start = time.perf_counter()
        mcts.search(game.initial_state(), search_games=simulations)
        seconds = time.perf_counter() - start
        best = max(best, (evaluator.states_evaluated / seconds, evaluator.calls / seconds))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=800)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", default="1,8,16,32,64")
    args = parser.parse_args()
    registries = mctsfw.default_registries()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"{'game':<10} {'net':<24} {'batch':>5} {'leaves/s':>10} {'calls/s':>9} {'vs batch 1':>10}")
    for game in (mctsfw.make_game("hex", size=5), mctsfw.make_game("connect4")):
        for name, params in (("pv_mlp", {}), ("pv_resnet", {"blocks": 4, "filters": 64})):
            net = registries.nets.get(name)(game, **params, seed=0)
            single = None
            for batch in map(int, args.batches.split(",")):
                leaves, calls = measure(game, net, batch, args.simulations if batch > 1 else args.simulations // 4,
                                        args.repeats)
                single = single or leaves
                label = f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})" if params else name
                print(f"{game.name:<10} {label:<24} {batch:>5} {leaves:>10,.0f} {calls:>9,.0f} {leaves / single:>9.1f}x")


if __name__ == "__main__":
    main()
