"""Self-play positions (moves) per second: one game at a time against B games in lock-step.

    python benchmarks/selfplay_speed.py [--games 8] [--search 16] [--lockstep 1,8,32,128]
                                        [--batch-sizes 1,16] [--max-moves 0]
    python benchmarks/selfplay_speed.py --ceiling [--against REV] [--repeats 3]
    python benchmarks/selfplay_speed.py --shipped [--against REV] [--repeats 3]
    python benchmarks/selfplay_speed.py --workers 1,4,16 [--server off,on] [--groups 2] [--set KEY=VALUE]

``--workers``: self-play as the trainer plays it (the processes backend and the trainer's
worker function), each worker ``--groups`` lock-step groups of ``--lockstep``'s last value
of games, with ``selfplay.net_server`` off (a network in every worker) and on (one network
server judges every worker's positions, ``mctsfw/netserver.py``), after a warm-up group a
worker; positions a second, the server's mean batch and busy share, and the GPU's
utilisation (``nvidia-smi``, every 100 ms) where there is a GPU.

``--ceiling``: the search's own ceiling, what self-play could reach on any accelerator:
an evaluator that costs nothing (a stand-in network: uniform priors, value 0) on 9x9 Go,
11x11 Hex and 15x15 Gomoku, 32 simulations a move, 8 games in lock-step, one process
(PUCT, and Gumbel's root search on Go and Hex: "go9 gumbel", "hex11 gumbel");
with ``--against REV`` the same measured on that git revision (extracted to a temporary
folder) in the same run, the two taken in turns, and the ratio.

``--shipped``: the same self-play with the shipped ResNets of 9x9 Go, 11x11 Hex and 15x15
Gomoku (``SHIPPED``; the network on every core, as TensorFlow runs it), the network's
batches judged in float32 and in bfloat16 (``HEXZERO_PRECISION``), and the states the
network judged a second as a share of the machine's matrix-multiply peak in that precision
(TensorFlow's matmul, measured first in the same run; the FLOPs of a state counted from the
model's dense and convolution layers): what is left to gain on this machine.

Each row plays real self-play games (``mctsfw.selfplay.self_play_games``, the code the
trainer runs: PUCT with root noise, temperature, tree reuse) with an untrained network of
the default size of hexzero.toml (speed does not depend on the weights): pv_mlp (2x128)
and pv_resnet (4 blocks of 64 filters), on Connect Four and 9x9 Go. B = 1 plays
``--games`` games one after another; B > 1 plays one group of B games in lock-step, the
leaves of all of them judged by one network call per round. ``batch`` is each game's own
batch of leaves under virtual loss (``selfplay.batch_size``): 1 is pure lock-step (every
leaf selected from a tree that knows all earlier results); with 16 a single game already
feeds the network batches of 16. ``--max-moves`` cuts Go games off (scored as they
stand) to keep a run short; 0 keeps the game's own cut-off (2*81 moves).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.config import load_config, plugin_params  # noqa: E402
from hexzero.mctsfw.selfplay import self_play_games, self_play_pieces  # noqa: E402
from hexzero.nets.anet import _keras, keras_device  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import revisions  # noqa: E402
from revisions import run_in  # noqa: E402

GAMES = {"connect4": ('game="connect4"',), "go9": ('game="go"', "games.go.size=9")}
NETS = ("pv_mlp", "pv_resnet")


def measure(config: dict, lockstep: int, games: int) -> tuple[int, int, float]:
    """(games played, positions played, seconds) of self-play with groups of ``lockstep``."""
    s, game, net_class, policy = self_play_pieces(config, mctsfw.default_registries())
    net = net_class(game, **plugin_params(config, "nets", s.net), seed=0)
    net.evaluate(net.encode_batch([game.initial_state()] * 2))  # warm up: TensorFlow traces its graph once
    count = games if lockstep == 1 else lockstep
    numbers = list(range(1, count + 1))
    groups = [numbers[i:i + lockstep] for i in range(0, count, lockstep)]
    start = time.perf_counter()
    positions = sum(len(record["moves"]) for group in groups
                    for record, _ in self_play_games(game, net, policy, s, group, seed=0))
    return count, positions, time.perf_counter() - start


#: the --ceiling games: config overrides
CEILING_GAMES = {"go9": ['game="go"', "games.go.size=9"], "hex11": ['game="hex"', "games.hex.size=11"],
                 "gomoku15": ['game="gomoku"', "games.gomoku.size=15"]}
#: the same with Gumbel's root search (``selfplay.tree_policy = "gumbel"``), where it differs most
GUMBEL = 'selfplay.tree_policy="gumbel"'
CEILING_GAMES.update({"go9 gumbel": [*CEILING_GAMES["go9"], GUMBEL], "hex11 gumbel": [*CEILING_GAMES["hex11"], GUMBEL]})

#: run in a fresh process with the tree to measure first on sys.path: only what every
#: revision has (load_config, self_play_pieces, self_play_games), one JSON line out
CEILING_RUN = """
import json, sys, time
import numpy as np
from hexzero import mctsfw
from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.selfplay import self_play_games, self_play_pieces

