"""The nets' file format: Keras ``.keras`` archives, recognised by the model's name.

A saved net is a ``.keras`` zip whose ``config.json`` names the Keras model after the
net (``anet``, ``pv_mlp`` ...). Reading that name needs no TensorFlow, so a net's
``can_load`` is a cheap look at the file; the core's ``mctsfw.checkpoints.load_net``
asks every registered net and never reads Keras files itself.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from pathlib import Path

from hexzero.mctsfw.checkpoints import ModelFileError, atomic_path


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


def save_keras_model(model, path: str | os.PathLike) -> Path:
    """Write a Keras model (weights, architecture, optimizer state) to a ``.keras`` file,
    atomically: an interrupted save never leaves a broken file where a good one was."""
    path = Path(path)
    if path.suffix != ".keras":
        raise ValueError(f"{path}: a Keras model file name must end with .keras")
    with atomic_path(path) as tmp, warnings.catch_warnings():
        # Keras's own conversion of its variables trips a numpy 2 deprecation notice
        warnings.filterwarnings("ignore", message="__array__ implementation", category=DeprecationWarning)
        model.save(tmp)
    return path
