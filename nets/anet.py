"""The ANET: a Keras network from an encoded state to a policy over all actions.

Input: ``game.encode(state)`` (for Hex two bit planes, one per player, and two bits for
who is to move). Convolution layers (3x3 over the board, the flat input laid out as the
game's planes: ``conv_layers``), hidden layers and their activation (linear, sigmoid,
tanh or relu), optimizer (Adagrad, SGD, RMSProp or Adam) and learning rate come from the
config table ``[nets.anet]`` (Hex declares three convolutions and no hidden layer:
``Hex.net_defaults``). Output: a softmax over ``game.num_actions`` (with convolutions and
no hidden layer, on a board of one action a cell, each cell's logit from a 1x1
convolution), trained with categorical cross-entropy against MCTS visit distributions.

Keras is for training and saving only. Search and actors call ``forward``, a numpy
pass through the same weights (``NumpyMLP``, about 12 µs for one state of a 2x128
net, where ``model(x)`` costs about 2 ms and ``model.predict`` about 50 ms). It is
rebuilt from the Keras weights after every ``fit`` and ``load``.

Keras is imported on first use, not with this module: building the plugin registries
(every CLI command, every test) must not pay for TensorFlow's start-up.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError
from hexzero.nets.keras_files import (
    KerasNetFile, check_model_name, has_model_name, read_settings,
)
from hexzero.mctsfw.game import Game, State
from hexzero.mctsfw.sampling import masked_policy
from hexzero.mctsfw.schema import Parameters, Setting
from hexzero.mctsfw.workers import stderr_fd_to

#: the Keras model's name: how ``can_load`` recognises a file saved by ANET
MODEL_NAME = "anet"
#: the fixed first layer of a convolutional ANET: the flat encoding laid out as the board's planes
PLANES_LAYER = "planes"
#: the most weights of a convolution's dense equivalent in the numpy pass (4 MB): on a 5x5
#: or 7x7 board one matrix product is faster than gathering 3x3 patches; above, they are gathered
DENSE_CONVOLUTION_MOST = 1 << 20


ACTIVATION_NAMES = ("linear", "sigmoid", "tanh", "relu")
#: lower-case config name -> Keras optimizer class name
OPTIMIZERS = {"adagrad": "Adagrad", "sgd": "SGD", "rmsprop": "RMSprop", "adam": "Adam"}

#: the parameters shared by the nets with a dense trunk (``[nets.anet]``, ``[nets.pv_mlp]``)
HIDDEN_LAYERS = Setting("hidden_layers", [128, 128], "neurons per hidden layer; [] = no hidden layer",
                        items=Setting("units", 1, "neurons", low=1))
CONV_LAYERS = Setting("conv_layers", [], "3x3 convolution filters per layer over the board, before the hidden layers; "
                      "[] = none (an MLP)", items=Setting("filters", 1, "filters", low=1))
ACTIVATION = Setting("activation", "relu", "activation of the hidden layers", choices=ACTIVATION_NAMES, ignore_case=True)
OPTIMIZER = Setting("optimizer", "adam", "the Keras optimizer", choices=tuple(OPTIMIZERS), ignore_case=True)
LEARNING_RATE = Setting("learning_rate", 0.001, "the optimizer's learning rate", low=0, above=True)
SEED = Setting("seed", None, "seed of the initial weights; -1 or None = a new one (training passes the run's seed)",
               low=-1, kind=int)


#: what TensorFlow's native code writes to stderr while it loads, whatever
#: TF_CPP_MIN_LOG_LEVEL says (absl logs INFO before its logging is initialised)
START_UP_NOTICE = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IW]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] .*"
)


# a stop signal that lands in Keras's check of a network call's inputs is caught by its bare
# ``except`` and printed as this warning (the run still stops: mctsfw.interrupts saw the
# signal); our networks take one array, so it warns of nothing else. Set here, not where
# Keras is imported, so that it holds whoever imports Keras first.
warnings.filterwarnings("ignore", message="The structure of `inputs` doesn't match", category=UserWarning)


def gpu_backend(devices: Path = Path("/dev")) -> str | None:
    """The Keras backend chosen without a setting: "jax" where ``KERAS_BACKEND`` is unset,
    JAX with its CUDA plugin is installed (``pip install -e ".[gpu]"``) and the machine has
    an NVIDIA GPU (a device node the driver made in ``devices``); else None: Keras's own
    choice (``KERAS_BACKEND``, or TensorFlow, which the install brings for the CPU)."""
    if os.environ.get("KERAS_BACKEND"):
        return None
    if importlib.util.find_spec("jax") is None or not any(
            importlib.util.find_spec(plugin) for plugin in ("jax_cuda12_plugin", "jax_cuda13_plugin")):
        return None
    return "jax" if any(devices.glob("nvidia[0-9]*")) else None


def _keras():
    """Keras, imported on first use (on the GPU backend where ``gpu_backend`` finds one)
    with TensorFlow's start-up notices left out of stderr (mctsfw sets
    TF_CPP_MIN_LOG_LEVEL=2; a user who lowers it sees them all)."""
    if "keras" not in sys.modules:
        if backend := gpu_backend():
            os.environ["KERAS_BACKEND"] = backend
            # each worker process takes GPU memory as it needs it, not 75% of it at once
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") >= "2":
            _import_without_notices("keras")
    import keras

    return keras


def device_line() -> str:
    """One line: the Keras backend and where it computes (a GPU's name, or the CPU and
    how to get a GPU used), as ``hexzero info`` and the training commands print it."""
    backend, device = _keras().backend.backend(), keras_device()
    if device != "CPU":
        return f"keras backend: {backend} on {device}"
    return (f"keras backend: {backend} on the CPU (no GPU in use: on a machine with an NVIDIA GPU, "
            f'pip install -e ".[gpu]" and it is chosen by itself)')


def keras_device() -> str:
    """Where the Keras backend computes: its first GPU's name, else "CPU" (for the
    benchmarks' headers)."""
    backend = _keras().backend.backend()
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        return device.device_kind if device.platform == "gpu" else "CPU"
    if backend == "torch":
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return gpus[0].name if gpus else "CPU"