class UniformNet:
    name, roles, input_kind = "uniform", ("policy", "policy_value"), "flat"
    def __init__(self, game): self.n = game.num_actions
    def encode_batch(self, states): return np.zeros((len(states), 1), np.float32)
    def forward(self, x): return np.full((len(x), self.n), 1.0 / self.n, np.float32)
    def evaluate(self, x): return self.forward(x), np.zeros(len(x), np.float32)
    def for_game(self, game): return self

overrides, search, lockstep = json.loads(sys.argv[1])
config = load_config(None, None, overrides + [f"selfplay.search_games={search}", "selfplay.games_per_generation=1000"])
s, game, _, policy = self_play_pieces(config, mctsfw.default_registries())
net = UniformNet(game)
list(self_play_games(game, net, policy, s, [1], seed=0))  # compiled kernels built, caches warm
start = time.perf_counter()
positions = sum(len(record["moves"]) for record, _ in self_play_games(game, net, policy, s,
                                                                    list(range(1, lockstep + 1)), seed=0))
print(json.dumps([positions, time.perf_counter() - start]))
"""


def ceiling_rate(tree: Path, overrides: list[str], search: int, lockstep: int) -> float:
    """Positions per second of the stand-in self-play, measured in a fresh process on ``tree``."""
    positions, seconds = run_in(tree, CEILING_RUN, [overrides, search, lockstep])
    return positions / seconds


def ceiling_table(against: str | None, repeats: int, search: int = 32, lockstep: int = 8) -> None:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; the search's ceiling: uniform priors, value 0, {search} simulations a "
          f"move, {lockstep} games in lock-step, one process; best of {repeats}")
    with revisions.trees(against) as found:
        print(f"{'game':<14}" + "".join(f"{name + ' pos/s':>22}" for name in found) + ("   ratio" if against else ""))
        for key, overrides in CEILING_GAMES.items():
            best = {name: 0.0 for name in found}
            for _ in range(repeats):
                for name, tree in found.items():  # in turns: a busy machine slows both alike
                    best[name] = max(best[name], ceiling_rate(tree, overrides, search, lockstep))
            rates = list(best.values())
            print(f"{key:<14}" + "".join(f"{rate:>22,.0f}" for rate in rates)
                  + (f"   {rates[0] / rates[1]:.2f}x" if against else ""), flush=True)


#: the --shipped networks: (the folder of models/ holding it, its file, config overrides of its game)
SHIPPED = {"go9": ("models/go9/pv_resnet_gen0010.keras", ['game="go"', "games.go.size=9"]),
           "hex11": ("models/hex11/pv_resnet_gen0027.keras", ['game="hex"', "games.hex.size=11"]),
           "gomoku15": ("models/gomoku15/pv_resnet_rapfi_ep0002.keras",
                        ['game="gomoku"', "games.gomoku.size=15", "games.gomoku.history=2"])}

#: self-play with a shipped network, in a fresh process: the positions, the seconds and the
#: states the network judged (what every revision has: load_net, self_play_pieces, self_play_games)
SHIPPED_RUN = """
import json, sys, time
from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import load_net
from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.selfplay import self_play_games, self_play_pieces

model, overrides, search, lockstep = json.loads(sys.argv[1])
config = load_config(None, None, overrides + [f"selfplay.search_games={search}", "selfplay.games_per_generation=1000"])
s, game, _, policy = self_play_pieces(config, mctsfw.default_registries())
net = load_net(model, game)
judged = [0]
evaluate = net.evaluate
def counted(x):
    judged[0] += len(x)
    return evaluate(x)
net.evaluate = counted
list(self_play_games(game, net, policy, s, [1], seed=0))  # compiled kernels built, the network's calls traced
judged[0] = 0
start = time.perf_counter()
positions = sum(len(record["moves"]) for record, _ in self_play_games(game, net, policy, s,
                                                                    list(range(1, lockstep + 1)), seed=0))
