"""Self-play backends: Ray plays the games processes play, dead workers' games are replayed
once, and neither leaves a process behind (mctsfw/backends.py)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from hexzero.mctsfw.backends import WORKER_DIES_AT
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlayTrainer
from tests.conftest import STOP_STATUS, descendants, wait_until_gone
from tests.test_selfplay import TINY, tiny
from tests.test_training import ROOT

try:
    import ray
except ImportError:
    ray = None

def needs_ray(test):
    """A test of the Ray backend: marked ``ray`` (the second step of CI runs them, with the
    extra installed), skipped without Ray."""
    return pytest.mark.ray(pytest.mark.skipif(
        ray is None, reason='Ray is not installed (pip install -e ".[ray]"): the Ray backend tests are skipped')(test))


def played(run_dir):
    """The games of a run as its metrics say (minus their timings), in the order committed."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]


def run(run_dir, *settings):
    trainer = SelfPlayTrainer(tiny(run_dir, extra=list(settings)), run_dir, progress=False)
    trainer.train()
    return trainer


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The tiny run (2 generations of 3 games, lock-step groups of 2) played by one process."""
    run_dir = tmp_path_factory.mktemp("processes") / "run"
    trainer = run(run_dir, "selfplay.workers=1", "selfplay.lockstep=2")
    return played(run_dir), trainer.buffer, trainer.net


def assert_same_run(run_dir, trainer, reference):
    games, buffer, net = reference
    assert played(run_dir) == games and [g["game"] for g in games] == [1, 2, 3, 4, 5, 6]
    assert trainer.buffer.records == buffer.records
    x = buffer.cases()[0]
    assert np.allclose(trainer.net.evaluate(x)[0], net.evaluate(x)[0], atol=1e-5)


@needs_ray
@pytest.mark.parametrize("workers, server", [(1, "off"), (2, "off"), (2, "on")])
def test_a_local_ray_plays_the_games_that_one_process_plays(tmp_path, reference, workers, server):
    """With ``net_server = "on"`` the tasks' positions go to the node's network server."""
    run_dir = tmp_path / "run"
    before = set(descendants(os.getpid()))  # what earlier tests left (a pool's resource tracker) is not Ray's
    trainer = run(run_dir, 'selfplay.backend="ray"', f"selfplay.workers={workers}", "selfplay.lockstep=2",
                  f'selfplay.net_server="{server}"')
    assert_same_run(run_dir, trainer, reference)
    # the local Ray was shut down with the run: no Ray, no process of it left
    assert not ray.is_initialized()
    assert wait_until_gone([pid for pid in descendants(os.getpid()) if pid not in before], 10) == []


@needs_ray
def test_a_ray_worker_that_dies_has_its_games_played_again_once(tmp_path, reference, monkeypatch, capfd):
    marker = tmp_path / "died"
    monkeypatch.setenv(WORKER_DIES_AT, f"4:{marker}")  # the worker about to play games 4-5 exits, once
    run_dir = tmp_path / "run"
    trainer = run(run_dir, 'selfplay.backend="ray"', "selfplay.workers=2", "selfplay.lockstep=2")
    assert marker.exists()  # a worker did die
    assert "a worker died playing games 4-5" in capfd.readouterr().err
    assert_same_run(run_dir, trainer, reference)  # every game once, as if nothing had happened


@pytest.mark.parametrize("server", ["off", "on"])
def test_a_worker_process_that_dies_has_its_games_played_again_once(tmp_path, reference, monkeypatch, capfd, server):
    """Also when the worker was one of the network server's: the server drops it."""
    marker = tmp_path / "died"
    monkeypatch.setenv(WORKER_DIES_AT, f"1:{marker}")
    run_dir = tmp_path / "run"
    trainer = run(run_dir, "selfplay.workers=2", "selfplay.lockstep=2", f'selfplay.net_server="{server}"')
    assert marker.exists()
    assert "a worker died playing games 1-2" in capfd.readouterr().err
    assert_same_run(run_dir, trainer, reference)
    assert not (run_dir / "workers_net.keras").exists()


def selfplay_command(run_dir, generations, *settings):
    return [sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--run-dir", str(run_dir),
            "--generations", str(generations), *sum((["--set", s] for s in [*TINY, *settings]), [])]


def test_the_ray_backend_without_ray_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "site" / "ray"  # an environment in which `import ray` fails
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\")\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    proc = subprocess.run(selfplay_command(tmp_path / "run", 1, 'selfplay.backend="ray"'), capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'pip install -e ".[ray]"' in lines[0] and "selfplay.backend" in lines[0], proc.stderr
    assert not (tmp_path / "run").exists()


