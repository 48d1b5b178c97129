import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as mctsfw sets it, in case numpy loads first
# the nets' batches in float32 whatever the shell asks (a test that wants bfloat16 says so)
os.environ.pop("HEXZERO_PRECISION", None)

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the tests run from a checkout whether or not it is installed
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.backends import descendants, live_processes  # noqa: E402,F401  (the tests import descendants from here)


@pytest.fixture(scope="module")
def hex3():
    return mctsfw.make_game("hex", size=3)


@pytest.fixture(scope="module")
def hex4():
    return mctsfw.make_game("hex", size=4)


def random_states(game, count, seed=0):
    """``count`` positions reached by random legal moves from either opener (some may be final)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        state = game.initial_state(int(rng.integers(1, 3)))
        for _ in range(int(rng.integers(0, game.num_actions // 2))):
            if game.is_final(state):
                break
            state = game.next_state(state, int(rng.choice(game.legal_actions(state))))
        states.append(state)
    return states


# ---- processes ----------------------------------------------------------------------------------
def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a live process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (name) "
    return int(fields[1]), fields[0]


def live(pids) -> list[int]:
    """The processes of ``pids`` still running (a zombie, dead but not yet reaped, is not)."""
    return [pid for pid in pids if (stat := _stat(pid)) is not None and stat[1] != "Z"]


def wait_until_gone(pids, seconds: float) -> list[int]:
    """Wait up to ``seconds`` for ``pids`` to end; the ones still running."""
    deadline = time.time() + seconds
    while (left := live(pids)) and time.time() < deadline:
        time.sleep(0.1)
    return left


SESSION_MARK = "HEXZERO_TEST_SESSION"


def _marked_processes(mark: str) -> list[int]:
    """Live processes (other than this one) whose environment carries ``SESSION_MARK=mark``."""
    needle = f"{SESSION_MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and not _own_resource_tracker(entry):
            found.append(int(entry.name))
    return live(found)


def _own_resource_tracker(entry: Path) -> bool:
    """multiprocessing's resource tracker of this (pytest's) process: it ends with it."""
    try:
        cmdline = (entry / "cmdline").read_bytes()
    except OSError:
        return False
    return b"multiprocessing.resource_tracker" in cmdline and (_stat(int(entry.name)) or (0,))[0] == os.getpid()


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind():
    """Every process the tests start (CLI runs, their self-play workers, worker pools) is
    gone when the session ends, orphans included: each inherits a mark in its environment."""
    mark = str(os.getpid())
    os.environ[SESSION_MARK] = mark
    yield
    left = wait_until_gone(_marked_processes(mark), 10)
    assert not left, f"processes left behind by the tests: {left}"


# ---- processes the tests start ------------------------------------------------------------------
@contextmanager
def sigint_default_for_children() -> Iterator[None]:
    """Children started inside get SIGINT at its default (a Ctrl-C ends them, or reaches
    their handler), whatever this process was started with: a process started with SIGINT
    ignored (``nohup``, a ``cmd &`` in a script, many CI runners) passes that on to its
    children, and Python keeps an inherited ignored SIGINT. A handler of this process's
    own is reset to the default in a child at ``exec``; an ignored signal is not, so it is
    a handler here for the moment of the start (signals are the main thread's to set)."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


#: the exit status of a command stopped by ``Processes.ctrl_c`` (SIGINT) or ``terminate`` (SIGTERM)
STOP_STATUS = {"ctrl_c": 130, "terminate": 143}


class Processes:
    """The processes a test starts (the ``processes`` fixture), each as a terminal starts a
    command: in a process group of its own, with SIGINT at its default. ``ctrl_c`` sends
    what a terminal's Ctrl-C sends, ``terminate`` what ``kill`` sends; whatever way the test
    ends (an assertion, a timeout, an error), ``end_all`` kills what is left of each group
    and of the processes below it, and waits for them."""

    def __init__(self):
        self.started: list[subprocess.Popen] = []

    def start(self, args, **popen) -> subprocess.Popen:
        with sigint_default_for_children():
            process = subprocess.Popen([str(a) for a in args], start_new_session=True, **popen)
        self.started.append(process)
        return process

    @staticmethod
    def ctrl_c(process: subprocess.Popen) -> None:
        """SIGINT to every process of the group, as a terminal's Ctrl-C."""
        os.killpg(process.pid, signal.SIGINT)

    @staticmethod
    def terminate(process: subprocess.Popen) -> None:
        """SIGTERM to the process alone, as ``kill PID`` (or a service manager) sends it."""
        process.send_signal(signal.SIGTERM)

    def end_all(self) -> None:
        for process in self.started:
            left = set(descendants(process.pid)) | set(group_members(process.pid))
            if process.returncode is None:
                left.add(process.pid)
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                process.communicate(timeout=30)  # reaps it and closes its pipes
            except (subprocess.TimeoutExpired, ValueError, OSError):
                pass
            wait_until_gone(left, 10)


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (orphans of a dead leader too)."""
    return [pid for pid, _, group in live_processes() if group == pgid]


@pytest.fixture
def processes():
    """Start processes with ``processes.start(args, **popen)``; none outlives the test."""
    started = Processes()
    try:
        yield started
    finally:
        started.end_all()


def reachable_winners(game, state):
    """Every result (winner, None for a draw) that some order of the remaining moves reaches."""
    if game.is_final(state):
        return {game.winner(state)}
    return set().union(*(reachable_winners(game, game.next_state(state, a)) for a in game.legal_actions(state)))