print(json.dumps([positions, time.perf_counter() - start, judged[0]]))
"""


def matmul_peak(size: int = 2048, seconds: float = 3.0, dtype: str = "float32") -> float:
    """The machine's matrix-multiply rate (FLOP/s) in ``dtype`` as the network's own library
    gets it: TensorFlow's compiled matmul (oneDNN on a CPU, every core), the best of the
    products of two ``size`` x ``size`` matrices made in ``seconds``."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    a, b = (tf.cast(tf.constant(rng.random((size, size), np.float32)), dtype) for _ in range(2))
    product = tf.function(tf.linalg.matmul)
    product(a, b).numpy()
    best, until = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < until:
        start = time.perf_counter()
        product(a, b).numpy()
        best = max(best, 2.0 * size ** 3 / (time.perf_counter() - start))
    return best


def flops_per_state(model, side: int) -> float:
    """The multiply-adds of one state through a Keras model's dense and convolution
    layers, counted twice (a multiply and an add: FLOPs); a convolution of a network for
    any board size (no height or width of its own) runs over ``side`` x ``side`` points."""
    flops = 0.0
    for layer in model.layers:
        kind = type(layer).__name__
        if kind == "Dense":
            flops += 2.0 * layer.kernel.shape[0] * layer.kernel.shape[1]
        elif kind == "Conv2D":
            height, width = (d or side for d in layer.output.shape[1:3])
            kh, kw, cin, cout = layer.kernel.shape
            flops += 2.0 * height * width * kh * kw * cin * cout
    return flops


#: the --shipped precisions of this tree (``HEXZERO_PRECISION``, ``nets/twohead.py``)
PRECISIONS = ("float32", "bfloat16")


def shipped_table(against: str | None, repeats: int, search: int = 32, lockstep: int = 8) -> None:
    """``--shipped``: self-play with the shipped ResNets (this tree in float32 and in
    bfloat16, and ``against``, in turns, fresh processes), and the network's states a second
    as a share of the machine's matrix-multiply peak in each precision, measured in the same run."""
    from hexzero.mctsfw.checkpoints import load_net
    from hexzero.nets.twohead import PRECISION_VARIABLE, cpu_multiplies_bfloat16

    peaks = {precision: matmul_peak(dtype=precision) for precision in PRECISIONS}
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, matmul peak {peaks['float32'] / 1e9:,.1f} GFLOP/s in float32, "
          f"{peaks['bfloat16'] / 1e9:,.1f} in bfloat16 (TensorFlow, every core; bfloat16 in hardware: "
          f"{'yes' if cpu_multiplies_bfloat16() else 'no'}); self-play with the shipped ResNets, {search} "
          f"simulations a move, {lockstep} games in lock-step, one process; best of {repeats}")
    with revisions.trees(against) as found:
        # (name, tree, precision): this tree in each precision, the revision as it ran
        runs = [(f"this tree {p}", found["this tree"], p) for p in PRECISIONS]
        runs += [(name, tree, "float32") for name, tree in found.items() if name != "this tree"]
        print(f"{'game':<10}" + "".join(f"{name + ' pos/s':>26}" for name, _, _ in runs)
              + ("".join(f"{p + ' ratio':>15}" for p in PRECISIONS) if against else "")
              + "".join(f"  {p + ' states/s':>17} {'GFLOP/s':>8} {'of peak':>7}" for p in PRECISIONS))
        for key, (model, overrides) in SHIPPED.items():
            game = _game_of(overrides)
            flops = flops_per_state(load_net(ROOT / model, game).model, game.size)
            best = {name: (0.0, 0.0) for name, _, _ in runs}
            for _ in range(repeats):
                for name, tree, precision in runs:
                    positions, seconds, judged = run_in(tree, SHIPPED_RUN, [str(ROOT / model), overrides, search,
                                                                            lockstep],
                                                        environ={PRECISION_VARIABLE: precision})
                    if positions / seconds > best[name][0]:
                        best[name] = (positions / seconds, judged / seconds)
            rates = [rate for rate, _ in best.values()]
            line = f"{key:<10}" + "".join(f"{rate:>26,.1f}" for rate in rates)
            if against:
                line += "".join(f"{rate / rates[-1]:>14.2f}x" for rate in rates[:len(PRECISIONS)])
            for precision in PRECISIONS:
                states = best[f"this tree {precision}"][1]
                line += f"  {states:>17,.0f} {states * flops / 1e9:>8.1f} {states * flops / peaks[precision]:>6.1%}"
            print(line, flush=True)


