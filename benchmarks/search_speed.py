"""Search games per second of hexzero's MCTS against OpenSpiel's, in one run.

    python benchmarks/search_speed.py [--games 20000] [--repeats 3] [--model models/hex5/anet_ep0250.keras]
    python benchmarks/search_speed.py --only go     # section 1's Go rows alone
    python benchmarks/search_speed.py --only hex --against 4fb5503   # beside an older revision, in turns

1. UCT with random rollouts from the empty board on 5x5, 7x7 and 11x11 Hex, Connect
   Four, NIM 3,4,5, Gomoku 9x9 and 15x15 and Go 9x9 (komi 7.5; a tenth of ``--games``
   for Gomoku and Go, whose playouts are long, a quarter for 11x11 Hex): hexzero's search
   on the compiled array tree (the default wherever a game has kernels) and on the
   object tree (``engine = "objects"``), OpenSpiel's Python ``MCTSBot`` and its C++
   ``MCTSBot`` (game logic in C++ for both, one random rollout per search game, c =
   1.4), and the ratios; with ``--against REV`` that revision's search too (the array
   tree where it has one). Targets: at least 3x the C++ bot, 4x on Go. Go's random
   playouts per second follow: hexzero's light playouts (never filling an own eye;
   compiled, ``games/go_playout.py``) against OpenSpiel's ``go`` played from Python
   (uniformly random legal moves, pass included; OpenSpiel exposes no C++ playout alone).
   Last the array tree's memory after 2,000 search games on 19x19 Go: bytes a tree node
   (every child an expansion makes, as mctx counts nodes; target at most 1 KB) and bytes
   a position reached.
2. 5x5 Hex with the ANET's greedy rollouts (epsilon 0, the shipped model by default),
   batched (32, 64 or 128 leaves judged by one lock-step playout, virtual loss; network
   rollouts run on the object tree) against random rollouts on the array tree and on the
   object tree (the ratio's peer: the same tree), after a warm-up; then as ``cli.py
   play`` searches: the actor made from the model (its default batch for the budget,
   ``NetRollouts.batch_for``) against the ``mcts`` actor (random rollouts, on the array
   tree), both with the game's UCT, ``--games`` / 2 search games from the empty board.
3. The same "as training runs it": TensorFlow and Keras imported and a model loaded in
   the process (section 2 loaded one), then section 1's hexzero and C++ figures again.

Each figure is the best of ``--repeats`` measurements; the cases are measured in turns,
so a busy machine slows all columns of a row alike. Without OpenSpiel (``pip install
-e .[differential]``) its columns show "-".
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw import make_tree_policy  # noqa: E402
from hexzero.mctsfw.evaluators import RandomRollouts  # noqa: E402
from hexzero.mctsfw.search.array_search import make_search  # noqa: E402
from revisions import run_in  # noqa: E402
from shipped import shipped_model  # noqa: E402
import revisions  # noqa: E402

C = 1.4
#: leaves judged together by one lock-step playout of ANET rollouts (a search picks its own: NetRollouts.batch_for)
BATCHES = (32, 64, 128)


def ours(game, games: int, seed: int, evaluator=None, batch_size=None, engine: str = "auto") -> float:
    """Search games per second of one search from the initial state: on the array tree
    where the game has kernels and ``engine`` allows (the default), else on objects."""
    evaluator = evaluator or RandomRollouts(game, seed=seed)
    mcts = make_search(game, make_tree_policy("uct", c=C), evaluator, seed=seed, batch_size=batch_size, engine=engine)
    start = time.perf_counter()
    mcts.search(game.initial_state(), search_games=games)
    return games / (time.perf_counter() - start)


def openspiel_python(name: str, params: dict, games: int, seed: int) -> float | None:
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None
    game = pyspiel.load_game(name, params)
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(game, C, games, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=False)
    start = time.perf_counter()
    bot.mcts_search(game.new_initial_state())
    return games / (time.perf_counter() - start)


def openspiel_cpp(name: str, params: dict, games: int, seed: int) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(name, params)
    # MCTSBot(game, evaluator, uct_c, max_simulations, max_memory_mb, solve, seed, verbose)
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, seed), C, games, 4000, False, seed, False)
    start = time.perf_counter()
    bot.step(game.new_initial_state())
    return games / (time.perf_counter() - start)


def best_of(repeats: int, *measures):
    """Each measure's best over ``repeats`` rounds, the measures taken in turns."""
    best = [None] * len(measures)
    for seed in range(repeats):
        for i, measure in enumerate(measures):
            rate = measure(seed)
            if rate is not None:
                best[i] = max(best[i] or 0.0, rate)
    return best


def text(rate: float | None) -> str:
    return f"{rate:10,.0f}" if rate else f"{'-':>10}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:6.2f}x" if a and b else f"{'-':>7}"


