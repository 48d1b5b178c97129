"""The nets' file format: Keras ``.keras`` archives, recognised by the model's name.

A saved net is a ``.keras`` zip whose ``config.json`` names the Keras model after the
net (``anet``, ``pv_mlp`` ...). Reading that name needs no TensorFlow, so a net's
``can_load`` is a cheap look at the file; the core's ``mctsfw.checkpoints.load_net``
asks every registered net and never reads Keras files itself.

Beside Keras's own members the zip holds ``hexzero.json``: the game the network was
made for (its name and parameters: history planes, size, komi, rules) and the search it
plays best with (``mctsfw.checkpoints.play_settings``), so that a command given the file
alone plays it as it was meant to be played. Keras ignores the member; a file without
it (saved before it existed, or by Keras alone) loads as before, with no settings.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from pathlib import Path

from hexzero.mctsfw.checkpoints import ModelFileError, atomic_path

#: the zip member that holds the network's game and search settings (JSON)
SETTINGS_MEMBER = "hexzero.json"


def keras_model_name(path: str | os.PathLike) -> str:
    """The name of the Keras model saved at ``path``, read from the ``.keras`` zip's
    config.json (no TensorFlow). A missing file, a file that is no zip, or one without a
    readable config raises ``ModelFileError`` naming the file and the reason."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(f"{path}: not a Keras model file (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("config.json"))["config"]["name"]
    except Exception as error:
        raise ModelFileError(f"{path}: not a Keras model file (no readable config.json: {error})") from None


def has_model_name(path: str | os.PathLike, expected: str) -> bool:
    """Whether ``path`` is a readable ``.keras`` file whose model is named ``expected``
    (the ``can_load`` of every net: any unreadable or foreign file is simply not ours)."""
    try:
        return keras_model_name(path) == expected
    except ModelFileError:
        return False


def check_model_name(path: str | os.PathLike, expected: str, net_name: str) -> None:
    """Raise ``ModelFileError`` unless ``path`` holds a Keras model named ``expected``."""
    model_name = keras_model_name(path)
    if model_name != expected:
        raise ModelFileError(f"{path}: the model {model_name!r} was not made by the {net_name} net")


def save_keras_model(model, path: str | os.PathLike, settings: dict | None = None) -> Path:
    """Write a Keras model (weights, architecture, optimizer state) to a ``.keras`` file,
    atomically: an interrupted save never leaves a broken file where a good one was.
    ``settings`` (JSON-able: the game and the search, ``net_file_settings``) go into the
    same zip as ``hexzero.json``."""
    path = Path(path)
    if path.suffix != ".keras":
        raise ValueError(f"{path}: a Keras model file name must end with .keras")
    with atomic_path(path) as tmp, warnings.catch_warnings():
        # Keras's own conversion of its variables trips a numpy 2 deprecation notice
        warnings.filterwarnings("ignore", message="__array__ implementation", category=DeprecationWarning)
        model.save(tmp)
        if settings:
            with zipfile.ZipFile(tmp, "a") as archive:
                archive.writestr(SETTINGS_MEMBER, json.dumps(settings, indent=1))
    return path


def net_file_settings(net) -> dict:
    """What a net writes beside its model: the game it plays (name and parameters, read
    from ``net.game``) and, where a run or a person recorded one, the search it plays
    best with (``net.play_settings``)."""
    settings: dict = {"format": 1, "game": {"name": net.game.name, "params": net.game.params()}}
    search = getattr(net, "play_settings", None)
    if search:
        settings["search"] = search
    return settings


def read_settings(path: str | os.PathLike) -> dict:
    """The ``hexzero.json`` of the ``.keras`` file at ``path``: ``{}`` when it has none;
    ``ModelFileError`` naming the file when it cannot be read or is not what a net wrote."""
    path = Path(path)
    keras_model_name(path)  # a missing or foreign file is refused as for loading
    try:
        with zipfile.ZipFile(path) as archive:
            if SETTINGS_MEMBER not in archive.namelist():
                return {}
            settings = json.loads(archive.read(SETTINGS_MEMBER))
    except Exception as error:
        raise ModelFileError(f"{path}: its {SETTINGS_MEMBER} cannot be read ({error})") from None
    game = settings.get("game") if isinstance(settings, dict) else None
    if not (isinstance(game, dict) and isinstance(game.get("name"), str) and isinstance(game.get("params"), dict)):
        raise ModelFileError(f"{path}: its {SETTINGS_MEMBER} names no game (a game name and its parameters)")
    if not isinstance(settings.get("search", {}), dict):
        raise ModelFileError(f"{path}: its {SETTINGS_MEMBER} has search settings that are not a table")
    return settings


class KerasNetFile:
    """What every net saved as a ``.keras`` file with its settings shares (its class has
    ``model``, ``game`` and ``play_settings``): ``save`` and ``saved_settings``."""

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model (weights, architecture, optimizer state) atomically to a
        ``.keras`` file, with the game and search it plays (``net_file_settings``)."""
        return save_keras_model(self.model, path, net_file_settings(self))

    #: the game and search settings saved in a file (``{}`` for a file without them)
    saved_settings = staticmethod(read_settings)

    @staticmethod
    def device() -> str:
        """Where the net's batches are computed: Keras's first GPU's name, or "CPU"
        (``mctsfw.selfplay``'s ``net_server = "auto"`` serves the network where it is a GPU)."""
        from hexzero.nets.anet import keras_device

        return keras_device()