def _game_of(overrides: list[str]):
    """The game of ``SHIPPED``'s config overrides (``game="go"``, ``games.go.size=9``, ...)."""
    name = overrides[0].split("=")[1].strip('"')
    params = {o.split("=")[0].split(".")[-1]: int(o.split("=")[1]) for o in overrides[1:]}
    return mctsfw.make_game(name, **params)


def gpu_utilisation() -> subprocess.Popen | None:
    """``nvidia-smi`` printing the GPU's utilisation (%) every 100 ms, where there is one."""
    if not shutil.which("nvidia-smi"):
        return None
    return subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                             "-lms", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def served_rate(config: dict, workers: int, server: bool, groups: int, lockstep: int) -> dict:
    """Self-play as the trainer plays it with ``workers`` processes, each playing ``groups``
    lock-step groups of ``lockstep`` games, with the network server or a network in each
    worker: positions a second (after a warm-up group per worker), the server's mean batch
    and the GPU's mean utilisation over the timed part."""
    import tempfile
    from functools import partial

    from hexzero.mctsfw.backends import make_backend
    from hexzero.mctsfw.netserver import NetServer, ServedNet
    from hexzero.mctsfw.selfplay import _server_pieces, _worker_games, _worker_start

    s, game, net_class, _ = self_play_pieces(config, mctsfw.default_registries())
    net = net_class(game, **plugin_params(config, "nets", s.net), seed=0)
    start = partial(NetServer, _server_pieces, (config,), s.server_batch, s.server_wait_ms) if server else None
    backend = make_backend("processes", workers, "", _worker_start, (config,), start)
    try:
        with tempfile.TemporaryDirectory() as folder, backend.shared_net(net, Path(folder)) as handle:
            if server:  # the compiled call built for every batch size it will meet (powers of two)
                served = ServedNet(net_class, game, handle.address)
                x = net.encode_batch([game.initial_state()])
                for size in (1 << k for k in range(s.server_batch.bit_length())):
                    served.evaluate(np.repeat(x, size, axis=0))
                served.idle()
            # a group per worker: its imports, its compiled kernels, the network's calls of every batch size
            warm = [list(range(100_000 + w * lockstep, 100_000 + (w + 1) * lockstep)) for w in range(workers)]
            list(backend.play(_worker_games, warm, lambda numbers: (config, handle, numbers, 0)))
            before = backend.server.stats() if server else None
            numbers = list(range(1, workers * groups * lockstep + 1))
            batches = [numbers[i:i + lockstep] for i in range(0, len(numbers), lockstep)]
            sampler = gpu_utilisation()
            began = time.perf_counter()
            positions = sum(len(record["moves"]) for results, _ in backend.play(
                _worker_games, batches, lambda numbers: (config, handle, numbers, 0)) for record, _ in results)
            seconds = time.perf_counter() - began
            after = backend.server.stats() if server else None
    finally:
        backend.close()
    figures = {"positions": positions, "seconds": seconds, "rate": positions / seconds}
    if server:
        calls = after["calls"] - before["calls"]
        figures["batch"] = (after["positions"] - before["positions"]) / max(calls, 1)
        figures["busy"] = (after["seconds"] - before["seconds"]) / seconds
    if sampler is not None:
        sampler.terminate()
        samples = [float(line) for line in sampler.communicate()[0].split() if line.strip().isdigit()]
        figures["gpu"] = sum(samples) / len(samples) if samples else float("nan")
    return figures