def _import_without_notices(module: str) -> None:
    """Import ``module`` with the process's stderr (fd 2) caught, then write back what
    is not a start-up notice: errors and Python warnings still show."""
    with tempfile.TemporaryFile() as caught:
        try:
            with stderr_fd_to(caught.fileno()):
                importlib.import_module(module)
        finally:
            caught.seek(0)
            for line in caught.read().decode(errors="replace").splitlines(keepends=True):
                if not START_UP_NOTICE.fullmatch(line.rstrip("\n")):
                    sys.stderr.write(line)
            sys.stderr.flush()


# ---- the numpy fast path ----------------------------------------------------------------
def _linear(h: np.ndarray) -> np.ndarray:
    return h


def _relu(h: np.ndarray) -> np.ndarray:
    return np.maximum(h, 0.0, out=h)


def _tanh(h: np.ndarray) -> np.ndarray:
    return np.tanh(h, out=h)


def _sigmoid(h: np.ndarray) -> np.ndarray:
    # 0.5 * (1 + tanh(h / 2)) is the logistic function without exp overflow for large |h|
    h *= 0.5
    np.tanh(h, out=h)
    h += 1.0
    h *= 0.5
    return h


def _softmax(h: np.ndarray) -> np.ndarray:
    h -= h.max(axis=-1, keepdims=True)  # exp of at most 0: no overflow
    np.exp(h, out=h)
    h /= h.sum(axis=-1, keepdims=True)
    return h


#: activation name (as Keras writes it in a layer's config) -> in-place numpy function
NUMPY_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": _linear,
    "relu": _relu,
    "tanh": _tanh,
    "sigmoid": _sigmoid,
    "softmax": _softmax,
}


