"""Saved files: writing them so a crash never leaves half a file, and loading saved nets.

``atomic_path`` is the one way hexzero writes a file that must survive an interrupted
run (models, replay buffers, run state): the writer fills a temporary file in the same
directory, and only a complete file is moved over the old one (``os.replace`` is atomic
on one file system). ``load_net`` finds the registered net class that can read a saved
model, so the core loads models without importing ``nets/``; the file format itself
(Keras archives) is the nets' business, in ``nets/keras_files.py``.

A saved network carries its settings (``saved_settings``): the game it was made for
(name and parameters) and the search it plays best with (``play_settings``: the tree
policy, its parameters, the playouts mixed in). ``settings_layer`` turns them into the
config layer that every command puts between ``hexzero.toml`` and the user's
``--config`` and ``--set``, so a network given alone plays as it was trained and
measured, and whatever the user says still wins.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from hexzero.mctsfw.game import Game


class ModelFileError(ValueError):
    """A saved model that is missing, unreadable, or made for another game; the message names the file."""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path to write instead of ``path``; move it into place on success.

    The temporary file lies in the same directory and keeps the suffix of ``path``
    (writers such as Keras and ``numpy.savez`` look at it). If the block raises, the
    temporary file is removed and ``path`` keeps its old contents; if the block returns
    without writing anything, ``FileNotFoundError`` says so and ``path`` is untouched.
    Missing parent directories are created::

        with atomic_path("runs/a/buffer.npz") as tmp:
            np.savez(tmp, states=states)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"{path}: nothing was written to the temporary file {tmp.name}")
        _fsync(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_directory(path.parent)


def _fsync(path: Path) -> None:
    """Flush the file's data to disk before it replaces a good one."""
    if path.is_file():
        with open(path, "rb") as f:
            os.fsync(f.fileno())


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); harmless where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def net_class_for(path: str | os.PathLike) -> type:
    """The registered net class that recognises the model file at ``path``.

    Every net class in ``default_registries().nets`` is asked ``can_load(path)`` (a cheap
    look at the file). A missing file, or one that no registered net recognises, raises
    ``ModelFileError``.
    """
    from hexzero.mctsfw.plugin_manager import default_registries

    from hexzero.mctsfw.files import checked_size

    path = Path(path)
    try:
        checked_size(path, "model")
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except OSError as error:  # a directory, a device, a FIFO, too large
        raise ModelFileError(f"{path}: {error.strerror or error}") from None
    registry = default_registries().nets
    for name in registry.names():
        cls = registry.get(name)
        can_load = getattr(cls, "can_load", None)
        if can_load is not None and can_load(path):
            return cls
    raise ModelFileError(
        f"{path}: not a model file that a registered net can load (nets: {', '.join(registry.names()) or 'none'})"
    )


def saved_settings(path: str | os.PathLike) -> dict:
    """The settings the model file at ``path`` carries, as its net class reads them
    (``saved_settings``): ``{"game": {"name", "params"}, "search": {...}}``, or ``{}`` for
    a file that has none (saved before files carried them, or by a net that does not)."""
    read = getattr(net_class_for(path), "saved_settings", None)
    return read(path) if read is not None else {}


def play_settings(config: dict, net: Any) -> dict:
    """The search a run's network plays with, as the run's ``config`` has it: what its
    checkpoints carry. A policy-and-value net searches with ``play.model_tree_policy``
    (PUCT), that policy's parameters and ``mcts.playouts`` (the rollouts mixed in below
    value_weight 1); a policy net (the ANET) with UCT over its own rollouts."""
    from hexzero.mctsfw.config import plugin_params
    from hexzero.mctsfw.roles import POLICY_VALUE, has_role

    if has_role(net, POLICY_VALUE):
        policy = config["play"]["model_tree_policy"]
        return {"tree_policy": policy, "policy_params": plugin_params(config, "tree_policies", policy),
                "playouts": config["mcts"]["playouts"]}
    return {"tree_policy": "uct", "policy_params": plugin_params(config, "tree_policies", "uct")}


def settings_layer(path: str | os.PathLike) -> dict:
    """The config layer the model file at ``path`` stands for: its game (``game`` and
    ``[games.NAME]``) and its search (``[tree_policies.NAME]``; for a policy-and-value
    net ``play.model_tree_policy`` and ``mcts.playouts``); ``{}`` for a file without
    settings. Settings that no longer validate raise ``ModelFileError`` naming the file."""
    from hexzero.mctsfw.config import ConfigError, declared_defaults, merge, validate
    from hexzero.mctsfw.roles import POLICY_VALUE, has_role

    saved = saved_settings(path)
    if not saved:
        return {}
    name = saved["game"]["name"]
    layer: dict[str, Any] = {"game": name, "games": {name: dict(saved["game"]["params"])}}
    search = saved.get("search") or {}
    if search.get("tree_policy"):
        policy = search["tree_policy"]
        layer["tree_policies"] = {policy: dict(search.get("policy_params") or {})}
        if has_role(net_class_for(path), POLICY_VALUE):
            layer["play"] = {"model_tree_policy": policy}
    if "playouts" in search:
        layer["mcts"] = {"playouts": search["playouts"]}
    try:
        validate(merge(declared_defaults(), layer))
    except ConfigError as error:
        raise ModelFileError(f"{path}: its saved settings do not fit this hexzero: {'; '.join(error.problems)}") from None
    return layer


def describe_settings(name: str, params: dict) -> str:
    """``go(size=9, komi=7.5)``: a game as an error message names it."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


def load_net(path: str | os.PathLike, game: "Game"):
    """The saved network at ``path``, loaded by the registered net class that recognises it
    (``net_class_for``); its ``load(path, game)`` raises ``ModelFileError`` for a broken
    file or one made for another game. A file that names the game it was made for is
    refused for another game at once, and when it cannot play this game's settings the
    message names the settings it was made for and those asked for."""
    cls = net_class_for(path)
    read = getattr(cls, "saved_settings", None)
    made_for = (read(path) if read is not None else {}).get("game")
    if made_for and made_for["name"] != game.name:
        raise ModelFileError(f"{path}: a network for {describe_settings(made_for['name'], made_for['params'])}, "
                             f"not for {game.name}")
    try:
        return cls.load(Path(path), game)
    except ModelFileError as error:
        asked = json.loads(json.dumps(game.params()))  # as the file holds them (tuples become lists)
        differ = sorted(k for k in set(made_for["params"]) | set(asked)
                        if made_for["params"].get(k) != asked.get(k)) if made_for else []
        if not differ:
            raise
        reason = str(error).removeprefix(f"{path}: ")
        made = ", ".join(f"{k}={made_for['params'].get(k)!r}" for k in differ)
        wanted = ", ".join(f"{k}={asked.get(k)!r}" for k in differ)
        raise ModelFileError(f"{path}: made for {game.name} with {made}; cannot play {wanted} ({reason})") from None
