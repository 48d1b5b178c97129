"""One evaluation of each shipped network, by way of computing it, at batch 1, 8 and 64.

    python benchmarks/net_speed.py [--batches 1,8,64] [--seconds 1.0]

For every network under ``models/`` (the last of each folder), microseconds per call of:

- ``hexzero``: what the search calls (``net.evaluate``; the ANET's ``forward``): a numpy
  pass built from the Keras weights for the MLPs and for one state of the ResNet, a
  compiled call for the ResNet's batches;
- ``bfloat16``: the same with ``HEXZERO_PRECISION=bfloat16`` (ResNets: a batch's trunk
  in bfloat16, ``nets.twohead.tensorflow_trunk``; one state stays numpy float32);
- ``eager``: ``model(x, training=False)``, Keras called directly;
- ``compiled``: that call compiled once: into a TensorFlow graph (``tf.function``) on
  TensorFlow, by ``jax.jit`` (``nets.twohead.jax_call``) on JAX;
- ``predict``: ``model.predict_on_batch(x)``.

Each figure is the median call over about ``--seconds`` of calls, after a warm-up, on
random inputs of the network's shape (the time does not depend on the values); the last
column is the fastest way's name. The Keras backend is the installed one (TensorFlow);
another (``KERAS_BACKEND=jax``, with JAX installed) is measured by running the script
under it, on the backend's device: a GPU where it has one (the line above the table
names it).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.checkpoints import load_net  # noqa: E402
from hexzero.nets.anet import keras_device  # noqa: E402
from hexzero.nets.twohead import jax_call  # noqa: E402
from shipped import shipped_folders, shipped_game, shipped_model  # noqa: E402


def shipped() -> list[tuple[str, Path, mctsfw.Game]]:
    """(folder, the network it ships, its game) for each folder of models/."""
    return [(folder, shipped_model(folder), shipped_game(folder)) for folder in shipped_folders()]


def timed(call, seconds: float) -> float:
    """The median microseconds of ``call()`` over about ``seconds`` of calls (after three)."""
    for _ in range(3):
        call()
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def in_bfloat16(path: Path, game: mctsfw.Game):
    """The network at ``path`` loaded with ``HEXZERO_PRECISION=bfloat16`` (read when its
    first batch is judged, so one is judged before the variable is put back); None for a
    network that is no ResNet (the variable changes nothing there)."""
    from hexzero.nets.twohead import PRECISION_VARIABLE, PolicyValueResNet

    net = load_net(path, game)
    if not isinstance(net, PolicyValueResNet):
        return None
    before = os.environ.get(PRECISION_VARIABLE)
    os.environ[PRECISION_VARIABLE] = "bfloat16"
    try:
        net.evaluate(net.encode_batch([game.initial_state()] * 2))
    finally:
        os.environ.pop(PRECISION_VARIABLE)
        if before is not None:
            os.environ[PRECISION_VARIABLE] = before
    return net


def ways(net, x: np.ndarray, reduced=None) -> dict:
    """Each way of computing the network on ``x``, as a call without arguments
    (``reduced``: the same network judging in bfloat16, ``in_bfloat16``)."""
    import keras

    model = net.model
    hexzero = (lambda: net.evaluate(x)) if hasattr(net, "evaluate") else (lambda: net.forward(x))
    found = {"hexzero": hexzero, "eager": lambda: model(x, training=False)}
    if reduced is not None:
        found["bfloat16"] = lambda: reduced.evaluate(x)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        compiled = tf.function(lambda t: model(t, training=False))
        found["compiled"] = lambda: compiled(x)
    elif keras.backend.backend() == "jax":
        compiled = jax_call(model)  # what the ResNet's batches go through on JAX
        found["compiled"] = lambda: compiled(x)
    found["predict"] = lambda: model.predict_on_batch(x)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=1.0, help="measuring time of each figure")
    args = parser.parse_args()
    import keras

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"Keras {keras.__version__} on {keras.backend.backend()} ({keras_device()}); microseconds a call (median)")
    columns = ("hexzero", "bfloat16", "eager", "compiled", "predict")
    print(f"{'network':<34} {'batch':>5} " + " ".join(f"{name:>9}" for name in columns) + "  fastest")
    for folder, path, game in shipped():
        net, reduced = load_net(path, game), in_bfloat16(path, game)
        shape = net.encode_batch([game.initial_state()]).shape[1:]
        for batch in map(int, args.batches.split(",")):
            x = np.random.default_rng(0).random((batch, *shape), dtype=np.float32)
            times = {name: timed(call, args.seconds) for name, call in ways(net, x, reduced).items()}
            cells = " ".join(f"{times[k]:9,.0f}" if k in times else f"{'-':>9}" for k in columns)
            print(f"{folder + '/' + path.name:<34} {batch:>5} {cells}  {min(times, key=times.get)}", flush=True)


if __name__ == "__main__":
    main()