CASES = [
    ("hex 5x5", ("hex", {"size": 5}), ("hex", {"board_size": 5})),
    ("hex 7x7", ("hex", {"size": 7}), ("hex", {"board_size": 7})),
    ("hex 11x11", ("hex", {"size": 11}), ("hex", {"board_size": 11})),
    ("connect4", ("connect4", {}), ("connect_four", {})),
    ("nim 3,4,5", ("nim", {"piles": [3, 4, 5]}), ("nim", {"pile_sizes": "3;4;5", "is_misere": False})),
    ("gomoku 9x9", ("gomoku", {"size": 9}), ("gomoku", {"size": 9})),
    ("gomoku 15x15", ("gomoku", {"size": 15}), ("gomoku", {"size": 15})),
    ("go 9x9", ("go", {"size": 9}), ("go", {"board_size": 9, "komi": 7.5})),
]
#: games whose search games cost more (a random Gomoku game is some 40 to 100 moves):
#: their rows measure this share of --games
SLOW = {"gomoku": 0.1, "go": 0.1}
#: and 11x11 Hex this share (its playouts fill 121 cells)
SLOW_CASES = {"hex 11x11": 0.25}


def go_playouts(size: int, seconds: float, seed: int) -> tuple[float, float]:
    """(hexzero's light random playouts per second from the empty Go board, their mean moves)."""
    import random

    game = mctsfw.make_game("go", size=size)
    rng, start, count, moves = random.Random(seed), time.perf_counter(), 0, 0
    state = game.initial_state()
    while time.perf_counter() - start < seconds:
        moves += len(game.random_moves(state, rng)[0])
        count += 1
    return count / (time.perf_counter() - start), moves / count


def openspiel_go_playouts(size: int, seconds: float, seed: int) -> tuple[float, float] | None:
    """(OpenSpiel's ``go`` random playouts per second played from Python, their mean moves)."""
    try:
        import pyspiel
    except ImportError:
        return None
    import random

    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
    initial = game.new_initial_state()
    rng, start, count, moves = random.Random(seed), time.perf_counter(), 0, 0
    while time.perf_counter() - start < seconds:
        state = initial.clone()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            moves += 1
        count += 1
    return count / (time.perf_counter() - start), moves / count


def go_playout_table(repeats: int, seconds: float = 2.0) -> None:
    print(f"{'case':<12} {'hexzero/s':>10} {'os-py/s':>10} {'ratio':>7}   (mean moves a playout: hexzero, OpenSpiel)")
    ours_best, theirs_best = (0.0, 0.0), None
    for seed in range(repeats):
        ours_best = max(ours_best, go_playouts(9, seconds, seed))
        theirs = openspiel_go_playouts(9, seconds, seed)
        if theirs and (theirs_best is None or theirs > theirs_best):
            theirs_best = theirs
    theirs_rate = theirs_best[0] if theirs_best else None
    lengths = f"{ours_best[1]:.0f}, {theirs_best[1]:.0f}" if theirs_best else f"{ours_best[1]:.0f}, -"
    print(f"{'go 9x9':<12} {text(ours_best[0])} {text(theirs_rate)} {ratio(ours_best[0], theirs_rate)}   ({lengths})")


def memory_line(size: int = 19, games: int = 2000) -> None:
    """The bytes of the array tree of a UCT search of ``games`` search games from the
    empty ``size`` x ``size`` Go board (``ArrayTree.nbytes``): a tree node counted as mctx
    counts it (every child a move of an expanded node makes, tried or not: the edges, and
    the root), and a position the search reached (a node of the object tree)."""
    game = mctsfw.make_game("go", size=size)
    search = make_search(game, make_tree_policy("uct", c=C), RandomRollouts(game, seed=0), seed=0)
    search.search(game.initial_state(), search_games=games)
    used = search.tree.nbytes(0)
    print(f"go {size}x{size}    {used['bytes']:,} bytes for {games:,} search games: {used['edges'] + 1:,} tree nodes, "
          f"{used['bytes'] / (used['edges'] + 1):,.0f} bytes a node (target <= 1,024); {used['nodes']:,} positions, "
          f"{used['bytes'] / used['nodes']:,.0f} bytes a position")


#: section 1's hexzero measurement on a tree, in a fresh process (``--against``): a search
#: of a tenth of the games first (compiled kernels built), then the one timed
TREE_RUN = """
import json, sys, time
from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
try:  # the array tree where the revision has it, else its object search
    from hexzero.mctsfw.search.array_search import make_search
    from hexzero.mctsfw.evaluators import RandomRollouts
    def search(game, c, seed):
        return make_search(game, make_tree_policy("uct", c=c), RandomRollouts(game, seed=seed), seed=seed)
except ImportError:
    def search(game, c, seed):
        return MCTS(game, make_tree_policy("uct", c=c), seed=seed)
name, params, games, seed, c = json.loads(sys.argv[1])
game = mctsfw.make_game(name, **params)
search(game, c, seed).search(game.initial_state(), search_games=max(games // 10, 1))
mcts = search(game, c, seed)
start = time.perf_counter()
mcts.search(game.initial_state(), search_games=games)
print(json.dumps(games / (time.perf_counter() - start)))
"""


