"""The layout of a training run directory, and how its state is written safely.

    RUN_DIR/config.toml              the validated configuration the run was started with
    RUN_DIR/checkpoints/NET_epNNNN.keras   the cached networks (episode 0 = untrained)
    RUN_DIR/metrics.jsonl            one JSON line per finished episode
    RUN_DIR/loss.png                 the losses so far
    RUN_DIR/resume/epNNNN/           the state after the last finished episode: the
                                     network, the replay buffer and progress.json

The resume state is written into ``epNNNN.tmp`` and renamed into place in one step, so
a run killed at any moment finds either the previous episode's state or this one's,
never half of one; metrics lines past the committed episode are dropped on resume.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import tomli_w

from mctsfw.checkpoints import atomic_path

CHECKPOINT_PATTERN = re.compile(r"^(?P<net>.+)_(?:ep|gen)(?P<episode>\d+)\.keras$")


def list_checkpoints(directory: str | Path) -> list[tuple[int, Path]]:
    """The ``*_epNNNN.keras`` files of a directory, as (episode, path) sorted by episode."""
    found = []
    for path in Path(directory).glob("*.keras"):
        match = CHECKPOINT_PATTERN.match(path.name)
        if match:
            found.append((int(match["episode"]), path))
    return sorted(found)


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.config_path = self.path / "config.toml"
        self.checkpoints_dir = self.path / "checkpoints"
        self.metrics_path = self.path / "metrics.jsonl"
        self.plot_path = self.path / "loss.png"
        self.resume_dir = self.path / "resume"

    def exists(self) -> bool:
        return self.config_path.exists()

    # ---- the config snapshot ---------------------------------------------------------------
    def write_config(self, config: dict) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.config_path) as tmp:
            Path(tmp).write_text(tomli_w.dumps(config))

    # ---- checkpoints -----------------------------------------------------------------------
    def checkpoint_path(self, net_name: str, episode: int) -> Path:
        return self.checkpoints_dir / f"{net_name}_ep{episode:04d}.keras"

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
        with self.metrics_path.open("a") as f:
            f.write(json.dumps(record) + "\n")

    def read_metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        records = []
        for line in self.metrics_path.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut short by a kill
        return records

    def keep_metrics_upto(self, episode: int, key: str = "episode") -> list[dict[str, Any]]:
        """Drop the lines whose ``key`` is past ``episode`` (not committed); return the rest."""
        records = [r for r in self.read_metrics() if r.get(key, 0) <= episode]
        with atomic_path(self.metrics_path) as tmp:
            Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in records))
        return records


def save_progress(directory: Path, progress: dict[str, Any], rng: random.Random, np_rng: np.random.Generator) -> None:
    """Write ``progress`` and the states of both random streams into a resume directory."""
    state = {**progress, "python_rng": rng.getstate(), "numpy_rng": np_rng.bit_generator.state}
    (Path(directory) / "progress.json").write_text(json.dumps(state))


def load_progress(directory: Path) -> tuple[dict[str, Any], random.Random, np.random.Generator]:
    """The progress saved by ``save_progress`` and the two random streams, where they were."""
    progress = json.loads((Path(directory) / "progress.json").read_text())
    rng = random.Random()
    rng.setstate(_tuples(progress.pop("python_rng")))
    np_rng = np.random.default_rng()
    np_rng.bit_generator.state = progress.pop("numpy_rng")
    return progress, rng, np_rng


def _tuples(value: Any) -> Any:
    """JSON turned random.getstate()'s tuples into lists; setstate wants tuples back."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
