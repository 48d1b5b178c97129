"""Stopping a command: Ctrl-C (SIGINT) and SIGTERM end it the same way.

A terminal's Ctrl-C raises ``KeyboardInterrupt``; ``kill PID``, a service manager or a
CI runner's time-out sends SIGTERM, which would end Python at once, with no ``finally``
run: no resume state committed, no socket closed, no worker stopped. The command line
(``stop_on_sigterm``) has SIGTERM raise ``Terminated``, a ``KeyboardInterrupt``, so
every place that handles a Ctrl-C handles it too; only the exit status differs
(``exit_status``: 130 for SIGINT, 143 for SIGTERM, as a shell reports them).

A command started with SIGINT ignored (``nohup``, ``cmd &`` in a script) keeps ignoring
Ctrl-C, as the person who started it so asked; SIGTERM still stops it.

``interrupt_reported`` is what a learning run (``mctsfw.runs``) wraps its steps in: a
first stop signal that lands in an import TensorFlow's C++ asked for is raised as soon
as the code is out of it, since raised in there TensorFlow prints a traceback of its
own; and the run can ask whether a signal came that a library caught and made nothing of.
"""

from __future__ import annotations

import os
import signal
import sys
import sysconfig
import threading
from contextlib import contextmanager
from typing import Iterator

#: how often a stop signal that waits for a TensorFlow call to end looks again
DEFERRED_INTERRUPT_SECONDS = 0.05


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where a Ctrl-C would raise ``KeyboardInterrupt``."""


def raise_terminated(signum, frame) -> None:
    """The SIGTERM handler of the command line."""
    raise Terminated()


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` inside (unless it is ignored: whoever started the
    process so wants it). Only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def sigterm_kept() -> Iterator[None]:
    """SIGTERM's handler as it was before, after a library call that sets its own
    (``ray.init`` makes SIGTERM exit the process at once, status 15, nothing saved)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The exit status of a command stopped by ``stop``: 128 + the signal's number."""
    return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)


def _stop_for(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


#: the handlers that mean "stop as a Ctrl-C does": ``interrupt_reported`` stands in for them
_RAISING = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: raise_terminated}


#: where the standard library's modules are (site-packages may lie below it: not the library)
_STDLIB = os.path.normcase(sysconfig.get_paths()["stdlib"]) + os.sep


def _standard_library(frame) -> bool:
    name = frame.f_code.co_filename
    if name.startswith("<frozen "):
        return True
    name = os.path.normcase(name)
    return name.startswith(_STDLIB) and "-packages" + os.sep not in name


def _inside_tensorflow(frame) -> bool:
    """Whether the interrupted code runs for TensorFlow's C++: a KeyboardInterrupt raised
    there can be lost (its checks clear errors, or count an error as a yes) and come back
    as a SystemError that TensorFlow prints with a traceback. The innermost Python frame
    is then TensorFlow's own (the C++ call runs no Python frame of its own), or the
    standard library's called by it (an import, an ``isinstance`` against an abstract base
    class of ``collections.abc``): both wait."""
    while frame is not None and _standard_library(frame):
        frame = frame.f_back
    return frame is not None and f"{os.sep}tensorflow{os.sep}" in frame.f_code.co_filename


class StopSignals:
    """The stop signals that came inside ``interrupt_reported``."""

    def __init__(self):
        self.seen: list[int] = []
        self.holding = False

    def __bool__(self) -> bool:
        return bool(self.seen)

    @contextmanager
    def held(self) -> Iterator[None]:
        """A first stop signal waits until the end of this block (a step's metrics line and
        its commit: stopped between them, the files would disagree), then raises; a second
        raises at once."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.seen:
            raise self.stop()

    def stop(self) -> KeyboardInterrupt:
        """The exception the first of them raises (``KeyboardInterrupt`` or ``Terminated``)."""
        return _stop_for(self.seen[0])


@contextmanager
def interrupt_reported() -> Iterator[StopSignals]:
    """Ctrl-C and SIGTERM as usual (each raises where its handler would), and what came.

    Only the signals whose handler raises (SIGINT's default; SIGTERM's after
    ``stop_on_sigterm``) are watched: an ignored one stays ignored. A first signal that
    lands in an import TensorFlow's C++ asked for is raised as soon as the code is out of
    it (a timer looks every 50 ms); a second raises at once. One that lands where Python
    drops exceptions (a weakref's callback, a ``__del__``) is raised again out of there."""
    seen = StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield seen  # signals are the main thread's, and a handler someone set stays
        return
    watched = [s for s, raising in _RAISING.items() if signal.getsignal(s) is raising]

    def later(signum, frame):
        if seen.holding:
            return  # raised at the end of the held block
        if _inside_tensorflow(frame):
            signal.setitimer(signal.ITIMER_REAL, DEFERRED_INTERRUPT_SECONDS)
            return
        raise seen.stop()

    def raise_later():
        signal.signal(signal.SIGALRM, later)
        signal.setitimer(signal.ITIMER_REAL, DEFERRED_INTERRUPT_SECONDS)

    def handler(signum, frame):
        seen.seen.append(signum)
        if len(seen.seen) == 1 and seen.holding:
            return  # raised at the end of the held block
        if len(seen.seen) == 1 and _inside_tensorflow(frame):
            raise_later()
            return
        raise _stop_for(signum)

    def unraisable(info):
        """A stop raised where Python drops exceptions (a weakref callback, a ``__del__``)
        would be printed as "Exception ignored in" and lost: it is raised again once the
        code is out of there, as one that waited for TensorFlow."""
        if isinstance(info.exc_value, KeyboardInterrupt) and seen:
            raise_later()
            return
        hook(info)

    alarm, hook = signal.getsignal(signal.SIGALRM), sys.unraisablehook
    for s in watched:
        signal.signal(s, handler)
    if watched:
        sys.unraisablehook = unraisable
    try:
        yield seen
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, alarm)
        sys.unraisablehook = hook
        for s in watched:
            signal.signal(s, _RAISING[s])
