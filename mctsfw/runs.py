"""Resumable learning runs: the run directory's layout, how its state is written safely,
and the skeleton both learning commands run on (``ResumableRun``).

    RUN_DIR/config.toml              the validated configuration the run runs with
    RUN_DIR/checkpoints/NET_epNNNN.keras   the cached networks (on-policy training: by
                                     episode; self-play: NET_genNNNN.keras, by generation;
                                     number 0 = untrained)
    RUN_DIR/metrics.jsonl            one JSON line per finished step (an episode, a game
                                     or a training step)
    RUN_DIR/loss.png                 the losses so far (on-policy training)
    RUN_DIR/tb/                      the metrics as TensorBoard curves (``mctsfw.curves``);
                                     ``tb/topp/``: the ratings of the last ``topp``
    RUN_DIR/resume/epNNNN/           the state after the last committed step: the
                                     network(s), the replay buffer and progress.json
    RUN_DIR/lock                     held (``flock``) by the process running the run

The resume state is written into ``epNNNN.tmp`` and renamed into place in one step, so
a run killed at any moment finds either the previous step's state or this one's, never
half of one; metrics lines past the committed step are dropped on resume. The lock
keeps a second process out of a run directory in use (two writers would interleave
their metrics); the system releases it when its holder dies, so a run killed with
``kill -9`` resumes without anyone removing a stale lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import tomli_w

from hexzero.mctsfw.checkpoints import atomic_path, play_settings
from hexzero.mctsfw.curves import TB_DIR, RunCurves
from hexzero.mctsfw.files import read_text
from hexzero.mctsfw.interrupts import StopSignals, interrupt_reported

CHECKPOINT_PATTERN = re.compile(r"^(?P<net>.+)_(?:ep|gen)(?P<episode>\d+)\.keras$")


class RunDirError(ValueError):
    """A run directory that cannot be used: not a directory, or in use by another process."""


class RunLockedError(RunDirError):
    """Another process runs the run in this directory."""


def checkpoint_name(net_name: str, tag: str, number: int) -> str:
    """``anet_ep0050.keras`` (tag "ep": an episode), ``pv_mlp_gen0003.keras`` (tag "gen")."""
    return f"{net_name}_{tag}{number:04d}.keras"


def list_checkpoints(directory: str | Path) -> list[tuple[int, Path]]:
    """The ``*_epNNNN.keras`` / ``*_genNNNN.keras`` files of a directory, as (number, path) sorted by number."""
    found = []
    for path in Path(directory).glob("*.keras"):
        match = CHECKPOINT_PATTERN.match(path.name)
        if match:
            found.append((int(match["episode"]), path))
    return sorted(found)


#: resolved run directory -> the lock file descriptor, for the run directories this process holds
_HELD: dict[str, int] = {}


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.config_path = self.path / "config.toml"
        self.checkpoints_dir = self.path / "checkpoints"
        self.metrics_path = self.path / "metrics.jsonl"
        self.plot_path = self.path / "loss.png"
        self.resume_dir = self.path / "resume"
        self.lock_path = self.path / "lock"
        self.tb_dir = self.path / TB_DIR
        #: the TensorBoard curves: every metrics line goes to both
        self.curves = RunCurves(self.tb_dir)

    def exists(self) -> bool:
        return self.config_path.exists()

    # ---- the lock --------------------------------------------------------------------------
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run directory for this process; ``RunLockedError`` if another one holds it.

        Reentrant within a process (a command may hold it around a trainer that takes it
        too). The lock file keeps the holder's pid, for the refusal to name it.
        """
        key = str(self.path.resolve())
        if key in _HELD:  # held already by this process: the outer holder releases it
            yield
            return
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(f"{self.path}: is not a directory (a run directory is needed)")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise RunDirError(f"{self.path}: cannot be used as a run directory ({error.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLockedError(f"{self.path} is in use by another process (pid {holder}): "
                                 "wait for it to finish, or stop it and resume") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _HELD[key] = fd
        try:
            yield
        finally:
            del _HELD[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # ---- the config snapshot ---------------------------------------------------------------
    def write_config(self, config: dict) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.config_path) as tmp:
            Path(tmp).write_text(tomli_w.dumps(config))

    # ---- checkpoints -----------------------------------------------------------------------
    def checkpoint_path(self, net_name: str, number: int, tag: str = "ep") -> Path:
        return self.checkpoints_dir / checkpoint_name(net_name, tag, number)

    def checkpoints(self) -> list[tuple[int, Path]]:
        return list_checkpoints(self.checkpoints_dir)

    # ---- the resume state ------------------------------------------------------------------
    def commit(self, episode: int, write: Callable[[Path], None]) -> None:
        """Write the state after ``episode`` with ``write(directory)``, then make it current."""
        self.resume_dir.mkdir(parents=True, exist_ok=True)
        final = self.resume_dir / f"ep{episode:04d}"
        tmp = self.resume_dir / f"ep{episode:04d}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        write(tmp)
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)  # the commit point
        for old in self.resume_dir.iterdir():
            if old != final:
                shutil.rmtree(old, ignore_errors=True)

    def latest(self) -> tuple[int, Path] | None:
        """(episode, directory) of the newest complete resume state, if any."""
        if not self.resume_dir.exists():
            return None
        done = [
            (int(p.name[2:]), p) for p in self.resume_dir.iterdir() if re.fullmatch(r"ep\d+", p.name) and p.is_dir()
        ]
        return max(done) if done else None

    # ---- metrics ---------------------------------------------------------------------------
    def append_metrics(self, record: dict[str, Any]) -> None:
        """Add a metrics line, and its scalars to the TensorBoard curves."""
        with self.metrics_path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        self.curves.add(record)

    def read_metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        records = []
        for line in read_text(self.metrics_path, "records").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut short by a kill
        return records

    def keep_metrics_upto(self, episode: int, key: str = "episode") -> list[dict[str, Any]]:
        """Drop the lines whose ``key`` is past ``episode`` (not committed), and rebuild the
        TensorBoard curves from the rest; return the rest."""
        records = [r for r in self.read_metrics() if r.get(key, 0) <= episode]
        with atomic_path(self.metrics_path) as tmp:
            Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in records))
        self.curves.rebuild(records)
        return records