@needs_ray
def test_a_ray_address_where_nobody_answers_is_refused_in_one_line(tmp_path):
    proc = subprocess.run(selfplay_command(tmp_path / "run", 1, 'selfplay.backend="ray"', 'selfplay.ray_address="127.0.0.1:1"'),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "selfplay.ray_address = '127.0.0.1:1': no Ray cluster answers there" in lines[0], proc.stderr
    assert "ray start --head" in lines[0]


def start_ray_selfplay(processes, run_dir):
    return processes.start(selfplay_command(run_dir, 50, 'selfplay.backend="ray"', "selfplay.workers=2"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_games(proc, run_dir):
    """The processes below ``proc`` once its Ray workers have played a game."""
    deadline = time.time() + 240
    while time.time() < deadline:
        assert proc.poll() is None, f"exit {proc.returncode}: {proc.stderr.read()}"
        latest = RunDir(run_dir).latest()
        if latest and latest[0] >= 1:
            return descendants(proc.pid)
        time.sleep(0.1)
    raise AssertionError("the Ray workers played no game")


@needs_ray
@pytest.mark.parametrize("stop", ["ctrl_c", "terminate"])
def test_ctrl_c_or_sigterm_stops_a_ray_run_with_one_line_and_leaves_no_process(tmp_path, processes, stop):
    run_dir = tmp_path / "run"
    proc = start_ray_selfplay(processes, run_dir)
    below = wait_for_games(proc, run_dir)
    assert len(below) >= 3  # Ray's own processes and its workers
    getattr(processes, stop)(proc)  # Ctrl-C: every process of the group; SIGTERM: the command alone
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == STOP_STATUS[stop], err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"interrupted: resume with hexzero selfplay --resume {run_dir}"], err
    assert wait_until_gone(below, 10) == []


@needs_ray
def test_a_killed_ray_run_leaves_no_process(tmp_path, processes):
    run_dir = tmp_path / "run"
    proc = start_ray_selfplay(processes, run_dir)
    below = wait_for_games(proc, run_dir)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert wait_until_gone(below, 15) == []


class FakeRay:
    """Ray's task calls as RayBackend.play makes them, run when waited on: it counts the
    tasks in flight (submitted, not yet returned) at the most."""

    class exceptions:
        pass

    def __init__(self):
        self.in_flight = self.most = 0

    def remote(self, fn):
        fake = self

        class Task:
            def options(self, **kwargs):
                return self

            def remote(self, *args):
                fake.in_flight += 1
                fake.most = max(fake.most, fake.in_flight)
                return [fn, args, None]

        return Task()

    def wait(self, refs, num_returns=1, timeout=None):
        if timeout == 0:
            return [], refs
        ref = refs[-1]  # the newest first: the backend must still yield in group order
        return [ref], [r for r in refs if r is not ref]

    def get(self, ref):
        self.in_flight -= 1
        return ref[0](*ref[1])


@pytest.mark.parametrize("workers, most", [(2, 2), (0, 7)])
def test_the_ray_backend_keeps_at_most_workers_tasks_at_once_on_a_cluster(workers, most):
    from hexzero.mctsfw.backends import RayBackend

    backend = RayBackend.__new__(RayBackend)  # as joined to a cluster: no local Ray caps the tasks
    backend._ray, backend.workers, backend._remote, backend._running = FakeRay(), workers, {}, []
    groups = [[n] for n in range(1, 8)]
    results = [result for result, _ in backend.play(lambda numbers: numbers[0] * 10, groups, lambda g: (g,))]
    assert results == [10, 20, 30, 40, 50, 60, 70]
    assert backend._ray.most == most


def test_what_ray_writes_to_stderr_while_torn_down_stays_off_the_terminal():
    """RayBackend.close runs inside ray_logs_muted: Ray's C++ log lines, written straight to
    file descriptor 2 (once in CI: "Check failed: Tried to complete task that was not
    pending" after a SIGTERM), do not reach the user; what Python prints afterwards does."""
    code = ("import os, sys\nfrom hexzero.mctsfw.backends import ray_logs_muted\n"
            "with ray_logs_muted():\n    os.write(2, b'[C++] Check failed\\n')\n"
            "print('interrupted: resume with ...', file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0 and result.stderr == "interrupted: resume with ...\n", result.stderr


@pytest.mark.parametrize("owned", [True, False])
def test_an_aborted_ray_backend_cancels_tasks_only_in_a_ray_it_does_not_shut_down(owned):
    """A local Ray this backend started goes down with its tasks (ray.shutdown), no cancel
    first: in CI a force-cancel that met a task just finishing ended a SIGTERMed run with
    status 1 and no word. In a Ray the caller keeps running, the tasks in flight are cancelled."""
    from hexzero.mctsfw.backends import RayBackend

    calls = []

    class Ray:
        def cancel(self, ref, force=False):
            calls.append(("cancel", ref, force))

        def is_initialized(self):
            return True

        def shutdown(self):
            calls.append(("shutdown",))

    backend = RayBackend.__new__(RayBackend)
    backend._ray, backend._owned, backend._guard, backend._running = Ray(), owned, None, ["task 1", "task 2"]
    backend._servers = {}
    backend.close(abort=True)
    assert calls == ([("shutdown",)] if owned else [("cancel", "task 1", True), ("cancel", "task 2", True)])
    assert backend._running == []
