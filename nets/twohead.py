"""Two-headed networks for AlphaZero-style search: a policy over all actions and a value.

``PolicyValueMLP`` (``pv_mlp``) reads ``game.encode`` (a flat vector): a dense trunk,
then a softmax policy head and a one-unit value head. ``PolicyValueResNet``
(``pv_resnet``) reads ``game.encode_planes`` (rows, cols, channels) of any game with a
2D board: a 3x3 convolution stem, residual blocks, and the AlphaGo Zero heads.

The loss is the policy's cross-entropy against the search's visit distribution plus the
value head's loss plus L2 weight decay (``l2``) on every kernel; ``value_head = "tanh"``
gives AlphaGo Zero's loss, (z - v)^2 - pi log p + c|theta|^2, with ``optimizer = "sgd"``
and ``momentum = 0.9`` its optimizer (stochastic gradient descent with momentum).
Whatever the value head, ``evaluate`` answers the win probability of the player to
move, in [0, 1] (a draw is 0.5), and ``fit`` takes value targets on that scale:
``value_head = "sigmoid"`` learns it directly with binary cross-entropy, ``"tanh"``
learns 2z-1 in [-1, 1] with mean squared error and is mapped back by (v+1)/2.

Neither net calls ``model.predict``. The MLP evaluates through a numpy pass built from
the Keras weights, like the ANET (``refresh`` rebuilds it after ``fit`` and ``load``).
The ResNet evaluates one state in numpy too (batch norm folded into the convolutions,
each convolution one matrix product over 3x3 patches: about 0.4 ms against 1.5 ms for a
compiled Keras call and 40 ms for an eager one), and a batch of two or more with one
call of ``model(x, training=False)`` compiled into a TensorFlow graph, which spreads the
convolutions over every core (on Keras's JAX backend: compiled by ``jax.jit``, on the GPU
where JAX has one; ``docs/speed.md`` has the figures). With ``HEXZERO_PRECISION=bfloat16``
(``batch_precision``) a batch goes instead through the folded trunk in bfloat16, one
TensorFlow graph (``tensorflow_trunk``), and the numpy heads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError
from hexzero.mctsfw.config import ConfigError
from hexzero.nets.keras_files import (
    KerasNetFile, check_model_name, has_model_name, read_settings,
)
from hexzero.mctsfw.game import Game, State
from hexzero.mctsfw.sampling import masked_policy
from hexzero.mctsfw.schema import Parameters, Setting
from hexzero.nets.anet import (
    ACTIVATION, HIDDEN_LAYERS, LEARNING_RATE, NUMPY_ACTIVATIONS, OPTIMIZER, OPTIMIZERS, SEED, NumpyMLP, _keras, conv3x3,
    describe_game,
)

VALUE_HEADS = ("sigmoid", "tanh")
#: the ResNet's heads: tied to one board size, or convolutions and pooling that fit any
HEADS = ("dense", "convolutional")


# ---- the precision of a batch's evaluation -------------------------------------------------
#: the environment variable that sets it for this process and the processes it starts (as
#: ``KERAS_BACKEND`` picks Keras's backend): the ResNet judges a batch of states in float32
#: (the default), in bfloat16 (its trunk: half the bits, a few times the speed where the
#: hardware multiplies bfloat16, a win probability off by a few hundredths), or "auto"
#: (bfloat16 where the CPU multiplies it in hardware: ``cpu_multiplies_bfloat16``)
PRECISION_VARIABLE = "HEXZERO_PRECISION"
PRECISIONS = ("float32", "bfloat16", "auto")


def cpu_multiplies_bfloat16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this machine's CPU multiplies bfloat16 in hardware (Intel's AMX or AVX-512
    BF16, as Linux lists its flags): elsewhere TensorFlow emulates bfloat16, slower than float32."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return False
    return bool(flags & {"amx_bf16", "avx512_bf16"})


def batch_precision(environ: dict | None = None) -> str:
    """The precision a batch of states is judged in: ``$HEXZERO_PRECISION`` ("float32" where
    unset; "auto" resolved). Any other value is refused, naming the variable."""
    value = (os.environ if environ is None else environ).get(PRECISION_VARIABLE, "") or "float32"
    if value not in PRECISIONS:
        raise ConfigError([f"{PRECISION_VARIABLE}={value!r}: one of {', '.join(PRECISIONS)}"], source="environment")
    if value == "auto":
        return "bfloat16" if cpu_multiplies_bfloat16() else "float32"
    return value


# ---- the value scale --------------------------------------------------------------------------
def value_targets(z: np.ndarray, value_head: str) -> np.ndarray:
    """Win probabilities ``z`` in [0, 1] as the value head learns them (tanh: 2z-1)."""
    z = np.asarray(z, dtype=np.float32)
    return 2.0 * z - 1.0 if value_head == "tanh" else z


def win_probability(v: np.ndarray, value_head: str) -> np.ndarray:
    """The value head's output back on the [0, 1] scale (tanh: (v+1)/2)."""
    v = np.asarray(v, dtype=np.float32)
    return (v + 1.0) * 0.5 if value_head == "tanh" else v


# ---- parameters shared by both nets ------------------------------------------------------------
VALUE_HEAD = Setting("value_head", "sigmoid", '"sigmoid": win probability, binary cross-entropy; "tanh": [-1, 1], '
                     "mean squared error", choices=VALUE_HEADS, ignore_case=True)
L2 = Setting("l2", 1e-4, "L2 weight decay; 0 for none", low=0)


def _momentum_problem(value: float) -> str | None:
    return None if value < 1 else f"must be below 1 (1 never forgets a gradient), not {value!r}"


MOMENTUM = Setting("momentum", 0.9, 'the momentum of optimizer = "sgd" (AlphaGo Zero: 0.9); the other optimizers '
                   "ignore it", low=0, high=1, check=_momentum_problem)


def _optimizer_settings(model) -> tuple[str, float, float | None] | None:
    """(optimizer name, learning rate, SGD's momentum or None) of a loaded, compiled model;
    None if saved uncompiled."""
    if model.optimizer is None:
        return None
    name = type(model.optimizer).__name__.lower()
    momentum = float(model.optimizer.get_config()["momentum"]) if name == "sgd" else None
    # stored in float32: str() gives back the short decimal the user wrote
    return name, float(str(np.asarray(model.optimizer.learning_rate, dtype=np.float32))), momentum


