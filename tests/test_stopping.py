"""Every long-running command stops on SIGTERM as it does on a Ctrl-C: the same one line,
what a Ctrl-C saves is saved, and no process it started is left (mctsfw/interrupts.py).
``serve`` is tested in test_web, ``selfplay`` in test_selfplay and test_ray."""

import json
import os
import signal
import subprocess
import sys
import time
import weakref

import pytest

from conftest import STOP_STATUS as STOPS, descendants, wait_until_gone
from hexzero.mctsfw.interrupts import Terminated, _inside_tensorflow, interrupt_reported, raise_terminated
from hexzero.mctsfw.runs import ResumableRun, RunDir
from test_training import ROOT, run_cli_train


def stopped(processes, process, stop):
    """Send ``stop`` to ``process``; its exit status and the lines it wrote on stderr."""
    getattr(processes, stop)(process)
    out, err = process.communicate(timeout=60)
    return process.returncode, [line for line in err.splitlines() if line.strip()]


def test_a_child_gets_sigint_at_its_default_when_the_tests_run_with_it_ignored(processes):
    """The suite may be started with SIGINT ignored (nohup, ``cmd &`` in a script): the
    commands it starts must still see a Ctrl-C."""
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        process = processes.start([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert process.communicate(timeout=30)[0].strip() == "True"


def test_a_test_that_fails_leaves_no_process(processes):
    process = processes.start([sys.executable, "-c", "import time; time.sleep(600)"])
    processes.end_all()  # what the fixture does after a test, whatever its outcome
    assert wait_until_gone([process.pid], 5) == [] and process.returncode is not None


def standard_library_frame_called_from(filename):
    """A frame of the standard library's (``copy.deepcopy``) called by code in ``filename``."""
    frames = []

    class Probe:
        def __deepcopy__(self, memo):
            frames.append(sys._getframe(1))
            return self

    exec(compile("import copy\ncopy.deepcopy(probe)", filename, "exec"), {"probe": Probe()})
    return frames[0]


def test_a_stop_signal_waits_while_the_standard_library_runs_for_tensorflow():
    """A Ctrl-C raised in an ``isinstance`` or import that TensorFlow's C++ asked for came
    back as a SystemError with TensorFlow's traceback (a CI run's SIGTERM); raised in the
    same library code called from anywhere else, it is raised at once."""
    tensorflow = os.path.join(os.sep, "venv", "site-packages", "tensorflow", "python", "util", "nest_util.py")
    ours = os.path.join(os.sep, "hexzero", "mctsfw", "backends.py")
    assert _inside_tensorflow(standard_library_frame_called_from(tensorflow))
    assert not _inside_tensorflow(standard_library_frame_called_from(ours))
    assert not _inside_tensorflow(sys._getframe())


def test_a_stop_signal_in_a_weakref_callback_is_raised_after_it_not_printed_and_lost(capsys):
    """A CI run's Ctrl-C landed in a weakref's callback, where Python drops exceptions: it
    printed "Exception ignored in ... KeyboardInterrupt" before the run's one line. Now the
    stop is raised again as soon as the code is out of the callback, with nothing printed."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    reached, started = [], time.monotonic()

    class Thing:
        pass

    def callback(_):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10000):  # the handler runs in here, in the callback
            pass

    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupt_reported() as seen:
                thing = Thing()
                ref = weakref.ref(thing, callback)
                del thing  # the callback runs, and Python drops what it raises
                reached.append(ref() is None)
                time.sleep(5)  # raised again in here
    finally:
        signal.signal(signal.SIGINT, previous)
    assert reached == [True] and seen.seen == [signal.SIGINT] and time.monotonic() - started < 2
    assert "Exception ignored" not in capsys.readouterr().err


def test_a_stop_signal_in_a_held_block_waits_for_its_end_and_a_second_does_not():
    """A learning run holds a step's metrics line and its commit together: a Ctrl-C between
    them left a line of a step no resume state had (a CI run's flaky check). The first stop
    raises once the block is done; a second one raises at once."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupt_reported() as seen:
                with seen.held():
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.1)
                    done.append("line and commit")
        assert done == ["line and commit"]
        with pytest.raises(KeyboardInterrupt):  # one that waited (here: out of a weakref callback) waits on
            with interrupt_reported() as seen:
                thing = type("Thing", (), {})()
                ref = weakref.ref(thing, lambda _: [os.kill(os.getpid(), signal.SIGINT), sum(range(10000))])
                del thing
                with seen.held():
                    time.sleep(0.2)  # its 50 ms timer goes off in here
                    done.append("line and commit, again")
        assert ref() is None and done == ["line and commit", "line and commit, again"]
        with pytest.raises(KeyboardInterrupt):
            with interrupt_reported() as seen:
                with seen.held():
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.1)
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.1)
                    done.append("not reached")
        assert done[-1] == "line and commit, again" and seen.seen == [signal.SIGINT, signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_stop_signal_that_keras_swallows_in_its_input_check_prints_no_warning():
    """Keras checks a network call's inputs inside a bare ``except`` that turns anything
    raised there (a Ctrl-C or SIGTERM landing in it, as one did while a run trained) into a
    "structure of inputs" warning: a stopped run printed it above its one line. The run
    still stops (the signal was seen); the warning is left out (in a process of its own,
    as a command runs: pytest keeps warning filters per test)."""
    code = """
import sys
import numpy as np
from hexzero import mctsfw
from hexzero.nets.twohead import PolicyValueMLP
net = PolicyValueMLP(mctsfw.make_game("hex", size=3), hidden_layers=[4])
def interrupted(*args, **kwargs):
    raise KeyboardInterrupt
sys.modules["keras.src.models.functional"].tree.assert_same_structure = interrupted
net.model._maybe_warn_inputs_struct_mismatch(np.zeros((1, 20), np.float32))
print("checked")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "checked\n", done.stderr
    assert "structure of `inputs`" not in done.stderr, done.stderr


def test_a_sigterm_that_a_library_turned_into_a_plain_ctrl_c_still_stops_a_run_as_a_sigterm(tmp_path):
    """Ray's ``wait`` raises a plain ``KeyboardInterrupt`` for whatever a signal handler
    raised in it: a CI run's SIGTERM then exited 130, as a Ctrl-C. The run knows which
    signal came and raises that one."""
    def waits_in_ray(interrupted):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except Terminated:
            raise KeyboardInterrupt() from None  # what ray.wait made of it

    run = ResumableRun({}, tmp_path / "run")
    run._train = waits_in_ray
    previous = signal.signal(signal.SIGTERM, raise_terminated)  # as the command line has it
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            run.train()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert type(stopped.value) is Terminated  # the command's exit status: 143


@pytest.mark.parametrize("stop", STOPS)
def test_train_stops_on_ctrl_c_or_sigterm_with_one_line_and_resumes(tmp_path, processes, stop):
    run_dir = tmp_path / "run"
    process = run_cli_train(processes, run_dir, 500)
    deadline = time.time() + 240
    while not ((latest := RunDir(run_dir).latest()) and latest[0] >= 1):
        assert process.poll() is None and time.time() < deadline, process.communicate()
        time.sleep(0.05)
    status, lines = stopped(processes, process, stop)
    assert status == STOPS[stop]
    assert lines == [f"interrupted: resume with hexzero train --resume {run_dir}"]
    done = RunDir(run_dir).latest()[0]
    assert [r["episode"] for r in RunDir(run_dir).read_metrics()] == list(range(1, done + 1))
    process = run_cli_train(processes, run_dir, done + 1)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert f"resuming {run_dir} after {done} episode" in out


@pytest.mark.parametrize("stop", STOPS)
def test_play_stops_on_ctrl_c_or_sigterm_keeping_the_finished_games(tmp_path, processes, stop):
    record = tmp_path / "games.jsonl"
    process = processes.start([sys.executable, ROOT / "cli.py", "play", "--p1", "mcts", "--p2", "mcts", "--size", "4",
                               "--search-games", "300", "--games", "1000", "--no-display", "--record", record],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.time() + 120
    while not (record.exists() and record.read_text().count("\n") >= 1):
        assert process.poll() is None and time.time() < deadline, process.communicate()
        time.sleep(0.05)
    status, lines = stopped(processes, process, stop)
    assert status == STOPS[stop] and lines == ["interrupted"]
    games = [json.loads(line) for line in record.read_text().splitlines()]
    assert games and all(game["winner"] in (1, 2) for game in games)


@pytest.mark.parametrize("stop", STOPS)
def test_gtp_stops_on_ctrl_c_or_sigterm_and_its_outside_engine_with_it(processes, stop):
    inner = f"gtp:{sys.executable} {ROOT / 'cli.py'} gtp --game hex --p random"
    process = processes.start([sys.executable, ROOT / "cli.py", "gtp", "--game", "hex", "--p", inner],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    process.stdin.write("1 boardsize 5\n2 genmove b\n")
    process.stdin.flush()
    assert process.stdout.readline().strip() == "=1"
    assert process.stdout.readline() == "\n"
    assert process.stdout.readline().startswith("=2 ")  # the outside engine answered: it is running
    below = descendants(process.pid)
    assert below
    status, lines = stopped(processes, process, stop)
    assert status == STOPS[stop] and lines == ["interrupted"]
    assert wait_until_gone(below, 10) == []
