"""Saved files: writing them so a crash never leaves half a file, and loading saved nets.

``atomic_path`` is the one way hexzero writes a file that must survive an interrupted
run (models, replay buffers, run state): the writer fills a temporary file in the same
directory, and only a complete file is moved over the old one (``os.replace`` is atomic
on one file system). ``load_net`` finds the registered net class that can read a saved
model, so the core loads models without importing ``nets/``; the file format itself
(Keras archives) is the nets' business, in ``nets/keras_files.py``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

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


def load_net(path: str | os.PathLike, game: "Game"):
    """The saved network at ``path``, loaded by the registered net class that recognises it
    (``net_class_for``); its ``load(path, game)`` raises ``ModelFileError`` for a broken
    file or one made for another game."""
    return net_class_for(path).load(Path(path), game)