def _layer_l2(layer) -> float:
    regularizer = layer.get_config().get("kernel_regularizer")
    if not regularizer:
        return 0.0
    return float(str(np.float32(regularizer["config"]["l2"])))


def points_problem(game: Game) -> str | None:
    """Why a network with a logit per board point (and one for a pass) cannot play
    ``game``: its actions must be the points of its planes, row by row, and at most a
    pass after them. None when it can."""
    shape = PolicyValueResNet.encoding_shape(game)
    points = shape[0] * shape[1]
    passing = getattr(game, "pass_action", None) is not None
    if game.num_actions != points + passing:
        return (f"needs a game whose actions are its board's points{' and a pass' if passing else ''}: "
                f"{describe_game(game)} has {game.num_actions} actions on a {shape[0]}x{shape[1]} board")
    return None


# ---- the base class -------------------------------------------------------------------------------
class PolicyValueNet(KerasNetFile):
    """A Keras network with a policy head and a value head, evaluated in numpy.

    Subclasses set ``name``, ``input_kind`` ("flat" or "planes"), ``parameters`` (the
    declared constructor parameters), and implement ``_build_model``,
    ``_make_fast`` and ``_read_architecture``.
    """

    name = ""
    description = ""
    roles = ("policy", "policy_value")
    input_kind = "flat"
    #: the constructor's parameters (the ``[nets.<name>]`` table), each declared once
    parameters = Parameters()
    #: the auxiliary heads the net trains beside policy and value ("ownership", "score"):
    #: ``fit`` then needs their targets (``aux``)
    aux_heads: tuple[str, ...] = ()
    #: the search it plays best with, saved in its file (``mctsfw.checkpoints.play_settings``); None: not recorded
    play_settings: dict | None = None

    def _setup(self, game: Game, params: dict[str, Any]) -> None:
        problems = self.param_problems(params)
        if problems:
            raise ValueError(f"{self.name}: " + "; ".join(problems))
        self.game = game
        self.input_shape = self.encoding_shape(game)
        self.num_actions = game.num_actions
        self.optimizer = params["optimizer"].lower()
        self.learning_rate = float(params["learning_rate"])
        self.momentum = float(params["momentum"])
        self.value_head = params["value_head"].lower()
        self.l2 = float(params["l2"])
        seed = params["seed"]
        self.seed = None if seed is None or seed == -1 else int(seed)
        self.rng = np.random.default_rng(self.seed)

    def _finish(self) -> None:
        self.model = self._build_model()
        self._compile(self.model)
        self.refresh()

    # ---- parameters ---------------------------------------------------------------------------
    @classmethod
    def param_problems(cls, params: dict[str, Any]) -> list[str]:
        """Every problem with these constructor parameters (the ``[nets.<name>]`` table)."""
        return cls.parameters.problems(cls.name, params)

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild this net's architecture and optimizer."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({describe_game(self.game)}, {args})"

    # ---- encoding -------------------------------------------------------------------------------
    @classmethod
    def encoding_shape(cls, game: Game) -> tuple[int, ...]:
        """The shape of one encoded state of ``game`` for this net; ValueError if the game has none."""
        state = game.initial_state()
        if cls.input_kind == "flat":
            return tuple(np.shape(game.encode(state)))
        try:
            shape = tuple(np.shape(game.encode_planes(state)))
        except NotImplementedError:
            raise ValueError(
                f"the {cls.name} net needs a 2D encoding (encode_planes), which {describe_game(game)} does not offer"
            ) from None
        if len(shape) != 3:
            raise ValueError(f"the {cls.name} net needs planes (rows, cols, channels), but {describe_game(game)} encodes {shape}")
        return shape

    def encode(self, state: State) -> np.ndarray:
        """One state as this net reads it (``game.encode`` or ``game.encode_planes``)."""
        if self.input_kind == "flat":
            return self.game.encode(state)
        return self.game.encode_planes(state)

    def encode_batch(self, states: Sequence[State]) -> np.ndarray:
        """States stacked into a batch ``(B, *input_shape)``."""
        return self.encode_states(self.game, states)

    @classmethod
    def encode_states(cls, game: Game, states: Sequence[State]) -> np.ndarray:
        """``encode_batch`` without the weights: what a self-play worker whose network lives
        in a network server (``mctsfw.netserver``) sends there."""
        encode = game.encode if cls.input_kind == "flat" else game.encode_planes
        return np.stack([encode(state) for state in states]).astype(np.float32, copy=False)

    def _batch(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if x.ndim == len(self.input_shape):
            x = x[None]
        if x.shape[1:] != self.input_shape:
            shape = ", ".join(map(str, self.input_shape))
            raise ValueError(f"{self.name}: encoded states must have shape (B, {shape}), not {x.shape}")
        return x

    # ---- the Keras model ------------------------------------------------------------------------
    def _build_model(self):
        raise NotImplementedError

    def _initializer(self, i: int):
        keras = _keras()
        return keras.initializers.GlorotUniform(seed=None if self.seed is None else self.seed + i)

    def _regularizer(self):
        return _keras().regularizers.L2(self.l2) if self.l2 > 0 else None

    def _value_activation(self) -> str:
        return "tanh" if self.value_head == "tanh" else "sigmoid"

    def _optimizer_params(self) -> dict[str, Any]:
        """The optimizer's part of ``params()``: its name, learning rate, and SGD's momentum."""
        params = {"optimizer": self.optimizer, "learning_rate": self.learning_rate}
        if self.optimizer == "sgd":
            params["momentum"] = self.momentum
        return params

    def _compile(self, model) -> None:
        keras = _keras()
        extra = {"momentum": self.momentum} if self.optimizer == "sgd" else {}
        optimizer = getattr(keras.optimizers, OPTIMIZERS[self.optimizer])(learning_rate=self.learning_rate, **extra)
        value_loss = keras.losses.MeanSquaredError() if self.value_head == "tanh" else keras.losses.BinaryCrossentropy()
        losses = {"policy": keras.losses.CategoricalCrossentropy(), "value": value_loss}
        weights = {"policy": 1.0, "value": 1.0}
        for head in self.aux_heads:
            losses[head] = keras.losses.MeanSquaredError()
            weights[head] = float(self.aux_weights[head])
        model.compile(optimizer=optimizer, loss=losses, loss_weights=weights if self.aux_heads else None)
        # built now, so that a net saved before training loads back without optimizer warnings
        model.optimizer.build(model.trainable_variables)

    def refresh(self) -> None:
        """Rebuild the numpy evaluation from the Keras weights (after any change to them)."""
        self.fast = self._make_fast(self.model)

    def _make_fast(self, model) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """A numpy function from a batch to (policy logits (B, A), value head outputs (B,))."""
        raise NotImplementedError

    def _heads(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(softmax policy, value head outputs) for a batch."""
        logits, v = self.fast(x)
        return NUMPY_ACTIVATIONS["softmax"](logits), v

    # ---- inference ------------------------------------------------------------------------------
    def evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(probs (B, num_actions), values (B,))`` for encoded states ``(B, ...)`` or one state.

        ``probs`` is a softmax over all actions (masking is the caller's job); ``values`` is
        the win probability of the player to move, in [0, 1], whatever the value head.
        """
        probs, v = self._heads(self._batch(x))
        return probs, win_probability(v, self.value_head)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Just the policy (a rollout policy or a raw-network actor needs no value)."""
        return self._heads(self._batch(x))[0]

    def policy(self, state: State) -> np.ndarray:
        """The probabilities of the legal actions of ``state`` (illegal ones 0), summing to 1."""
        return masked_policy(self.forward(self.encode(state))[0], self.game.legal_mask(state))

    # ---- training -------------------------------------------------------------------------------
    def fit(self, x: np.ndarray, pi: np.ndarray, z: np.ndarray | None = None, batch_size: int = 64,
            epochs: int = 1, aux: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
        """Train on encoded states ``x`` against visit distributions ``pi`` (B, num_actions)
        and value targets ``z`` (B,) in [0, 1] for the player to move (1 win, 0.5 draw, 0 loss).

        Returns the last epoch's means as Keras measured them during that epoch: ``loss``
        (policy + value + weight decay), ``policy_loss`` (cross-entropy) and ``value_loss``
        (binary cross-entropy, or for the tanh head the squared error on the [-1, 1]
        scale), and the optimizer's ``learning_rate`` (for the run's curves). The cases are
        shuffled once by the net's own seeded generator.

        A net with auxiliary heads (``aux_heads``) needs their targets in ``aux``:
        ``"ownership"`` (B, points: the game's ``ownership`` from the view of the player to
        move, +1 theirs, -1 the opponent's; a wider array's first columns are taken) and
        ``"score"`` (B,: the final score for the player to move); each head's loss comes
        back as ``ownership_loss`` / ``score_loss``.
        """
        if z is None:
            raise ValueError(f"the {self.name} net trains a value head: fit needs value targets z")
        x = np.asarray(x, dtype=np.float32)
        pi = np.asarray(pi, dtype=np.float32)
        z = np.asarray(z, dtype=np.float32)
        if x.ndim != 1 + len(self.input_shape) or x.shape[1:] != self.input_shape:
            raise ValueError(f"x must have shape (cases, {', '.join(map(str, self.input_shape))}), not {x.shape}")
        if pi.shape != (len(x), self.num_actions):
            raise ValueError(f"pi must have shape ({len(x)}, {self.num_actions}), not {pi.shape}")
        if z.shape != (len(x),):
            raise ValueError(f"z must have shape ({len(x)},), not {z.shape}")
        if len(x) == 0:
            raise ValueError("nothing to train on: x is empty")
        if not ((z >= 0) & (z <= 1)).all():
            raise ValueError("z must hold win probabilities in [0, 1] (1 win, 0.5 draw, 0 loss)")
        order = self.rng.permutation(len(x))
        targets = {"policy": pi[order], "value": value_targets(z[order], self.value_head)[:, None]}
        targets.update(self._aux_targets(aux, len(x), order))
        history = self.model.fit(
            x[order], targets, batch_size=int(batch_size), epochs=int(epochs), shuffle=False, verbose=0
        ).history
        self.refresh()
        return {
            "loss": float(history["loss"][-1]),
            "policy_loss": float(history["policy_loss"][-1]),
            "value_loss": float(history["value_loss"][-1]),
            **{f"{head}_loss": float(history[f"{head}_loss"][-1]) for head in self.aux_heads},
            "learning_rate": float(str(np.asarray(self.model.optimizer.learning_rate, dtype=np.float32))),
            "cases": int(len(x)),
            "epochs": int(epochs),
        }

    def _aux_targets(self, aux: dict[str, np.ndarray] | None, cases: int, order: np.ndarray) -> dict[str, np.ndarray]:
        """The auxiliary heads' targets for ``fit``, shuffled by ``order``."""
        if not self.aux_heads:
            return {}
        missing = [head for head in self.aux_heads if aux is None or head not in aux]
        if missing:
            raise ValueError(f"the {self.name} net trains the {' and '.join(missing)} head(s): fit needs their "
                             "targets (aux)")
        targets = {}
        if "ownership" in self.aux_heads:
            points = self.input_shape[0] * self.input_shape[1]
            owned = np.asarray(aux["ownership"], dtype=np.float32)
            if owned.ndim != 2 or owned.shape[0] != cases or owned.shape[1] < points:
                raise ValueError(f"ownership targets must have shape ({cases}, {points}), not {owned.shape}")
            targets["ownership"] = owned[order, :points]
        if "score" in self.aux_heads:
            score = np.asarray(aux["score"], dtype=np.float32)
            if score.shape != (cases,):
                raise ValueError(f"score targets must have shape ({cases},), not {score.shape}")
            targets["score"] = (score[order] / self.score_scale)[:, None]
        return targets

    def set_learning_rate(self, learning_rate: float) -> None:
        """Train on with this learning rate (the optimizer keeps its state: Adam's moments, SGD's momentum)."""
        self.model.optimizer.learning_rate.assign(float(learning_rate))
        self.learning_rate = float(learning_rate)

    # ---- files ----------------------------------------------------------------------------------
    @classmethod
    def can_load(cls, path: str | Path) -> bool:
        """Whether ``path`` is a ``.keras`` file saved by this net (a look at its config; no TensorFlow)."""
        return has_model_name(path, cls.name)

    @classmethod
    def load(cls, path: str | Path, game: Game) -> "PolicyValueNet":
        """The net saved at ``path``, for ``game``; ``ModelFileError`` says what is wrong otherwise."""
        path = Path(path)
        check_model_name(path, cls.name, cls.name)
        try:
            encoded = cls.encoding_shape(game)
        except ValueError as error:
            raise ModelFileError(f"{path}: {error}") from None
        keras = _keras()
        try:
            model = keras.models.load_model(path)
        except Exception as error:
            raise ModelFileError(f"{path}: cannot be read as a Keras model ({type(error).__name__}: {error})") from None
        outputs = model.output_shape
        if not (isinstance(outputs, list) and 2 <= len(outputs) <= 4):
            raise ModelFileError(f"{path}: not a two-headed model (outputs {outputs})")
        problem = cls._game_problem(model, encoded, game)
        if problem:
            raise ModelFileError(f"{path}: {problem}")
        net = cls.__new__(cls)
        try:
            net._adopt(game, model)
        except (ValueError, KeyError, IndexError) as error:
            raise ModelFileError(f"{path}: not a network the {cls.name} net can run ({error})") from None
        net.play_settings = read_settings(path).get("search")
        return net

    @classmethod
    def _game_problem(cls, model, encoded: tuple[int, ...], game: Game) -> str | None:
        """Why ``model`` cannot play ``game`` (whose states this net encodes as ``encoded``), or None."""
        expected = tuple(model.input_shape[1:])
        if len(expected) == 3 and expected[:2] == (None, None):  # convolutional heads: any board size
            return cls._any_size_problem(model, expected[2], encoded, game)
        if expected != encoded:
            expects, encodes = cls._describe_shape(expected), cls._describe_shape(encoded)
            return f"expects {expects} but {describe_game(game)} encodes {encodes}"
        actions = model.output_shape[0][-1]
        if actions is not None and actions != game.num_actions:
            return f"has {actions} policy outputs but {describe_game(game)} has {game.num_actions} actions"
        return None

    def for_game(self, game: Game) -> "PolicyValueNet":
        """This network playing ``game`` (another board size, for a ResNet with convolutional
        heads): the same Keras model, so its weights and optimizer are shared and training
        either trains both. ValueError says why it cannot."""
        problem = self._game_problem(self.model, self.encoding_shape(game), game)
        if problem:
            raise ValueError(f"{self.name}: {problem}")
        twin = type(self).__new__(type(self))
        twin._adopt(game, self.model)
        twin.play_settings = self.play_settings
        return twin

    @staticmethod
    def _any_size_problem(model, planes: int, encoded: tuple[int, ...], game: Game) -> str | None:
        """Why a network of every board size cannot play ``game``, or None."""
        if planes != encoded[-1]:
            return f"expects {planes} planes a point (any board size) but {describe_game(game)} encodes {encoded[-1]}"
        problem = points_problem(game)
        if problem:
            return f"a network with a logit a point {problem}"
        has_pass = "policy_pass" in {layer.name for layer in model.layers}
        if has_pass != (getattr(game, "pass_action", None) is not None):
            return (f"its policy {'has' if has_pass else 'has no'} pass, but {describe_game(game)} "
                    f"{'has none' if has_pass else 'has one'}")
        return None

    @staticmethod
    def _describe_shape(shape: tuple[int, ...]) -> str:
        return f"{shape[0]} inputs" if len(shape) == 1 else f"planes of shape {shape}"

    def _adopt(self, game: Game, model) -> None:
        """Take over a loaded model: read the architecture, value head and optimizer back."""
        self.game = game
        self.model = model
        self.input_shape = self.encoding_shape(game)  # the model's own, or the game's board for any-size heads
        self.num_actions = game.num_actions
        self.seed = None
        self.rng = np.random.default_rng()
        activation = model.get_layer("value").get_config()["activation"]
        if activation not in VALUE_HEADS:
            raise ValueError(f"the value layer's activation is {activation!r}")
        self.value_head = activation
        names = {layer.name for layer in model.layers}
        self.l2 = _layer_l2(model.get_layer("policy_points" if "policy_points" in names else "policy"))
        self._read_architecture(model)
        settings = _optimizer_settings(model)
        self.momentum = self.parameters.default("momentum")
        if settings is None:  # saved uncompiled: train with the defaults
            self.optimizer, self.learning_rate = self.parameters.default("optimizer"), self.parameters.default("learning_rate")
            self._compile(model)
        else:
            self.optimizer, self.learning_rate, momentum = settings
            if momentum is not None:
                self.momentum = momentum
        self.refresh()

    def _read_architecture(self, model) -> None:
        raise NotImplementedError


# ---- the MLP ----------------------------------------------------------------------------------------
class NumpyPolicyValueMLP:
    """A dense trunk (``NumpyMLP``) and both heads as one matrix product: policy logits, then the value."""

    def __init__(
        self,
        trunk: NumpyMLP,
        policy: tuple[np.ndarray, np.ndarray],
        value: tuple[np.ndarray, np.ndarray],
        value_activation: str,
    ):
        self.trunk = trunk
        self.num_actions = policy[0].shape[1]
        self.W = np.ascontiguousarray(np.concatenate([policy[0], value[0]], axis=1), dtype=np.float32)
        self.b = np.concatenate([policy[1], value[1]]).astype(np.float32)
        self.value_activation = NUMPY_ACTIVATIONS[value_activation]

    @classmethod
    def from_keras(cls, model) -> "NumpyPolicyValueMLP":
        hidden = []
        for layer in model.layers:
            kind = type(layer).__name__
            if kind == "InputLayer" or layer.name in ("policy", "value"):
                continue
            if kind != "Dense":
                raise ValueError(f"layer {layer.name!r} is a {kind}; the numpy pass takes Dense layers only")
            kernel, bias = layer.get_weights()
            hidden.append((kernel, bias, layer.get_config()["activation"]))
        policy, value = model.get_layer("policy"), model.get_layer("value")
        return cls(NumpyMLP(hidden), tuple(policy.get_weights()), tuple(value.get_weights()), value.get_config()["activation"])

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = self.trunk(x) @ self.W
        out += self.b
        a = self.num_actions
        return out[:, :a], self.value_activation(np.ascontiguousarray(out[:, a]))


class PolicyValueMLP(PolicyValueNet):
    """A dense trunk with a softmax policy head and a one-unit value head; reads ``game.encode``."""

    name = "pv_mlp"
    description = "two-headed MLP (policy + value; numpy inference): hidden_layers, activation, optimizer, value_head, l2"
    input_kind = "flat"
    parameters = Parameters(HIDDEN_LAYERS, ACTIVATION, OPTIMIZER, LEARNING_RATE, MOMENTUM, VALUE_HEAD, L2, SEED)

    @staticmethod
    def device() -> str:
        """The CPU, whatever Keras's device: its evaluation is a numpy pass (so self-play's
        ``net_server = "auto"`` leaves it in every worker, where it is faster: docs/speed.md)."""
        return "CPU"

    def __init__(
        self,
        game: Game,
        hidden_layers: Sequence[int] = parameters.default("hidden_layers"),
        activation: str = parameters.default("activation"),
        optimizer: str = parameters.default("optimizer"),
        learning_rate: float = parameters.default("learning_rate"),
        momentum: float = parameters.default("momentum"),
        value_head: str = parameters.default("value_head"),
        l2: float = parameters.default("l2"),
        seed: int | None = None,
    ):
        params = dict(
            hidden_layers=hidden_layers, activation=activation, optimizer=optimizer, learning_rate=learning_rate,
            momentum=momentum, value_head=value_head, l2=l2, seed=seed,
        )  # fmt: skip
        self._setup(game, params)
        self.hidden_layers = tuple(int(u) for u in hidden_layers)
        self.activation = activation.lower()
        self._finish()

    def params(self) -> dict[str, Any]:
        return {
            "hidden_layers": list(self.hidden_layers),
            "activation": self.activation,
            **self._optimizer_params(),
            "value_head": self.value_head,
            "l2": self.l2,
        }

    def _build_model(self):
        keras = _keras()
        x = inputs = keras.Input(shape=self.input_shape, name="state")
        for i, units in enumerate(self.hidden_layers):
            x = keras.layers.Dense(
                units, activation=self.activation, kernel_initializer=self._initializer(i),
                kernel_regularizer=self._regularizer(), name=f"hidden_{i + 1}",
            )(x)  # fmt: skip
        n = len(self.hidden_layers)
        policy = keras.layers.Dense(
            self.num_actions, activation="softmax", kernel_initializer=self._initializer(n),
            kernel_regularizer=self._regularizer(), name="policy",
        )(x)  # fmt: skip
        value = keras.layers.Dense(
            1, activation=self._value_activation(), kernel_initializer=self._initializer(n + 1),
            kernel_regularizer=self._regularizer(), name="value",
        )(x)  # fmt: skip
        return keras.Model(inputs, [policy, value], name=self.name)

    def _make_fast(self, model):
        return NumpyPolicyValueMLP.from_keras(model)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """The policy logits: ordered as ``forward`` but without the softmax (greedy rollouts)."""
        return self.fast(self._batch(x))[0]

    def _read_architecture(self, model) -> None:
        hidden = [layer for layer in model.layers if type(layer).__name__ == "Dense" and layer.name not in ("policy", "value")]
        self.hidden_layers = tuple(int(layer.units) for layer in hidden)
        self.activation = hidden[0].get_config()["activation"] if hidden else self.parameters.default("activation")


# ---- the residual CNN --------------------------------------------------------------------------------
def _fold_batch_norm(kernel: np.ndarray, bn) -> tuple[np.ndarray, np.ndarray]:
    """A bias-free convolution followed by inference-mode batch norm, as one convolution with a bias."""
    gamma, beta, mean, variance = (np.asarray(w, dtype=np.float64) for w in bn.get_weights())
    scale = gamma / np.sqrt(variance + bn.epsilon)
    return (kernel * scale).astype(np.float32), (beta - mean * scale).astype(np.float32)


def pooled(x: np.ndarray) -> np.ndarray:
    """Each channel's mean and maximum over the board: (B, H, W, C) -> (B, 2C), as Keras's
    global average and max pooling concatenated."""
    return np.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2))], axis=1)