def server_table(args) -> None:
    """``--workers``: the network server against a network in every worker, in one run."""
    keras = _keras()  # on the GPU backend where nets.anet.gpu_backend finds one

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, Keras {keras.__version__} on {keras.backend.backend()} "
          f"({keras_device()}); {args.search} simulations a move, {args.batch_sizes.split(',')[0]} leaves a game a "
          f"round, {args.lockstep.split(',')[-1]} games in lock-step a worker, {args.groups} groups a worker; "
          f"Go cut-off {args.max_moves or 'the game own (162)'}")
    print(f"{'game':<9} {'net':<10} {'workers':>7} {'server':>6} {'positions':>9} {'seconds':>8} {'positions/s':>11} "
          f"{'batch':>6} {'server busy':>11} {'GPU %':>6}", flush=True)
    lockstep = int(args.lockstep.split(",")[-1])
    for game_name, net in zip(args.games_list.split(","), args.nets.split(",")):
        overrides = [*GAMES[game_name], f'selfplay.net="{net}"', f"selfplay.search_games={args.search}",
                     f"selfplay.batch_size={args.batch_sizes.split(',')[0]}", "selfplay.games_per_generation=100000",
                     *args.set]
        if game_name == "go9" and args.max_moves:
            overrides.append(f"games.go.max_moves={args.max_moves}")
        config = load_config(ROOT / "hexzero.toml", None, overrides)
        for workers in (int(w) for w in args.workers.split(",")):
            for server in (mode == "on" for mode in args.server.split(",")):
                f = served_rate(config, workers, server, args.groups, lockstep)
                print(f"{game_name:<9} {net:<10} {workers:>7} {'on' if server else 'off':>6} {f['positions']:>9} "
                      f"{f['seconds']:>8.1f} {f['rate']:>11.1f} {f.get('batch', float('nan')):>6.0f} "
                      f"{f.get('busy', float('nan')):>10.0%} {f.get('gpu', float('nan')):>6.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=8, help="games played one at a time for B = 1")
    parser.add_argument("--search", type=int, default=16, help="PUCT simulations per move")
    parser.add_argument("--lockstep", default="1,8,32,128", help="the B to compare (1 first: the baseline)")
    parser.add_argument("--batch-sizes", default="1,16", help="each game's leaves per round under virtual loss")
    parser.add_argument("--max-moves", type=int, default=0, help="Go's cut-off (0: the game's own)")
    parser.add_argument("--games-list", default="connect4,go9", help="of: connect4, go9")
    parser.add_argument("--nets", default="pv_mlp,pv_resnet")
    parser.add_argument("--ceiling", action="store_true", help="the search's ceiling (a network that costs nothing)")
    parser.add_argument("--shipped", action="store_true", help="self-play with the shipped ResNets, and the "
                        "network's share of the machine's matrix-multiply peak")
    parser.add_argument("--against", metavar="REV", help="--ceiling, --shipped: also measure this git revision, "
                        "in turns")
    parser.add_argument("--repeats", type=int, default=3, help="--ceiling, --shipped: measurements; the best is shown")
    parser.add_argument("--workers", help="worker processes to compare with and without the network server "
                        "(e.g. 1,2): self-play as the trainer plays it; --lockstep's last value, --batch-sizes' first")
    parser.add_argument("--server", default="off,on", help="--workers: the modes to measure (off, on)")
    parser.add_argument("--groups", type=int, default=2, help="--workers: lock-step groups each worker plays")
    parser.add_argument("--set", action="append", default=[], help="--workers: a config override (KEY=VALUE)")
    args = parser.parse_args()
    if args.workers:
        server_table(args)
        return
    if args.ceiling:
        ceiling_table(args.against, args.repeats)
        return
    if args.shipped:
        shipped_table(args.against, args.repeats)
        return
    lockstep = [int(b) for b in args.lockstep.split(",")]
    keras = _keras()  # on the GPU backend where nets.anet.gpu_backend finds one

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, Keras {keras.__version__} on {keras.backend.backend()} "
          f"({keras_device()}); search {args.search} simulations a move; "
          f"Go cut-off {args.max_moves or 'the game own (162)'}")
    print(f"{'game':<9} {'net':<10} {'batch':>5} {'B':>4} {'games':>5} {'positions':>9} {'seconds':>8} "
          f"{'positions/s':>11} {'vs B=1':>7}", flush=True)
    for game_name in args.games_list.split(","):
        for net in args.nets.split(","):
            for batch in (int(b) for b in args.batch_sizes.split(",")):
                overrides = [*GAMES[game_name], f'selfplay.net="{net}"', f"selfplay.search_games={args.search}",
                             f"selfplay.batch_size={batch}", "selfplay.games_per_generation=1000"]
                if game_name == "go9" and args.max_moves:
                    overrides.append(f"games.go.max_moves={args.max_moves}")
                config = load_config(ROOT / "hexzero.toml", None, overrides)
                single = None
                for b in lockstep:
                    games, positions, seconds = measure(config, b, args.games)
                    speed = positions / seconds
                    single = single or speed
                    print(f"{game_name:<9} {net:<10} {batch:>5} {b:>4} {games:>5} {positions:>9} {seconds:>8.1f} "
                          f"{speed:>11.1f} {speed / single:>6.1f}x", flush=True)


if __name__ == "__main__":
    main()
