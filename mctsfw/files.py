"""Reading the files people and programs hand us: regular files of a bounded size only.

A path given to a reader may be anything: ``/dev/zero`` (endless), a FIFO (blocks until a
writer comes), a directory, a file of gigabytes. ``read_bytes(path, kind)`` opens it
without blocking, refuses what is not a regular file or is larger than ``LIMITS[kind]`` bytes
with ``FileRefused`` (an ``OSError`` whose ``strerror`` is one line saying why), and reads
at most ``limit`` bytes even from a file that grows meanwhile. The limits each kind of
file may have are declared here, in one place (``LIMITS``).
"""

from __future__ import annotations

import errno
import os
import stat

MIB = 1 << 20
#: the largest file each reader takes, in bytes
LIMITS = {
    "config": 1 * MIB,        # a TOML configuration
    "sgf": 16 * MIB,          # a game record in SGF (a 19x19 game with comments is a few KiB)
    "records": 512 * MIB,     # JSON lines: play --record files, a run's metrics
    "json": 64 * MIB,         # a TOPP result, a run's progress
    "model": 2048 * MIB,      # a saved network (.keras)
}


class FileRefused(OSError):
    """A path that is not a regular file, or a file larger than its kind may be."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(errno.EINVAL, reason, str(path))


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _size(size: int) -> str:
    return f"{size / MIB:.1f} MiB" if size >= MIB else f"{size:,} bytes"


def _check(path: str | os.PathLike, info: os.stat_result, kind: str) -> None:
    """Refuse (IsADirectoryError, FileRefused) what ``info`` shows is not a regular file of
    ``kind``'s size at most."""
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a directory, not a file", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(path, f"{_kind(info.st_mode)}, not a regular file")
    if info.st_size > LIMITS[kind]:
        raise FileRefused(path, f"{_size(info.st_size)}, more than the {_size(LIMITS[kind])} a {kind} file may have")


def checked_size(path: str | os.PathLike, kind: str) -> int:
    """The size of the regular file at ``path``; FileRefused if it is something else or
    larger than ``LIMITS[kind]``, FileNotFoundError if there is nothing there."""
    info = os.stat(path)
    _check(path, info, kind)
    return info.st_size


def read_bytes(path: str | os.PathLike, kind: str) -> bytes:
    """The bytes of the regular file at ``path``, at most ``LIMITS[kind]`` of them
    (FileRefused otherwise; FileNotFoundError, IsADirectoryError, PermissionError as
    ``open`` raises them). Opened without blocking, so a FIFO is refused, not waited on."""
    limit = LIMITS[kind]
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _check(path, os.fstat(fd), kind)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise FileRefused(path, f"grew past the {_size(limit)} a {kind} file may have while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike, kind: str) -> str:
    """``read_bytes`` as UTF-8 text (UnicodeDecodeError otherwise)."""
    return read_bytes(path, kind).decode("utf-8")



