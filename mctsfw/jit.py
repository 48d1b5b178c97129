"""The one decorator the package's compiled code is made with: numba's ``njit`` whose
on-disk cache is renewed when any compiled file of the package changes.

numba keys a function's cached machine code by its own file's contents alone, yet a
compiled function carries the code of every compiled function it calls. When
``games/hex_vc.py`` changes, ``games/hex_kernels.py`` (which calls it) would keep running
the old H-search from its cache: after an edit in a checkout, or after a wheel upgraded in
place, which leaves the old ``__pycache__/*.nbi`` files where they were. Here every cached
function's stamp is its own file's as numba makes it plus a hash of every file of the package
that compiles with this decorator, so a change to any of them compiles them all anew, once.

Files are found by the import line below, so a new kernel file joins by using it.
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from pathlib import Path

from numba import njit as _numba_njit

#: the folders whose files may compile with this decorator: the core and the built-in games
ROOTS = ("mctsfw", "games")
#: the line that marks a file as compiled code
MARKER = "mctsfw.jit import njit"
_BASE = Path(__file__).resolve().parent.parent  # the checkout, or site-packages/hexzero


def kernel_files(base: Path | None = None) -> list[Path]:
    """The package's files (under ``base``, the package's folder by default) that compile
    with this decorator, in a fixed order."""
    files = []
    for root in ROOTS:
        for path in sorted(((base or _BASE) / root).rglob("*.py")):
            if MARKER in path.read_text(encoding="utf-8") and path.name != "jit.py":
                files.append(path)
    return files


def fingerprint(files: list[Path]) -> str:
    """A hash of the files' names and contents."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def package_fingerprint() -> str:
    """The hash of every compiled file of the package, read once a process."""
    return fingerprint(kernel_files())


def njit(*args, **options):
    """``numba.njit`` with the same arguments; with ``cache=True`` the cache is stamped with
    :func:`package_fingerprint` beside numba's own stamp of the function's file."""
    if args:  # used bare, as @njit
        return njit(**options)(args[0])

    def compile_later(func):
        dispatcher = _numba_njit(**options)(func)
        if not options.get("cache"):
            return dispatcher
        try:  # numba's cache file of the function, and the stamp it keeps in its index
            cache_file = dispatcher._cache._cache_file
            own = cache_file._source_stamp
        except AttributeError:  # a numba that keeps its cache otherwise: compile every run
            warnings.warn(
                "this numba's cache cannot be stamped with the package's files: "
                f"{func.__qualname__} is compiled anew every run",
                stacklevel=2,
            )
            return _numba_njit(**{**options, "cache": False})(func)
        cache_file._source_stamp = (own, package_fingerprint())
        return dispatcher

    return compile_later