def save_progress(directory: Path, progress: dict[str, Any], rng: random.Random, np_rng: np.random.Generator) -> None:
    """Write ``progress`` and the states of both random streams into a resume directory."""
    state = {**progress, "python_rng": rng.getstate(), "numpy_rng": np_rng.bit_generator.state}
    (Path(directory) / "progress.json").write_text(json.dumps(state))


def load_progress(directory: Path) -> tuple[dict[str, Any], random.Random, np.random.Generator]:
    """The progress saved by ``save_progress`` and the two random streams, where they were."""
    progress = json.loads(read_text(Path(directory) / "progress.json", "json"))
    rng = random.Random()
    rng.setstate(_tuples(progress.pop("python_rng")))
    np_rng = np.random.default_rng()
    np_rng.bit_generator.state = progress.pop("numpy_rng")
    return progress, rng, np_rng


def _tuples(value: Any) -> Any:
    """JSON turned random.getstate()'s tuples into lists; setstate wants tuples back."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class ResumableRun:
    """The skeleton of a resumable learning run, shared by on-policy training and self-play.

    A run is a sequence of numbered steps (an episode; a self-play game or a training
    step). ``train`` holds the run directory's lock, starts the run fresh or resumes it
    from the last committed state, takes the remaining steps one by one from ``steps``,
    writes each one's metrics line, commits the state, moves the progress bar, and
    returns a summary. A subclass says what its state is and what a step does:

    - ``settings.seed`` (-1: a new seed), ``net_name``, ``checkpoint_tag`` ("ep", "gen"),
      ``counter`` (the metrics key of the step number), ``length_key`` (the summary's key
      of ``completed()``), ``unit`` (the progress bar's)
    - ``new_state()``: build the network(s) and buffer of a fresh run (``seed``, ``rng``
      and ``np_rng`` are set); ``load_state(directory, progress)`` and
      ``save_state(directory)``: read and write them in a resume directory;
      ``progress_state()``: the counters to keep beside the random streams
    - ``steps()``: yields ``(metrics record, commit now?)`` after each step has changed
      the state; a step that does not commit now is committed with a later one
    - ``bar_counts() -> (done, total)``, ``bar_postfix(record)``, ``completed()``,
      ``next_command`` (the hexzero command a finished run's directory is for next: "topp"),
      and optionally ``finish()`` (after the last step) and ``close(aborted)`` (always);
      ``config_problems(config)`` (a classmethod): what only this kind of run refuses in a
      valid config, asked before the run directory is touched
    """

    counter = "step"
    checkpoint_tag = "ep"
    length_key = "steps"
    unit = "step"
    next_command = "topp"  # what the user runs on the finished run directory (the CLI's last line)

    def __init__(self, config: dict, run_dir: str | Path, progress: bool = True):
        self.config = config
        self.run = RunDir(run_dir)
        self.progress = progress
        self.step = 0
        #: called with ``completed()`` when a run resumes, before its first step (the CLI's line)
        self.on_resume: Callable[[int], None] | None = None

    # ---- what a subclass provides ------------------------------------------------------------
    @classmethod
    def config_problems(cls, config: dict) -> list[str]:
        return []

    def new_state(self) -> None:
        raise NotImplementedError

    def load_state(self, directory: Path, progress: dict[str, Any]) -> None:
        raise NotImplementedError

    def save_state(self, directory: Path) -> None:
        raise NotImplementedError

    def progress_state(self) -> dict[str, Any]:
        return {}

    def steps(self) -> Iterator[tuple[dict[str, Any], bool]]:
        raise NotImplementedError

    def bar_counts(self) -> tuple[int, int]:
        raise NotImplementedError

    def bar_postfix(self, record: dict[str, Any]) -> dict[str, Any]:
        return {}

    def completed(self) -> int:
        return self.step

    def finish(self) -> None:
        """After the last step of this session (not after an interruption)."""

    def close(self, aborted: bool) -> None:
        """Release what the run holds (worker processes); ``aborted`` when a step raised."""

    # ---- the skeleton ------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Run the steps that are left; return a summary of the run.

        Ctrl-C raises ``KeyboardInterrupt`` here (SIGTERM, from the command line,
        ``Terminated``), whatever a library it interrupted made of it, after the worker
        processes are stopped; the committed state stays.
        """
        with self.run.lock(), interrupt_reported() as interrupted:
            try:
                return self._train(interrupted)
            except (Exception, KeyboardInterrupt) as error:
                stop = interrupted.stop() if interrupted else None
                # an interrupted library call that raised something else: another error, or a plain
                # KeyboardInterrupt for a SIGTERM (Ray's wait and get turn whatever the handler
                # raised into that, and the run exited 130, not 143: seen in CI)
                if stop is not None and type(error) is not type(stop):
                    raise stop from error
                raise

    def _train(self, interrupted: StopSignals) -> dict[str, Any]:
        latest = self.run.latest()
        if latest is None:
            self._start_fresh()
        else:
            self._resume(*latest)
            if self.on_resume is not None:
                self.on_resume(self.completed())
        started, before = time.perf_counter(), self.completed()
        done, total = self.bar_counts()
        if latest is not None and done >= total:  # as long as asked already: no bar, no step
            self.close(False)
            return self._summary(before, started, nothing_to_do=True)
        bar = self._progress_bar()
        aborted = True
        try:
            for record, commit in self.steps():
                with interrupted.held():  # the step's line and its commit: both or neither
                    self.step += 1
                    self.run.append_metrics({self.counter: self.step, **record})
                    if commit:
                        self.commit()
                # held() also raises a Ctrl-C that a library caught and made nothing of
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(self.bar_postfix(record))
            aborted = False
        finally:
            if bar is not None:
                bar.close()
            self.close(aborted)
        self.finish()
        return self._summary(before, started)

    def _summary(self, before: int, started: float, nothing_to_do: bool = False) -> dict[str, Any]:
        """The run's length now (``length_key``), how much of it this session added
        (``this_time``, in the same unit), the seconds, the checkpoints; ``nothing_to_do``
        when the run was as long as asked already."""
        return {
            "run_dir": str(self.run.path),
            self.length_key: self.completed(),
            "this_time": self.completed() - before,
            "nothing_to_do": nothing_to_do,
            "seconds": time.perf_counter() - started,
            "checkpoints": [str(p) for _, p in self.run.checkpoints()],
        }

    def _start_fresh(self) -> None:
        seed = self.settings.seed
        self.seed = seed if seed >= 0 else random.SystemRandom().randrange(2**31)
        self.rng = random.Random(self.seed)
        self.np_rng = np.random.default_rng(self.seed)
        self.step = 0
        self.new_state()
        self.run.write_config(self.config)
        self.run.keep_metrics_upto(0, key=self.counter)
        self.run.checkpoints_dir.mkdir(parents=True, exist_ok=True)
        self.save_checkpoint(0)  # number 0: the untrained network
        self.commit()

    def _resume(self, step: int, directory: Path) -> None:
        progress, self.rng, self.np_rng = load_progress(directory)
        self.seed = progress.pop("seed")
        self.step = step
        self.load_state(directory, progress)
        self.run.keep_metrics_upto(step, key=self.counter)
        self.run.write_config(self.config)  # the snapshot follows what may change on resume (the length)

    def commit(self) -> None:
        """Make the current state the one a resumed run starts from."""
        def write(directory: Path) -> None:
            self.save_state(directory)
            save_progress(directory, {**self.progress_state(), "seed": self.seed}, self.rng, self.np_rng)

        self.run.commit(self.step, write)

    def checkpoint_path(self, number: int) -> Path:
        return self.run.checkpoint_path(self.net_name, number, self.checkpoint_tag)

    def save_checkpoint(self, number: int) -> None:
        """Write checkpoint ``number``; it carries the run's game and the search its
        config plays a saved network with (``mctsfw.checkpoints.play_settings``)."""
        self.net.play_settings = play_settings(self.config, self.net)
        self.net.save(self.checkpoint_path(number))

    def _progress_bar(self):
        if not self.progress:
            return None
        from tqdm import tqdm

        done, total = self.bar_counts()
        return tqdm(total=total, initial=done, unit=self.unit, dynamic_ncols=True)