def train_step(model):
    """``steps(x, y)``: gradient steps of a compiled Keras ``model``, one a batch, as
    ``model.fit`` takes them (the compiled loss with the regularisation, the compiled
    optimizer), all in one call compiled by ``tf.function``: ``x`` and ``y`` hold the
    batches, ``(batches, batch size, ...)``. It returns the summed loss of the batches and
    how many rows had their most probable action the target's. What ``fit`` costs beyond
    its steps (its data pipeline, an iterator per epoch, callbacks, a call per step: about
    0.3 s for the 40 small steps of an on-policy episode) is left out. None unless Keras
    runs on TensorFlow."""
    keras = _keras()
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    variables = model.trainable_variables

    def one(x, y):
        with tf.GradientTape() as tape:
            predicted = model(x, training=True)
            loss = model.compute_loss(x=x, y=y, y_pred=predicted, training=True)
        model.optimizer.apply(tape.gradient(loss, variables), variables)
        hits = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(predicted, axis=-1), tf.argmax(y, axis=-1)), tf.float32))
        return loss, hits

    @tf.function(reduce_retracing=True, autograph=False)
    def steps(x, y):
        def body(i, losses, hits):
            loss, hit = one(x[i], y[i])
            return i + 1, losses + loss, hits + hit

        _, losses, hits = tf.while_loop(lambda i, *_: i < tf.shape(x)[0], body,
                                        (tf.constant(0), tf.constant(0.0), tf.constant(0.0)))
        return losses, hits

    return steps


def fit_by_steps(steps, x: np.ndarray, y: np.ndarray, batch_size: int, epochs: int) -> tuple[float, float]:
    """``epochs`` passes of ``steps`` (``train_step``) over ``x``, ``y`` in batches of
    ``batch_size``, in order, as ``model.fit(..., shuffle=False)`` takes them (a smaller
    batch last): the last pass's mean loss (weighted by batch size, as Keras averages it)
    and accuracy."""
    full = len(x) // batch_size * batch_size
    parts = [(x[:full].reshape(-1, batch_size, *x.shape[1:]), y[:full].reshape(-1, batch_size, *y.shape[1:]))]
    if full < len(x):
        parts.append((x[None, full:], y[None, full:]))
    for _ in range(epochs):
        losses, hits = 0.0, 0.0
        for xs, ys in parts:
            if len(xs):
                loss, hit = steps(xs, ys)
                losses += float(loss) * xs.shape[1]
                hits += float(hit)
    return losses / len(x), hits / len(x)


