"""The ANET: a Keras multi-layer perceptron from an encoded state to a policy over all actions.

Input: ``game.encode(state)`` (for Hex two bit planes, one per player, and two bits for
who is to move). Hidden layers and their activation (linear, sigmoid, tanh or relu),
optimizer (Adagrad, SGD, RMSProp or Adam) and learning rate come from the config
table ``[nets.anet]``. Output: a softmax over ``game.num_actions``, trained with
categorical cross-entropy against MCTS visit distributions.

Keras is for training and saving only. Search and actors call ``forward``, a numpy
pass through the same weights (``NumpyMLP``, about 12 µs for one state of a 2x128
net, where ``model(x)`` costs about 2 ms and ``model.predict`` about 50 ms). It is
rebuilt from the Keras weights after every ``fit`` and ``load``.

Keras is imported on first use, not with this module: building the plugin registries
(every CLI command, every test) must not pay for TensorFlow's start-up.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError
from hexzero.nets.keras_files import check_model_name, has_model_name, save_keras_model
from hexzero.mctsfw.game import Game, State
from hexzero.mctsfw.sampling import masked_policy
from hexzero.mctsfw.schema import Parameters, Setting
from hexzero.mctsfw.workers import stderr_fd_to

#: the Keras model's name: how ``can_load`` recognises a file saved by ANET
MODEL_NAME = "anet"

ACTIVATION_NAMES = ("linear", "sigmoid", "tanh", "relu")
#: lower-case config name -> Keras optimizer class name
OPTIMIZERS = {"adagrad": "Adagrad", "sgd": "SGD", "rmsprop": "RMSprop", "adam": "Adam"}

#: the parameters shared by the nets with a dense trunk (``[nets.anet]``, ``[nets.pv_mlp]``)
HIDDEN_LAYERS = Setting("hidden_layers", [128, 128], "neurons per hidden layer; [] = no hidden layer",
                        items=Setting("units", 1, "neurons", low=1))
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


def _keras():
    """Keras, imported on first use with TensorFlow's start-up notices left out of stderr
    (mctsfw sets TF_CPP_MIN_LOG_LEVEL=2; a user who lowers it sees them all)."""
    if "keras" not in sys.modules and os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") >= "2":
        _import_without_notices("keras")
    import keras

    return keras


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


class NumpyMLP:
    """A stack of dense layers ``(W, b, activation)`` evaluated with numpy in float32."""

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray, str]]):
        self.layers = []
        for W, b, activation in layers:
            if activation not in NUMPY_ACTIVATIONS:
                raise ValueError(f"the numpy forward pass has no activation {activation!r}")
            self.layers.append((np.ascontiguousarray(W, dtype=np.float32), np.asarray(b, dtype=np.float32), activation))
        self._steps = [(W, b, NUMPY_ACTIVATIONS[a]) for W, b, a in self.layers]
        self._buffers: list[np.ndarray] = []  # ``logits``'s outputs, one per layer, grown on demand
        self._passes: dict[int, list] = {}  # batch size -> ``logits``'s steps with their output views

    @classmethod
    def from_keras(cls, model) -> "NumpyMLP":
        """The dense layers of a Keras model (copies of their current weights)."""
        layers = []
        for layer in model.layers:
            if type(layer).__name__ != "Dense":
                raise ValueError(f"layer {layer.name!r} is a {type(layer).__name__}; the numpy forward pass takes Dense layers only")
            kernel, bias = layer.get_weights()
            layers.append((kernel, bias, layer.get_config()["activation"]))
        return cls(layers)

    def __call__(self, x: np.ndarray, final_activation: bool = True) -> np.ndarray:
        """The output for a batch ``(B, d)`` or one ``(d,)``; without ``final_activation``
        the last layer's pre-activations (for a softmax output: the logits)."""
        h = np.asarray(x, dtype=np.float32)
        if h.ndim == 1:
            h = h[None, :]
        last = len(self._steps) - 1
        for i, (W, b, activation) in enumerate(self._steps):
            h = h @ W  # a new array: the in-place steps below never touch the caller's x
            h += b
            if i < last or final_activation:
                h = activation(h)
        return h

    def __getstate__(self) -> dict:
        """Pickled (sent to a worker) without ``logits``'s scratch buffers."""
        return {**self.__dict__, "_buffers": [], "_passes": {}}

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The last layer's pre-activations (``self(x, final_activation=False)``) for a
        batch ``(B, d)``, written into buffers this object keeps and reuses: no array is
        allocated, and the result is overwritten by the next call (copy it to keep it).
        The hot path of greedy network rollouts, one call per move of a batch."""
        h = np.asarray(x, dtype=np.float32)
        if h.ndim == 1:
            h = h[None, :]
        n = len(h)
        steps = self._passes.get(n)
        if steps is None:
            if not self._buffers or len(self._buffers[0]) < n:
                self._buffers = [np.empty((max(n, 32), W.shape[1]), dtype=np.float32) for W, _, _ in self._steps]
                self._passes = {}
            last = len(self._steps) - 1
            steps = self._passes[n] = [
                (W, b, activation if i < last else None, buffer[:n])
                for i, ((W, b, activation), buffer) in enumerate(zip(self._steps, self._buffers))
            ]
        for W, b, activation, out in steps:
            np.matmul(h, W, out=out)
            out += b
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


class ANET:
    """The actor network: an MLP policy over all actions of a game."""

    name = "anet"
    roles = ("policy",)
    input_kind = "flat"
    description = "MLP policy net (Keras; numpy inference): hidden_layers, activation, optimizer, learning_rate"

    parameters = Parameters(HIDDEN_LAYERS, ACTIVATION, OPTIMIZER, LEARNING_RATE, SEED)

    def __init__(
        self,
        game: Game,
        hidden_layers: Sequence[int] = parameters.default("hidden_layers"),
        activation: str = parameters.default("activation"),
        optimizer: str = parameters.default("optimizer"),
        learning_rate: float = parameters.default("learning_rate"),
        seed: int | None = None,
    ):
        params = {
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
        self.hidden_layers = tuple(int(u) for u in hidden_layers)
        self.activation = activation.lower()
        self.optimizer = optimizer.lower()
        self.learning_rate = float(learning_rate)
        self.seed = None if seed is None or seed == -1 else int(seed)
        self.input_size = len(game.encode(game.initial_state()))
        self.num_actions = game.num_actions
        self.rng = np.random.default_rng(self.seed)
        self.model = self._build_model()
        self.refresh()

    @classmethod
    def param_problems(cls, params: dict[str, Any]) -> list[str]:
        """Every problem with these constructor parameters (the ``[nets.anet]`` table)."""
        return cls.parameters.problems(cls.name, params)

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild this net's architecture and optimizer."""
        return {
            "hidden_layers": list(self.hidden_layers),
            "activation": self.activation,
            "optimizer": self.optimizer,
            "learning_rate": self.learning_rate,
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"ANET({describe_game(self.game)}, {args})"

    # ---- the Keras model ------------------------------------------------------------------
    def _build_model(self):
        keras = _keras()

        def initializer(i: int):
            return keras.initializers.GlorotUniform(seed=None if self.seed is None else self.seed + i)

        layers = [keras.Input(shape=(self.input_size,), name="state")]
        for i, units in enumerate(self.hidden_layers):
            layers.append(
                keras.layers.Dense(units, activation=self.activation, kernel_initializer=initializer(i), name=f"hidden_{i + 1}")
            )
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
        history = self.model.fit(
            x[order], targets[order], batch_size=int(batch_size), epochs=int(epochs), shuffle=False, verbose=0
        ).history
        self.refresh()
        return {
            "loss": float(history["loss"][-1]),
            "accuracy": float(history["accuracy"][-1]),
            "learning_rate": float(str(np.asarray(self.model.optimizer.learning_rate, dtype=np.float32))),
            "cases": int(len(x)),
            "epochs": int(epochs),
        }

    # ---- files ----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the model (weights, architecture, optimizer state) to a ``.keras`` file.

        Written to a temporary file first and moved into place, so an interrupted save
        never leaves a broken file where a good one was.
        """
        return save_keras_model(self.model, path)

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
            raise ModelFileError(f"{path}: not an MLP the {cls.name} net can run ({error})") from None
        return net

    def _adopt(self, game: Game, model) -> None:
        """Take over a loaded model: read the architecture and optimizer back from it."""
        self.game = game
        self.model = model
        self.input_size = model.input_shape[-1]
        self.num_actions = model.output_shape[-1]
        self.fast = NumpyMLP.from_keras(model)
        hidden = self.fast.layers[:-1]
        self.hidden_layers = tuple(W.shape[1] for W, _, _ in hidden)
        self.activation = hidden[0][2] if hidden else ACTIVATION.default
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
