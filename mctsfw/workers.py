"""Worker processes that die with their parent and leave Ctrl-C to it.

A worker of a killed parent (``kill -9``, a crash) would play on and keep its memory
(a TensorFlow process holds about 600 MB) with nobody to collect its results; and a
Ctrl-C, which the terminal sends to the whole process group, would print a traceback
per worker. So each worker ignores SIGINT from its first instruction on (it inherits
the ignored signal from the moment it is spawned; the parent stops the pool itself),
and a daemon thread in it exits the process as soon as its parent is gone.

``prctl(PR_SET_PDEATHSIG)`` is not used: on Linux it follows the *thread* that
spawned the worker, and pools may spawn from any thread; polling ``getppid`` (the
worker is re-parented when its parent dies) works on every POSIX system.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: seconds between a worker's looks at its parent
PARENT_POLL_SECONDS = 0.25


def exit_with_parent(parent_pid: int, interval: float = PARENT_POLL_SECONDS) -> threading.Thread:
    """Start a daemon thread that ends this process at once when ``parent_pid`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os._exit(1)  # no clean-up: nobody is left to receive this process's results

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def _start_worker(parent_pid: int, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # already ignored (inherited); kept so in any case
    exit_with_parent(parent_pid)
    if initializer is not None:
        initializer(*initargs)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process for a moment, so that processes spawned now inherit
    it (Python keeps an inherited ignored SIGINT) and a Ctrl-C during their start-up
    leaves them be. Only the main thread may change signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def stderr_fd_to(fd: int) -> Iterator[None]:
    """This process's file descriptor 2 (where C and C++ libraries write: TensorFlow's
    start-up notices, Ray's core worker) goes to ``fd`` meanwhile; Python's ``sys.stderr``
    is flushed on both sides, so nothing printed before or after is lost or misplaced."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


class WorkerPool:
    """A pool of spawned worker processes (a forked TensorFlow may hang) that exit when
    this process dies and ignore Ctrl-C. ``close(abort=True)`` stops them at once."""

    def __init__(self, workers: int, initializer: Callable[..., None] | None = None, initargs: tuple = ()):
        self._workers = workers
        with sigint_ignored():
            self._executor = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                initargs=(os.getpid(), initializer, initargs),
            )

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        if len(self.pids()) >= self._workers:  # all spawned: a Ctrl-C now must reach this process
            return self._executor.submit(fn, *args)
        with sigint_ignored():  # this submission may spawn a worker (a Ctrl-C in this moment is lost)
            return self._executor.submit(fn, *args)

    def pids(self) -> list[int]:
        return list(getattr(self._executor, "_processes", None) or {})

    def close(self, abort: bool = False) -> None:
        """Wait for the workers to finish and exit; with ``abort``, cancel what is queued
        and end the workers now (an interrupted run does not wait for the games in play)."""
        if not abort:
            self._executor.shutdown(wait=True)
            return
        processes = list((getattr(self._executor, "_processes", None) or {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)