def conv3x3(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 3x3 'same' convolution of ``x`` (B, H, W, C) with ``kernel`` (3, 3, C, F) reshaped to
    (9C, F): every cell's 3x3 patch gathered in one copy, then one matrix product."""
    B, H, W, C = x.shape
    padded = np.zeros((B, H + 2, W + 2, C), dtype=np.float32)
    padded[:, 1:-1, 1:-1] = x
    b, r, c, ch = padded.strides
    # a view (B, H, W, 3, 3, C) of the patches, in the kernel's (row, col, channel) order
    patches = np.lib.stride_tricks.as_strided(padded, (B, H, W, 3, 3, C), (b, r, c, r, c, ch), writeable=False)
    out = patches.reshape(B * H * W, 9 * C) @ kernel
    out += bias
    return out.reshape(B, H, W, -1)


def conv_as_dense(kernel: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The dense kernel ``(rows*cols*C, rows*cols*F)`` that equals a 'same' convolution with
    ``kernel`` ``(k, k, C, F)`` (k odd) over a board of ``rows`` x ``cols``, cells and
    channels in row, column, channel order: output cell (r, c) sums ``kernel[i, j]`` times
    input cell (r + i - k//2, c + j - k//2) where that cell is on the board. On a small
    board one matrix product is faster than gathering patches."""
    k, _, channels, filters = kernel.shape
    dense = np.zeros((rows * cols * channels, rows * cols * filters), dtype=np.float32)
    for r in range(rows):
        for c in range(cols):
            out = (r * cols + c) * filters
            for i in range(k):
                for j in range(k):
                    rr, cc = r + i - k // 2, c + j - k // 2
                    if 0 <= rr < rows and 0 <= cc < cols:
                        at = (rr * cols + cc) * channels
                        dense[at:at + channels, out:out + filters] += kernel[i, j]
    return dense


class RowBands:
    """A 'same' 3x3 convolution over a small board as the dense layer it equals
    (``conv_as_dense``), kept as that matrix's row bands: an output row of the board reads
    only the input rows next to it, and every interior row the same band, so the product
    is three (the first row, the interior rows stacked, the last row) over about a third
    of the dense matrix, the rest of which is zeros. On 5x5 Hex half the time of the
    dense product for the layers of the default ANET (16 filters)."""

    def __init__(self, dense: np.ndarray, rows: int):
        if rows < 3 or dense.shape[0] % rows or dense.shape[1] % rows:
            raise ValueError(f"row bands need at least 3 rows of equal width, not {dense.shape} over {rows} rows")
        self.rows, self.shape = rows, dense.shape
        i, o = self.row_in, self.row_out = dense.shape[0] // rows, dense.shape[1] // rows
        self.first = np.ascontiguousarray(dense[:2 * i, :o])
        self.interior = np.ascontiguousarray(dense[:3 * i, o:2 * o])  # the same for every interior row
        self.last = np.ascontiguousarray(dense[(rows - 2) * i:, (rows - 1) * o:])

    def product(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``x @ dense`` for a C-contiguous float32 batch ``(B, rows * row_in)``, into ``out``."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        n, rows, i, o = len(x), self.rows, self.row_in, self.row_out
        if out is None:
            out = np.empty((n, self.shape[1]), dtype=np.float32)
        by_row = out.reshape(n, rows, o)
        # each interior row's three input rows, as a view (rows - 2, B, 3 * row_in): no copy
        windows = np.ndarray((rows - 2, n, 3 * i), np.float32, x, 0, (i * x.itemsize, x.strides[0], x.itemsize))
        np.matmul(windows, self.interior, out=by_row[:, 1:-1].transpose(1, 0, 2))
        np.matmul(x[:, :2 * i], self.first, out=by_row[:, 0])
        np.matmul(x[:, (rows - 2) * i:], self.last, out=by_row[:, -1])
        return out


class NumpyMLP:
    """A stack of layers ``(W, b, activation)`` evaluated with numpy in float32: dense
    layers, and convolutions over a board as a fourth item ``(rows, cols)`` (then ``W`` is
    the 3x3 kernel as ``(9 * channels, filters)``, the values in row, column, channel order)."""

    def __init__(self, layers: Sequence[tuple]):
        self.layers = []
        for W, b, activation, *board in layers:
            if activation not in NUMPY_ACTIVATIONS:
                raise ValueError(f"the numpy forward pass has no activation {activation!r}")
            if not isinstance(W, RowBands):
                W = np.ascontiguousarray(W, dtype=np.float32)
            self.layers.append((W, np.asarray(b, dtype=np.float32), activation,
                                tuple(board[0]) if board and board[0] else None))
        self._steps = [(W, b, NUMPY_ACTIVATIONS[a], board) for W, b, a, board in self.layers]
        self._buffers: list[np.ndarray] = []  # ``logits``'s outputs, one per layer, grown on demand
        self._passes: dict[int, list] = {}  # batch size -> ``logits``'s steps with their output views

    @classmethod
    def from_keras(cls, model) -> "NumpyMLP":
        """The layers of a Keras model (copies of their current weights): Dense as it is; a
        'same' Conv2D over the board as the dense layer it equals there (``conv_as_dense``)
        where that layer is small (a 5x5 board), else as a convolution; Reshape and
        Flatten as nothing (both keep the row, column, channel order); an Activation layer
        as the activation of the layer before it. The fixed ``planes`` layer of a
        convolutional ANET is folded into a dense layer after it."""
        layers: list[list] = []
        board = None  # (rows, cols, channels) after a Reshape or a convolution
        planes = None  # the planes layer's kernel, waiting to be multiplied into the next dense one
        for layer in model.layers:
            kind = type(layer).__name__
            if kind in ("InputLayer", "Flatten"):
                continue
            if kind == "Reshape":
                board = tuple(layer.target_shape)
                continue
            if kind == "Activation" and layers and layers[-1][2] == "linear":
                layers[-1][2] = layer.get_config()["activation"]
                continue
            weights = layer.get_weights()
            where = None  # the board of a convolution run as one
            if kind == "Dense" and layer.name == PLANES_LAYER and not layer.trainable and len(weights) == 1:
                planes = weights[0]
                continue
            if kind == "Dense":
                kernel = weights[0]
                bias = weights[1] if len(weights) > 1 else np.zeros(kernel.shape[1], np.float32)
            elif kind == "Conv2D" and board is not None and layer.get_config()["padding"] == "same":
                (k, _, channels, filters), cells = weights[0].shape, board[0] * board[1]
                if cells * channels * cells * filters <= DENSE_CONVOLUTION_MOST:
                    kernel, bias = conv_as_dense(weights[0], board[0], board[1]), np.tile(weights[1], cells)
                    if planes is None and k == 3 and board[0] >= 3:  # (a 1x1 one is one small product)
                        kernel = RowBands(kernel, board[0])
                else:
                    kernel = np.zeros((3, 3, channels, filters), np.float32)
                    kernel[1 - k // 2:2 + k // 2, 1 - k // 2:2 + k // 2] = weights[0]  # a 1x1 kernel in the middle
                    kernel, bias, where = kernel.reshape(9 * channels, filters), weights[1], board[:2]
                board = (board[0], board[1], filters)
            else:
                raise ValueError(f"layer {layer.name!r} is a {type(layer).__name__}; the numpy forward pass takes Dense "
                                 "layers and 'same' convolutions over the board only")
            if planes is not None and where is None:
                kernel = planes @ kernel
            elif planes is not None:
                layers.append([planes, np.zeros(planes.shape[1], np.float32), "linear", None])
            planes = None
            layers.append([kernel, bias, layer.get_config()["activation"], where])
        return cls(layers)

    def __call__(self, x: np.ndarray, final_activation: bool = True) -> np.ndarray:
        """The output for a batch ``(B, d)`` or one ``(d,)``; without ``final_activation``
        the last layer's pre-activations (for a softmax output: the logits)."""
        h = np.asarray(x, dtype=np.float32)
        if h.ndim == 1:
            h = h[None, :]
        last = len(self._steps) - 1
        for i, (W, b, activation, board) in enumerate(self._steps):
            if board is None:
                h = W.product(h) if isinstance(W, RowBands) else h @ W  # new arrays: the in-place steps
                h += b  # below never touch the caller's x
            else:
                h = conv3x3(h.reshape(len(h), *board, -1), W, b).reshape(len(h), -1)
            if i < last or final_activation:
                h = activation(h)
        return h

    def __getstate__(self) -> dict:
        """Pickled (sent to a worker) without ``logits``'s scratch buffers."""
        return {**self.__dict__, "_buffers": [], "_passes": {}}

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The last layer's pre-activations (``self(x, final_activation=False)``) for a
        batch ``(B, d)``, written into buffers this object keeps and reuses: no array is
        allocated (but by convolutions run as such), and the result is overwritten by the
        next call (copy it to keep it). The hot path of greedy network rollouts, one call
        per move of a batch."""
        h = np.asarray(x, dtype=np.float32)
        if h.ndim == 1:
            h = h[None, :]
        n = len(h)
        steps = self._passes.get(n)
        if steps is None:
            if not self._buffers or len(self._buffers[0]) < n:
                self._buffers = [np.empty((max(n, 32), W.shape[1] * (board[0] * board[1] if board else 1)), dtype=np.float32)
                                 for W, _, _, board in self._steps]
                self._passes = {}
            last = len(self._steps) - 1
            steps = self._passes[n] = [
                (W, b, activation if i < last else None, board, buffer[:n])
                for i, ((W, b, activation, board), buffer) in enumerate(zip(self._steps, self._buffers))
            ]
        for W, b, activation, board, out in steps:
            if board is None:
                if isinstance(W, RowBands):
                    W.product(h, out=out)
                else:
                    np.matmul(h, W, out=out)
                out += b
            else:
                out[:] = conv3x3(h.reshape(n, *board, -1), W, b).reshape(n, -1)
            if activation is not None:
                activation(out)
            h = out
        return h


# ---- the plugin -----------------------------------------------------------------------------
def describe_game(game: Game) -> str:
    """``nim(piles=[3, 4, 5], ...)``: the game as an error message names it."""
    return f"{game.name}({', '.join(f'{k}={v!r}' for k, v in game.params().items())})"


def _is_whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class ANET(KerasNetFile):
    """The actor network: an MLP policy over all actions of a game."""

    #: the search it plays best with, saved in its file (``mctsfw.checkpoints.play_settings``); None: not recorded
    play_settings: dict | None = None

    name = "anet"
    roles = ("policy",)
    input_kind = "flat"
    description = ("MLP policy net, convolutions first with conv_layers (Keras; numpy inference): conv_layers, "
                   "hidden_layers, activation, optimizer, learning_rate")

    parameters = Parameters(CONV_LAYERS, HIDDEN_LAYERS, ACTIVATION, OPTIMIZER, LEARNING_RATE, SEED)

    def __init__(
        self,
        game: Game,
        hidden_layers: Sequence[int] = parameters.default("hidden_layers"),
        activation: str = parameters.default("activation"),
        optimizer: str = parameters.default("optimizer"),
        learning_rate: float = parameters.default("learning_rate"),
        seed: int | None = None,
        conv_layers: Sequence[int] = parameters.default("conv_layers"),
    ):
        params = {
            "conv_layers": conv_layers,
            "hidden_layers": hidden_layers,
            "activation": activation,
            "optimizer": optimizer,
            "learning_rate": learning_rate,
            "seed": seed,
        }
        problems = self.param_problems(params)
        if problems:
            raise ValueError(f"{self.name}: " + "; ".join(problems))
        self.game = game
        self.conv_layers = tuple(int(f) for f in conv_layers)
        self.hidden_layers = tuple(int(u) for u in hidden_layers)
        self.activation = activation.lower()
        self.optimizer = optimizer.lower()
        self.learning_rate = float(learning_rate)
        self.seed = None if seed is None or seed == -1 else int(seed)
        self.input_size = len(game.encode(game.initial_state()))
        self.num_actions = game.num_actions
        self.rng = np.random.default_rng(self.seed)
        self.planes = self._planes_map() if self.conv_layers else None
        self.model = self._build_model()
        self.refresh()

    @classmethod
    def param_problems(cls, params: dict[str, Any]) -> list[str]:
        """Every problem with these constructor parameters (the ``[nets.anet]`` table)."""
        return cls.parameters.problems(cls.name, params)

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild this net's architecture and optimizer."""
        return {
            "conv_layers": list(self.conv_layers),
            "hidden_layers": list(self.hidden_layers),
            "activation": self.activation,
            "optimizer": self.optimizer,
            "learning_rate": self.learning_rate,
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"ANET({describe_game(self.game)}, {args})"

    # ---- the Keras model ------------------------------------------------------------------
    def _planes_map(self) -> np.ndarray:
        """The matrix ``(input_size, rows*cols*channels)`` that lays the flat encoding out
        as the board's planes: ``game.planes_of_encoded`` of each unit vector (it only
        moves values, so it is linear). A game without it refuses ``conv_layers``."""
        try:
            planes = self.game.planes_of_encoded(np.eye(self.input_size, dtype=np.float32))
        except NotImplementedError as error:
            raise ValueError(f"{self.name}: conv_layers needs the board's planes of the flat encoding; {error}") from None
        return planes

    def _build_model(self):
        keras = _keras()

        def initializer(i: int):
            return keras.initializers.GlorotUniform(seed=None if self.seed is None else self.seed + i)

        layers = [keras.Input(shape=(self.input_size,), name="state")]
        cell_logits = False  # the head: a 1x1 convolution's logit for each cell, not dense layers
        if self.conv_layers:  # the flat encoding as planes, then 3x3 convolutions over the board
            board = self.planes.shape[1:]
            planes = self.planes.reshape(self.input_size, -1)
            layers += [
                keras.layers.Dense(planes.shape[1], use_bias=False, trainable=False, name=PLANES_LAYER,
                                   kernel_initializer=keras.initializers.Constant(planes)),
                keras.layers.Reshape(board, name="board"),
            ]
            for i, filters in enumerate(self.conv_layers):
                layers.append(keras.layers.Conv2D(filters, 3, padding="same", activation=self.activation,
                                                  kernel_initializer=initializer(100 + i), name=f"conv_{i + 1}"))
            cell_logits = not self.hidden_layers and self.num_actions == board[0] * board[1]  # Hex: a move a cell
            if cell_logits:
                layers += [
                    keras.layers.Conv2D(1, 1, padding="same", kernel_initializer=initializer(0), name="policy_conv"),
                    keras.layers.Flatten(name="cells"),
                    keras.layers.Activation("softmax", name="policy"),
                ]
            else:
                layers.append(keras.layers.Flatten(name="features"))
        if not cell_logits:
            for i, units in enumerate(self.hidden_layers):
                layers.append(keras.layers.Dense(units, activation=self.activation, kernel_initializer=initializer(i),
                                                 name=f"hidden_{i + 1}"))
            layers.append(
                keras.layers.Dense(
                    self.num_actions, activation="softmax", kernel_initializer=initializer(len(self.hidden_layers)), name="policy"
                )
            )
        model = keras.Sequential(layers, name=MODEL_NAME)
        self._compile(model)
        return model

    def _compile(self, model) -> None:
        keras = _keras()
        optimizer = getattr(keras.optimizers, OPTIMIZERS[self.optimizer])(learning_rate=self.learning_rate)
        model.compile(
            optimizer=optimizer,
            loss=keras.losses.CategoricalCrossentropy(),
            metrics=[keras.metrics.CategoricalAccuracy(name="accuracy")],
        )
        # Built now, so that a net saved before any training stores the optimizer's full
        # state and loads back without Keras warning of mismatched optimizer variables.
        model.optimizer.build(model.trainable_variables)

    def refresh(self) -> None:
        """Rebuild the numpy forward pass from the Keras weights (after any change to them)."""
        self.fast = NumpyMLP.from_keras(self.model)

    def _train_step(self):
        """On TensorFlow, one compiled training step of the model (``train_step``), made once
        per model; None on another backend."""
        if getattr(self, "_step_for", None) is not self.model:
            self._step, self._step_for = train_step(self.model), self.model
        return self._step

    # ---- inference ------------------------------------------------------------------------
    def forward(self, x: np.ndarray) -> np.ndarray:
        """Softmax probabilities ``(B, num_actions)`` for encoded states ``(B, d)`` or one ``(d,)``."""
        return self.fast(x)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """The logits ``(B, num_actions)``: ordered as ``forward`` but without the softmax's
        cost, in a buffer the next call overwrites (the policy role's optional ``scores``)."""
        return self.fast.logits(x)

    def policy(self, state: State) -> np.ndarray:
        """The probabilities of the legal actions of ``state`` (illegal ones 0), summing to 1."""
        game = self.game
        return masked_policy(self.fast(game.encode(state))[0], game.legal_mask(state))

    def encode_batch(self, states: Sequence[State]) -> np.ndarray:
        """States stacked into a batch ``(B, input_size)`` of the flat encoding (``game.encode``)."""
        return np.stack([self.game.encode(state) for state in states]).astype(np.float32, copy=False)

    # ---- training -------------------------------------------------------------------------
    def fit(self, x: np.ndarray, pi: np.ndarray, z: np.ndarray | None = None, batch_size: int = 64,
            epochs: int = 1) -> dict[str, float]:
        """Train on encoded states ``x`` against target distributions ``pi`` (MCTS visit counts).

        ``z``, value targets, is accepted so that every net's ``fit`` takes the same
        arguments, and ignored: a policy network has no value head to train. Returns the last epoch's mean cross-entropy ``loss`` and ``accuracy`` (the share
        of cases whose most probable action is the target's most visited one), as Keras
        measured them during that epoch, and the optimizer's ``learning_rate`` (for the run's
        curves). The cases are shuffled once by the net's own
        seeded generator, so a seeded net trains the same way every run.
        """
        x = np.asarray(x, dtype=np.float32)
        targets = np.asarray(pi, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must have shape (cases, {self.input_size}), not {x.shape}")
        if targets.shape != (len(x), self.num_actions):
            raise ValueError(f"targets must have shape ({len(x)}, {self.num_actions}), not {targets.shape}")
        if len(x) == 0:
            raise ValueError("nothing to train on: x is empty")
        order = self.rng.permutation(len(x))
        step = self._train_step()
        if step is None:  # another backend: Keras's own loop
            history = self.model.fit(
                x[order], targets[order], batch_size=int(batch_size), epochs=int(epochs), shuffle=False, verbose=0
            ).history
            loss, accuracy = history["loss"][-1], history["accuracy"][-1]
        else:
            loss, accuracy = fit_by_steps(step, x[order], targets[order], int(batch_size), int(epochs))
        self.refresh()
        return {
            "loss": float(loss),
            "accuracy": float(accuracy),
            "learning_rate": float(str(np.asarray(self.model.optimizer.learning_rate, dtype=np.float32))),
            "cases": int(len(x)),
            "epochs": int(epochs),
        }

    # ---- files ----------------------------------------------------------------------------
    @classmethod
    def can_load(cls, path: str | Path) -> bool:
        """Whether ``path`` is a ``.keras`` file saved by ANET (a look at its config; no TensorFlow)."""
        return has_model_name(path, MODEL_NAME)

    @classmethod
    def load(cls, path: str | Path, game: Game) -> "ANET":
        """The ANET saved at ``path``, for ``game``; ``ModelFileError`` says what is wrong otherwise."""
        path = Path(path)
        check_model_name(path, MODEL_NAME, cls.name)
        keras = _keras()
        try:
            model = keras.models.load_model(path)
        except Exception as error:
            raise ModelFileError(f"{path}: cannot be read as a Keras model ({type(error).__name__}: {error})") from None
        inputs, outputs = model.input_shape[-1], model.output_shape[-1]
        encoded = len(game.encode(game.initial_state()))
        if inputs != encoded:
            raise ModelFileError(f"{path}: expects {inputs} inputs but {describe_game(game)} encodes {encoded}")
        if outputs != game.num_actions:
            raise ModelFileError(f"{path}: has {outputs} outputs but {describe_game(game)} has {game.num_actions} actions")
        net = cls.__new__(cls)
        try:
            net._adopt(game, model)
        except (ValueError, KeyError) as error:
            raise ModelFileError(f"{path}: not a network the {cls.name} net can run ({error})") from None
        net.play_settings = read_settings(path).get("search")
        return net

    def _adopt(self, game: Game, model) -> None:
        """Take over a loaded model: read the architecture and optimizer back from it."""
        self.game = game
        self.model = model
        self.input_size = model.input_shape[-1]
        self.num_actions = model.output_shape[-1]
        self.fast = NumpyMLP.from_keras(model)
        convolutions = [layer for layer in model.layers if type(layer).__name__ == "Conv2D" and layer.name != "policy_conv"]
        hidden = [layer for layer in model.layers if type(layer).__name__ == "Dense"
                  and layer.name not in ("policy", PLANES_LAYER)]
        self.conv_layers = tuple(int(layer.filters) for layer in convolutions)
        self.hidden_layers = tuple(int(layer.units) for layer in hidden)
        trunk = (convolutions + hidden)[:1]
        self.activation = trunk[0].get_config()["activation"] if trunk else ACTIVATION.default
        self.planes = self._planes_map() if self.conv_layers else None
        boards = [tuple(layer.target_shape) for layer in model.layers if type(layer).__name__ == "Reshape"]
        if self.conv_layers and boards[:1] != [self.planes.shape[1:]]:
            raise ValueError(f"its board {boards[0] if boards else None} is not the game's {self.planes.shape[1:]}")
        self.seed = None
        self.rng = np.random.default_rng()
        if model.optimizer is None:  # saved uncompiled: train with the defaults
            self.optimizer, self.learning_rate = OPTIMIZER.default, LEARNING_RATE.default
            self._compile(model)
        else:
            self.optimizer = type(model.optimizer).__name__.lower()
            # stored in float32: str() gives back the short decimal the user wrote
            self.learning_rate = float(str(np.asarray(model.optimizer.learning_rate, dtype=np.float32)))


@mctsfw.hookimpl
def mctsfw_register_nets():
    return [ANET]