class NumpyResNet:
    """The ResNet in inference mode, batch norm folded into the convolutions; with
    ``convolutional`` heads the policy's logits come from a 1x1 convolution per point (the
    pass, where there is one, from the pooled policy features) and the value from the
    trunk's pooled features, so it runs on any board size."""

    def __init__(self, model, blocks: int, value_activation: str, global_pooling: bool = False,
                 convolutional: bool = False):
        def conv_bn(conv: str, bn: str) -> tuple[np.ndarray, np.ndarray]:
            kernel = model.get_layer(conv).get_weights()[0]  # (kh, kw, in, out)
            folded, bias = _fold_batch_norm(kernel, model.get_layer(bn))
            return np.ascontiguousarray(folded.reshape(-1, folded.shape[-1])), bias

        self.stem = conv_bn("stem_conv", "stem_bn")
        self.blocks = [
            (conv_bn(f"block{i}_conv1", f"block{i}_bn1"), conv_bn(f"block{i}_conv2", f"block{i}_bn2"),
             [np.asarray(w, dtype=np.float32) for w in model.get_layer(f"block{i}_pool").get_weights()]
             if global_pooling else None)
            for i in range(1, blocks + 1)
        ]
        def weights(name: str) -> list[np.ndarray]:
            return [np.asarray(w, dtype=np.float32) for w in model.get_layer(name).get_weights()]

        self.convolutional = convolutional
        self.value_hidden, self.value = weights("value_hidden"), weights("value")
        self.value_activation = NUMPY_ACTIVATIONS[value_activation]
        if convolutional:
            self.policy_conv = conv_bn("policy_conv", "policy_bn")
            kernel, bias = weights("policy_points")
            self.points = (kernel.reshape(-1), float(bias[0]))
            names = {layer.name for layer in model.layers}
            self.pass_weights = weights("policy_pass") if "policy_pass" in names else None
            return
        (pk, pb), (vk, vb) = conv_bn("policy_conv", "policy_bn"), conv_bn("value_conv", "value_bn")
        self.policy_filters = pk.shape[1]
        self.head_kernel = np.ascontiguousarray(np.concatenate([pk, vk], axis=1))  # both 1x1 convolutions at once
        self.head_bias = np.concatenate([pb, vb])
        self.policy = weights("policy")

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.heads(self.trunk(x))

    def heads(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(policy logits, value head outputs) from the trunk's features (float32)."""
        if self.convolutional:
            return self._convolutional_heads(h)
        return self._dense_heads(h)

    def _value(self, features: np.ndarray) -> np.ndarray:
        relu = NUMPY_ACTIVATIONS["relu"]
        v = features @ self.value_hidden[0]
        v += self.value_hidden[1]
        v = relu(v) @ self.value[0]
        v += self.value[1]
        return self.value_activation(v[:, 0].copy())

    def _convolutional_heads(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B, H, W, C = h.shape
        kernel, bias = self.policy_conv
        p = NUMPY_ACTIVATIONS["relu"](h.reshape(-1, C) @ kernel + bias).reshape(B, H, W, -1)
        logits = p.reshape(B, H * W, -1) @ self.points[0]  # a 1x1 convolution to one logit a point, row by row
        logits += self.points[1]
        if self.pass_weights is not None:
            passing = pooled(p) @ self.pass_weights[0]
            passing += self.pass_weights[1]
            logits = np.concatenate([logits, passing], axis=1)
        return logits, self._value(pooled(h))

    def trunk(self, x: np.ndarray) -> np.ndarray:
        """The stem and the residual blocks: (B, H, W, planes) -> (B, H, W, filters)."""
        relu = NUMPY_ACTIVATIONS["relu"]
        h = relu(conv3x3(x, *self.stem))
        for first, second, pool in self.blocks:
            r = relu(conv3x3(h, *first))
            if pool is not None:  # global pooling: each channel's mean and maximum, a dense layer, a bias per channel
                bias = pooled(r) @ pool[0]
                bias += pool[1]
                r = r + bias[:, None, None, :]
            r = conv3x3(r, *second)
            r += h
            h = relu(r)
        return h

    def _dense_heads(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        relu = NUMPY_ACTIVATIONS["relu"]
        B = len(h)
        heads = h.reshape(-1, h.shape[-1]) @ self.head_kernel
        heads += self.head_bias
        relu(heads)
        heads = heads.reshape(B, -1, heads.shape[-1])  # (B, H*W, policy_filters + value_filters)
        pf = self.policy_filters
        logits = heads[:, :, :pf].reshape(B, -1) @ self.policy[0]  # Flatten's order: row, col, channel
        logits += self.policy[1]
        return logits, self._value(heads[:, :, pf:].reshape(B, -1))


def tensorflow_trunk(fast: NumpyResNet, dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    """``fast.trunk`` (batch norm folded) as one TensorFlow graph computed in ``dtype``
    ("bfloat16": oneDNN's bfloat16 convolutions where the CPU has AMX or AVX-512 BF16),
    float32 in and out, for boards of any size: the batched pass of ``HEXZERO_PRECISION``."""
    import tensorflow as tf

    kind = tf.as_dtype(dtype)

    def conv(weights: tuple[np.ndarray, np.ndarray]):
        kernel, bias = weights  # (9 * in, out): the (3, 3, in, out) kernel in row order
        return tf.constant(kernel.reshape(3, 3, -1, kernel.shape[1]), kind), tf.constant(bias, kind)

    def apply(h, weights):
        return tf.nn.bias_add(tf.nn.conv2d(h, weights[0], 1, "SAME"), weights[1])

    stem = conv(fast.stem)
    blocks = [(conv(first), conv(second), None if pool is None else tuple(tf.constant(w, kind) for w in pool))
              for first, second, pool in fast.blocks]

    @tf.function(input_signature=[tf.TensorSpec((None, None, None, fast.stem[0].shape[0] // 9), tf.float32)])
    def trunk(x):
        h = tf.nn.relu(apply(tf.cast(x, kind), stem))
        for first, second, pool in blocks:
            r = tf.nn.relu(apply(h, first))
            if pool is not None:  # (``NumpyResNet.trunk``: each channel's mean and maximum bias every point)
                features = tf.concat([tf.reduce_mean(r, axis=(1, 2)), tf.reduce_max(r, axis=(1, 2))], axis=1)
                r = r + (tf.matmul(features, pool[0]) + pool[1])[:, None, None, :]
            h = tf.nn.relu(apply(r, second) + h)
        return tf.cast(h, tf.float32)

    return lambda x: trunk(x).numpy()


def jax_call(model) -> Callable[[np.ndarray], list]:
    """``model(x, training=False)`` compiled by ``jax.jit`` (Keras on JAX): the stateless
    call with the model's current weights, batches padded with zeros to the next power of
    two (at least 8) and the answers cut back to the batch's rows."""
    import jax

    run = jax.jit(lambda trainable, fixed, x: model.stateless_call(trainable, fixed, x, training=False)[0])

    def call(x: np.ndarray) -> list:
        n = len(x)
        size = max(8, 1 << (n - 1).bit_length())
        if size != n:
            x = np.concatenate([x, np.zeros((size - n, *x.shape[1:]), dtype=x.dtype)])
        outputs = run([v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables],
                      np.asarray(x, dtype=np.float32))
        return [np.asarray(out)[:n] for out in outputs]

    return call


class PolicyValueResNet(PolicyValueNet):
    """A residual CNN with AlphaGo Zero heads; reads ``game.encode_planes`` (any 2D board)."""

    name = "pv_resnet"
    description = "two-headed residual CNN for 2D boards (numpy inference): blocks, filters, optimizer, value_head, l2"
    input_kind = "planes"
    parameters = Parameters(
        Setting("blocks", 4, "residual blocks", low=0, hint="residual blocks"),
        Setting("filters", 64, "3x3 filters per convolution", low=1, hint="channels of the trunk"),
        Setting("policy_filters", 2, "1x1 filters of the policy head", low=1,
                hint="channels of the policy head's 1x1 convolution"),
        Setting("value_filters", 1, "1x1 filters of the value head", low=1,
                hint="channels of the value head's 1x1 convolution"),
        Setting("value_hidden", 64, "dense units of the value head", low=1, hint="units of the value head's hidden layer"),
        Setting("heads", "dense", '"dense": AlphaGo Zero\'s heads, dense layers over the flattened board (one board '
                'size); "convolutional": the policy\'s logits from a 1x1 convolution per point (Go\'s pass from the '
                "pooled policy features), the value from the trunk's mean and maximum over the board (value_filters "
                "unused), so one file plays every board size of its game (KataGo)", choices=HEADS),
        Setting("global_pooling", False, "KataGo's global pooling: in every residual block the mean and the maximum "
                "of each channel after the first convolution, through a dense layer, bias every point of the second "
                "(the whole board's state reaches each point at once)"),
        Setting("ownership_weight", 0.0, "KataGo's ownership head: the weight of its loss, the squared error of each "
                "point's owner at the game's end (+1 the player to move's, -1 the opponent's; Go); 0 = no such head",
                low=0),
        Setting("score_weight", 0.0, "KataGo's score head: the weight of its loss, the squared error of the final "
                "score (area less komi, for the player to move) over the number of points (Go); 0 = no such head",
                low=0),
        OPTIMIZER, LEARNING_RATE, MOMENTUM, VALUE_HEAD, L2, SEED,
    )
    #: batch norm's moving averages follow training quickly: self-play trains only a few steps per generation
    BN_MOMENTUM = 0.9
    #: batches up to this size run through numpy (one state: about 0.4 ms against 1.5 ms for the
    #: compiled Keras call); larger ones through TensorFlow, which uses every core for the convolutions
    numpy_max_batch = 1

    def __init__(
        self,
        game: Game,
        blocks: int = parameters.default("blocks"),
        filters: int = parameters.default("filters"),
        policy_filters: int = parameters.default("policy_filters"),
        value_filters: int = parameters.default("value_filters"),
        value_hidden: int = parameters.default("value_hidden"),
        heads: str = parameters.default("heads"),
        global_pooling: bool = parameters.default("global_pooling"),
        ownership_weight: float = parameters.default("ownership_weight"),
        score_weight: float = parameters.default("score_weight"),
        optimizer: str = parameters.default("optimizer"),
        learning_rate: float = parameters.default("learning_rate"),
        momentum: float = parameters.default("momentum"),
        value_head: str = parameters.default("value_head"),
        l2: float = parameters.default("l2"),
        seed: int | None = None,
    ):
        params = dict(
            blocks=blocks, filters=filters, policy_filters=policy_filters, value_filters=value_filters,
            value_hidden=value_hidden, heads=heads, global_pooling=global_pooling, ownership_weight=ownership_weight,
            score_weight=score_weight, optimizer=optimizer, learning_rate=learning_rate, momentum=momentum,
            value_head=value_head, l2=l2, seed=seed,
        )  # fmt: skip
        self._setup(game, params)
        self.blocks, self.filters = int(blocks), int(filters)
        self.policy_filters, self.value_filters, self.value_hidden = int(policy_filters), int(value_filters), int(value_hidden)
        self.heads = heads
        self.global_pooling = bool(global_pooling)
        if heads == "convolutional" and (problem := points_problem(game)):
            raise ValueError(f"pv_resnet: heads = \"convolutional\" {problem}")
        self._set_aux({"ownership": float(ownership_weight), "score": float(score_weight)})
        self._finish()

    def _set_aux(self, weights: dict[str, float]) -> None:
        """The auxiliary heads: those of a weight above 0."""
        self.aux_weights = weights
        self.aux_heads = tuple(head for head in ("ownership", "score") if weights[head] > 0)

    @property
    def score_scale(self) -> float:
        """The score head learns the score over this: the board's points."""
        return float(self.input_shape[0] * self.input_shape[1])

    def params(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "filters": self.filters,
            "policy_filters": self.policy_filters,
            "value_filters": self.value_filters,
            "value_hidden": self.value_hidden,
            "heads": self.heads,
            "global_pooling": self.global_pooling,
            "ownership_weight": self.aux_weights["ownership"],
            "score_weight": self.aux_weights["score"],
            **self._optimizer_params(),
            "value_head": self.value_head,
            "l2": self.l2,
        }

    def _build_model(self):
        keras = _keras()
        layers = keras.layers
        count = iter(range(10**6))  # one initializer seed per layer with weights

        def conv_bn(x, filters: int, size: int, name: str, bn: str):
            x = layers.Conv2D(
                filters, size, padding="same", use_bias=False, kernel_initializer=self._initializer(next(count)),
                kernel_regularizer=self._regularizer(), name=name,
            )(x)  # fmt: skip
            return layers.BatchNormalization(momentum=self.BN_MOMENTUM, name=bn)(x)

        def pool(x, name: str):  # each channel's mean and maximum over the board, whatever its size
            return layers.Concatenate(name=f"{name}_pooled")([
                layers.GlobalAveragePooling2D(name=f"{name}_mean")(x), layers.GlobalMaxPooling2D(name=f"{name}_max")(x)])

        def dense(x, units: int, activation: str, name: str):
            return layers.Dense(
                units, activation=activation, kernel_initializer=self._initializer(next(count)),
                kernel_regularizer=self._regularizer(), name=name,
            )(x)  # fmt: skip

        convolutional = self.heads == "convolutional"
        # convolutional heads take boards of any size: the rows and columns are left open
        shape = (None, None, self.input_shape[2]) if convolutional else self.input_shape
        inputs = keras.Input(shape=shape, name="planes")
        h = layers.ReLU(name="stem_relu")(conv_bn(inputs, self.filters, 3, "stem_conv", "stem_bn"))
        for i in range(1, self.blocks + 1):
            r = layers.ReLU(name=f"block{i}_relu1")(conv_bn(h, self.filters, 3, f"block{i}_conv1", f"block{i}_bn1"))
            if self.global_pooling:  # each channel's mean and maximum over the board bias every point
                pooled = layers.Concatenate(name=f"block{i}_pooled")([
                    layers.GlobalAveragePooling2D(name=f"block{i}_mean")(r),
                    layers.GlobalMaxPooling2D(name=f"block{i}_max")(r)])
                bias = layers.Reshape((1, 1, self.filters), name=f"block{i}_bias")(
                    dense(pooled, self.filters, "linear", f"block{i}_pool"))
                r = layers.Add(name=f"block{i}_biased")([r, bias])
            r = conv_bn(r, self.filters, 3, f"block{i}_conv2", f"block{i}_bn2")
            h = layers.ReLU(name=f"block{i}_relu2")(layers.Add(name=f"block{i}_add")([h, r]))
        p = layers.ReLU(name="policy_relu")(conv_bn(h, self.policy_filters, 1, "policy_conv", "policy_bn"))
        if convolutional:
            points = layers.Conv2D(1, 1, kernel_initializer=self._initializer(next(count)),
                                   kernel_regularizer=self._regularizer(), name="policy_points")(p)
            logits = layers.Reshape((-1,), name="policy_flatten")(points)  # row by row: action row*size + col
            if getattr(self.game, "pass_action", None) is not None:
                passing = dense(pool(p, "policy"), 1, "linear", "policy_pass")
                logits = layers.Concatenate(name="policy_logits")([logits, passing])
            policy = layers.Softmax(name="policy")(logits)
            v = dense(pool(h, "value"), self.value_hidden, "relu", "value_hidden")
        else:
            policy = dense(layers.Flatten(name="policy_flatten")(p), self.num_actions, "softmax", "policy")
            v = layers.ReLU(name="value_relu")(conv_bn(h, self.value_filters, 1, "value_conv", "value_bn"))
            v = dense(layers.Flatten(name="value_flatten")(v), self.value_hidden, "relu", "value_hidden")
        value = dense(v, 1, self._value_activation(), "value")
        outputs = [policy, value]
        if "ownership" in self.aux_heads:
            owned = layers.Conv2D(1, 1, activation="tanh", kernel_initializer=self._initializer(next(count)),
                                  kernel_regularizer=self._regularizer(), name="ownership_conv")(h)
            outputs.append(layers.Flatten(name="ownership")(owned))
        if "score" in self.aux_heads:
            outputs.append(dense(v, 1, "linear", "score"))
        return keras.Model(inputs, outputs, name=self.name)

    def _make_fast(self, model):
        return NumpyResNet(model, self.blocks, self._value_activation(), self.global_pooling,
                           convolutional=self.heads == "convolutional")

    def _heads(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(x) <= self.numpy_max_batch:
            return super()._heads(x)
        trunk = self._reduced_trunk()
        if trunk is not None:  # the trunk in bfloat16, the heads in numpy (float32)
            logits, v = self.fast.heads(trunk(x))
            return NUMPY_ACTIVATIONS["softmax"](logits), v
        probs, v = self._keras_call()(x)[:2]  # the auxiliary heads are for training only
        to_numpy = _keras().ops.convert_to_numpy  # from the backend's device (a GPU tensor of torch's too)
        return to_numpy(probs).astype(np.float32), to_numpy(v).astype(np.float32)[:, 0]

    def _reduced_trunk(self):
        """The trunk in ``batch_precision()`` where that is not float32 and Keras runs on
        TensorFlow (``tensorflow_trunk``, made again whenever ``refresh`` remade the numpy
        pass); else None: the Keras model in float32."""
        if getattr(self, "_reduced", (None,))[0] is not self.fast:
            precision = batch_precision()
            use = precision != "float32" and _keras().backend.backend() == "tensorflow"
            self._reduced = (self.fast, tensorflow_trunk(self.fast, precision) if use else None)
        return self._reduced[1]

    def _keras_call(self):
        """``model(x, training=False)``, compiled once per model: one call for the whole batch
        without eager Keras's per-layer overhead, on the backend's device (a GPU where it has
        one). TensorFlow: a graph for any batch size. JAX: ``jax.jit`` of the model's
        stateless call, fed its current weights at every call (so training shows at once)
        and batches padded to a power of two, so that a search's varying batches compile a
        handful of times, not once per size. Another backend calls the model eagerly."""
        if getattr(self, "_compiled_for", None) is not self.model:
            model = self.model
            backend = _keras().backend.backend()
            if backend == "tensorflow":
                import tensorflow as tf

                spec = tf.TensorSpec((None, *self.input_shape), tf.float32)
                self._compiled = tf.function(lambda x: model(x, training=False), input_signature=[spec])
            elif backend == "jax":
                self._compiled = jax_call(model)
            else:
                self._compiled = lambda x: model(x, training=False)
            self._compiled_for = model
        return self._compiled

    def _read_architecture(self, model) -> None:
        names = {layer.name for layer in model.layers}
        blocks = 0
        while f"block{blocks + 1}_conv1" in names:
            blocks += 1
        self.blocks = blocks
        self.filters = int(model.get_layer("stem_conv").filters)
        self.policy_filters = int(model.get_layer("policy_conv").filters)
        self.value_hidden = int(model.get_layer("value_hidden").units)
        self.heads = "convolutional" if "policy_points" in names else "dense"
        self.value_filters = int(model.get_layer("value_conv").filters) if "value_conv" in names \
            else self.parameters.default("value_filters")
        self.global_pooling = "block1_pool" in names
        compiled = (model.get_compile_config() or {}) if model.optimizer is not None else {}
        saved = compiled.get("loss_weights") or {}
        self._set_aux({head: float(saved.get(head, 1.0)) if head in names else 0.0 for head in ("ownership", "score")})


@mctsfw.hookimpl
def mctsfw_register_nets():
    return [PolicyValueMLP, PolicyValueResNet]
