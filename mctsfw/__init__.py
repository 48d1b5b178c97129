"""hexzero's core: plugin hooks, registries, config, the generic MCTS engine and actors.

The public API::

    from hexzero import mctsfw
    game = mctsfw.make_game("hex", size=5)
    agent = mctsfw.make_actor("mcts", game, search_games=1000, c=1.4, seed=1)
    state = game.initial_state()
    state = game.next_state(state, agent.select_action(state))

    # a saved network carries its game and the search it plays best with
    game = mctsfw.make_model_game("models/go9/pv_resnet_gen0010.keras")
    agent = mctsfw.make_actor("models/go9/pv_resnet_gen0010.keras", game, time_limit=1.0)
"""

if __name__ != "hexzero.mctsfw":  # in a checkout the folder is also importable as plain mctsfw: one copy only
    raise ImportError("mctsfw is part of hexzero: import hexzero.mctsfw")

import os

# Search multiplies tiny matrices (a batch of leaves by a layer): BLAS threads only add
# contention there, measured 16x slower with 2 threads on a busy 2-core machine. Set
# before numpy loads; a value the user chose is kept.
for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
# TensorFlow's start-up notices (oneDNN, CPU instructions, absl's "log messages before
# InitializeLog") are not the user's business; its errors still show. Set before
# TensorFlow loads (nets import it on first use); a value the user chose is kept.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from hexzero.mctsfw.hookspecs import hookimpl  # noqa: E402
from hexzero.mctsfw.game import Game, IllegalMoveError
from hexzero.mctsfw.search import MCTS, Node, SearchProgress, TreePolicy
from hexzero.mctsfw.plugin_manager import (
    DuplicatePluginError,
    InvalidPluginError,
    PluginError,
    PluginImportWarning,
    UnknownPluginError,
    build_registries,
    default_registries,
    make_plugin_manager,
)
from hexzero.mctsfw.checkpoints import ModelFileError, atomic_path, load_net
from hexzero.mctsfw.actors import Actor, NetActor, make_actor


def make_game(name: str, **params) -> Game:
    """A game from the registry: ``make_game("hex", size=5)``, ``make_game("nim", piles=[3, 4])``.

    An unknown name raises ``UnknownPluginError`` listing the available games; bad
    parameters raise ``ValueError`` naming each problem.
    """
    cls = default_registries().games.get(name)
    problems = cls.param_problems(params)
    if problems:
        raise ValueError(f"{name}: " + "; ".join(problems))
    return cls(**params)


def make_config_game(config: dict) -> Game:
    """The game a loaded config names (``config["game"]``) with its ``[games.NAME]`` parameters."""
    from hexzero.mctsfw.config import plugin_params

    return make_game(config["game"], **plugin_params(config, "games", config["game"]))


def make_model_game(path: str | os.PathLike, **params) -> Game:
    """The game the saved network at ``path`` was made for, with the parameters its file
    records (``mctsfw.checkpoints.saved_settings``); ``params`` given win (``size=13`` for a
    network that plays every size). ``ModelFileError`` when the file records no game::

        game = mctsfw.make_model_game("models/go9/pv_resnet_gen0010.keras")
        agent = mctsfw.make_actor("models/go9/pv_resnet_gen0010.keras", game, time_limit=1.0)
    """
    from hexzero.mctsfw.checkpoints import saved_settings

    made_for = saved_settings(path).get("game")
    if not made_for:
        raise ModelFileError(f"{path}: records no game (saved before networks carried their settings); "
                             "make the game with make_game")
    return make_game(made_for["name"], **{**made_for["params"], **params})


def make_tree_policy(name: str, **params) -> TreePolicy:
    """A tree policy from the registry: ``make_tree_policy("uct", c=1.4)``."""
    cls = default_registries().tree_policies.get(name)
    problems = cls.param_problems(params)
    if problems:
        raise ValueError(f"{name}: " + "; ".join(problems))
    return cls(**params)


__all__ = [
    "Actor",
    "DuplicatePluginError",
    "Game",
    "IllegalMoveError",
    "InvalidPluginError",
    "MCTS",
    "ModelFileError",
    "NetActor",
    "Node",
    "PluginError",
    "SearchProgress",
    "PluginImportWarning",
    "TreePolicy",
    "UnknownPluginError",
    "atomic_path",
    "build_registries",
    "default_registries",
    "hookimpl",
    "load_net",
    "make_actor",
    "make_game",
    "make_model_game",
    "make_plugin_manager",
    "make_tree_policy",
]
