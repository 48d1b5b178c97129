"""Training cases a second of a policy-and-value ResNet: what one training step costs.

    python benchmarks/train_speed.py [--cases 16384] [--batch-size 1024] [--blocks 6] [--filters 64]

``PolicyValueResNet.fit`` (the trainer's call: Keras's ``fit``, the policy and value
losses) on random 9x9 Go positions with random targets (the time does not depend on the
values), one epoch of ``--cases`` cases in minibatches of ``--batch-size``, after one
warm-up epoch (graph tracing); the best of ``--repeats``. The Keras backend is the
installed one, on its device (a GPU where it has one: the line above the figures names
it). On a GPU machine this is the "training step" figure of docs/speed.md, beside the
2-core machine's.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hexzero import mctsfw  # noqa: E402
from hexzero.nets.anet import _keras, keras_device  # noqa: E402
from hexzero.nets.twohead import PolicyValueResNet  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=16384)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--filters", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    keras = _keras()
    game = mctsfw.make_game("go", size=9)
    net = PolicyValueResNet(game, blocks=args.blocks, filters=args.filters, seed=0)
    rng = np.random.default_rng(0)
    x = (rng.random((args.cases, *net.input_shape)) < 0.3).astype(np.float32)
    pi = rng.random((args.cases, game.num_actions)).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.integers(0, 2, args.cases).astype(np.float32)
    net.fit(x, pi, z, batch_size=args.batch_size, epochs=1)  # warm-up: the training graph traced
    best = 0.0
    for _ in range(args.repeats):
        start = time.perf_counter()
        net.fit(x, pi, z, batch_size=args.batch_size, epochs=1)
        best = max(best, args.cases / (time.perf_counter() - start))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, Keras {keras.__version__} on {keras.backend.backend()} ({keras_device()}); "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    print(f"9x9 Go pv_resnet {args.blocks}x{args.filters}: {best:,.0f} training cases/s "
          f"({args.cases:,} cases in minibatches of {args.batch_size}, best of {args.repeats})")


if __name__ == "__main__":
    main()
