"""How long Hex's H-search takes (``games/hex_vc.py``: ``games.hex.vc`` and ``prune``), and
a move of ``models/hex11`` with it, beside another revision of this code in the same run.

    python benchmarks/hex_vc_speed.py [--against REV] [--repeats 3] [--positions 40]

On random boards (each size with a middle-game number of stones, the players' stones
alternating, the same boards for every tree) it times, in milliseconds a call: one
H-search (``search``, fill-in included), what the search does at a new node with ``vc``
and ``prune`` on (``won_line`` for the player to move, ``must_play`` for the other,
``prune``) and ``fill_in`` alone. Then one move of ``models/hex11`` with PUCT(800) and
both settings on (its file's), in seconds, from a board of 20 random stones. Each tree is
measured in a fresh process, the trees in turns (``benchmarks/revisions.py``), the best
of ``--repeats``. Every tree checks that it finds the same connections (the number of
carriers found over all the boards is printed: a difference is a change of result, not
only of speed).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from revisions import run_in, trees  # noqa: E402

#: the boards timed: (size, stones)
BOARDS = [(9, 20), (11, 20), (11, 40), (13, 30)]

#: run in a fresh process with the tree first on sys.path: what every revision since
#: H-search has (hex_vc.search, won_line, must_play, fill_in; prune where it has it)
KERNELS_RUN = """
import json, random, sys, time
import numpy as np
from hexzero.games import hex_vc
from hexzero.games.hex_kernels import neighbour_table

boards, count = json.loads(sys.argv[1])
out = {}
for size, stones in boards:
    n, nbr, rng = size, neighbour_table(size), random.Random(size * 1000 + stones)
    rows = []
    for _ in range(count):
        row = np.zeros(n * n, np.int8)
        for i, cell in enumerate(rng.sample(range(n * n), stones)):
            row[cell] = 1 + i % 2
        rows.append(row)
    line, mask = np.empty(n * n, np.int64), np.ones(n * n, np.bool_)
    prune = getattr(hex_vc, "prune", None)

    def node(row):
        mask[:] = row == 0
        if not hex_vc.won_line(row, n, 1, nbr, line):
            hex_vc.must_play(row, n, 2, nbr, mask)
        if prune is not None:
            prune(row, n, 1, nbr, mask)

    found = 0
    for row in rows:  # (compiled, and the connections counted)
        fn, fc, sn, sc, *_ = hex_vc.search(row, n, 1, nbr)
        found += int(fn.sum() + sn.sum())
        node(row)
        hex_vc.fill_in(row, n, nbr, 1)
    times = []
    for call in (lambda row: hex_vc.search(row, n, 1, nbr), node, lambda row: hex_vc.fill_in(row, n, nbr, 1)):
        start = time.perf_counter()
        for row in rows:
            call(row)
        times.append((time.perf_counter() - start) / count * 1e3)
    out[f"{size}x{size}, {stones} stones"] = [*times, found]
print(json.dumps(out))
"""

#: one move of models/hex11 (PUCT(800), vc and prune from its file) from 20 random stones
MOVE_RUN = """
import json, random, sys, time
from hexzero import mctsfw

model = "models/hex11/pv_resnet_gen0027.keras"
game = mctsfw.make_model_game(model)
actor = mctsfw.make_actor(model, game, search_games=800, seed=0)
rng, state = random.Random(1), game.initial_state()
for _ in range(20):
    state = game.next_state(state, rng.choice(list(game.legal_actions(state))))
actor.select_action(state)  # (compiled, the network built)
start = time.perf_counter()
actor.select_action(state)
print(json.dumps(time.perf_counter() - start))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also measure this git revision, in turns with this tree")
    parser.add_argument("--repeats", type=int, default=3, help="measurements of each tree; the best is shown")
    parser.add_argument("--positions", type=int, default=40, help="random boards a size")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; milliseconds a call, best of {args.repeats}, {args.positions} random boards")
    with trees(args.against) as found:
        kernels = {name: None for name in found}
        move = {name: float("inf") for name in found}
        for _ in range(args.repeats):
            for name, tree in found.items():  # in turns: a busy machine slows both alike
                got = run_in(tree, KERNELS_RUN, [BOARDS, args.positions])
                kernels[name] = got if kernels[name] is None else {
                    board: [min(a, b) for a, b in zip(kernels[name][board][:3], got[board][:3])] + [got[board][3]]
                    for board in got}
                move[name] = min(move[name], run_in(tree, MOVE_RUN, environ={"TF_CPP_MIN_LOG_LEVEL": "2"}))
        names = list(found)
        print(f"{'board':<22}{'tree':<12}{'H-search':>10}{'a node':>10}{'fill-in':>10}{'carriers':>10}")
        for board in kernels[names[0]]:
            for name in names:
                search, node, fill, carriers = kernels[name][board]
                print(f"{board:<22}{name:<12}{search:>10.2f}{node:>10.2f}{fill:>10.3f}{carriers:>10}")
            if args.against:
                a, b = kernels[names[0]][board], kernels[names[1]][board]
                print(f"{'':<22}{'x faster':<12}{b[0] / a[0]:>9.2f}x{b[1] / a[1]:>9.2f}x{b[2] / a[2]:>9.2f}x")
        print("models/hex11, PUCT(800) with vc and prune, one move from 20 random stones: "
              + ", ".join(f"{name} {move[name]:.2f} s" for name in names)
              + (f" ({move[names[1]] / move[names[0]]:.2f}x)" if args.against else ""))


if __name__ == "__main__":
    main()