def uct_table(games: int, repeats: int, with_python: bool = True, only: str | None = None,
              against: str | None = None) -> None:
    """Section 1: this tree's search on the array tree (the default where a game has
    kernels) and on objects (``--engine objects``), OpenSpiel's Python and C++ bots, and
    with ``against`` (a git revision) that revision's search, each of its measurements
    in a fresh process; all in turns."""
    with revisions.trees(against) as found:
        old = f"{against[:9]}/s" if against else ""
        print(f"{'case':<12} {'arrays/s':>10} {'objects/s':>10} {old:>10} {'os-py/s':>10} {'os-c++/s':>10} "
              f"{'vs c++':>7} {'vs obj':>7}" + (f" {'vs old':>7}" if against else "") + "   (targets: >= 3x c++; "
              "Go >= 4x)")
        for label, (name, params), (spiel_name, spiel_params) in CASES:
            if only and name != only:
                continue
            game = mctsfw.make_game(name, **params)
            count = int(games * SLOW_CASES.get(label, SLOW.get(name, 1.0)))
            ours(game, max(count // 10, 1), 0)  # compiled kernels loaded, caches warm

            def tree(path):
                return lambda seed: run_in(path, TREE_RUN, [name, params, count, seed, C])

            rate, objects, before, py, cpp = best_of(
                repeats,
                lambda seed: ours(game, count, seed),
                lambda seed: ours(game, count, seed, engine="objects"),
                tree(found[against]) if against else lambda seed: None,
                lambda seed: openspiel_python(spiel_name, spiel_params, max(count // 10, 200), seed) if with_python else None,
                lambda seed: openspiel_cpp(spiel_name, spiel_params, count, seed),
            )
            print(f"{label:<12} {text(rate)} {text(objects)} {text(before) if against else '':>10} {text(py)} "
                  f"{text(cpp)} {ratio(rate, cpp)} {ratio(rate, objects)}"
                  + (f" {ratio(rate, before)}" if against else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20000, help="search games per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is shown")
    parser.add_argument("--model", default=str(shipped_model("hex5")))
    parser.add_argument("--only", metavar="GAME", help="section 1 alone, the rows of this game (hex, nim, gomoku, go)")
    parser.add_argument("--against", metavar="REV", help="section 1 also on this git revision, in turns (each "
                        "tree in fresh processes): what the code changed, apart from the machine")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    print("\n1. UCT, random rollouts, from the empty board")
    uct_table(args.games, args.repeats, only=args.only, against=args.against)
    if args.only in (None, "go"):
        print("\n   Go random playouts from the empty board, per second")
        go_playout_table(args.repeats)
        print("\n   The array tree's memory")
        memory_line()
    if args.only:
        return

    from hexzero.mctsfw.checkpoints import load_net  # imports TensorFlow and Keras
    from hexzero.mctsfw.evaluators import NetRollouts, RandomRollouts

    game = mctsfw.make_game("hex", size=5)
    net = load_net(args.model, game)
    for batch in BATCHES:  # warm-up: first calls, buffers of each size
        ours(game, 500, 0, NetRollouts(game, net, seed=0), batch_size=batch)

    def anet(batch):
        return lambda seed: ours(game, args.games // 2, seed, NetRollouts(game, net, seed=seed), batch_size=batch)

    random_rate, objects_rate, *net_rates = best_of(
        args.repeats, lambda seed: ours(game, args.games, seed, RandomRollouts(game, seed)),
        lambda seed: ours(game, args.games, seed, RandomRollouts(game, seed), engine="objects"), *map(anet, BATCHES)
    )
    print(f"\n2. 5x5 Hex, UCT with {Path(args.model).name} ({net.params()['hidden_layers']} hidden) greedy rollouts")
    print(f"  random rollouts, array tree    {random_rate:10,.0f} search games/s")
    print(f"  random rollouts, object tree   {objects_rate:10,.0f} search games/s   1.00")
    for batch, rate in zip(BATCHES, net_rates):
        print(f"  ANET rollouts, batches of {batch:<4} {rate:10,.0f} search games/s   {rate / objects_rate:.2f} of random "
              "on the object tree")

    def actor(spec):
        def measure(seed):
            agent = mctsfw.make_actor(spec, game, search_games=args.games // 2, seed=seed)
            start = time.perf_counter()
            agent.select_action(game.initial_state(1))
            return args.games // 2 / (time.perf_counter() - start)
        return measure

    random_actor, model_actor = best_of(args.repeats, actor("mcts"), actor(args.model))
    batch = NetRollouts(game, net).batch_for(args.games // 2)
    print(f"  as `play` searches, {args.games // 2:,} search games: the mcts actor {random_actor:,.0f}, "
          f"the model's (batches of {batch}) {model_actor:,.0f} search games/s: "
          f"{model_actor / random_actor:.2f} of the mcts actor's")

    print("\n3. As training runs it: TensorFlow/Keras imported and a model loaded in this process")
    uct_table(args.games, args.repeats, with_python=False)


if __name__ == "__main__":
    main()
