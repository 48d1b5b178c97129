"""scripts/selfplay_burst.sh: a burst of self-play on a lent machine, its run coming back as
files that resume on the first machine (here both machines are this one, Keras on
TensorFlow: the script's own Python and backend)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BURST = ROOT / "scripts" / "selfplay_burst.sh"
ENV = {**os.environ, "PYTHON": sys.executable, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "2"}
NIM = ["--set", 'game="nim"', "--set", "selfplay.workers=1", "--set", "selfplay.games_per_generation=4",
       "--set", "selfplay.search_games=8", "--set", "selfplay.sgf=false"]


def test_a_burst_refuses_a_time_that_is_no_whole_number(tmp_path):
    done = subprocess.run(["bash", str(BURST), str(tmp_path / "run"), "ten", str(tmp_path / "out")], env=ENV,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["selfplay_burst.sh: SECONDS must be a whole number, not 'ten'"]
    assert not (tmp_path / "run").exists()


def test_a_burst_comes_back_as_files_that_resume_where_it_stopped(tmp_path):
    done = subprocess.run(["bash", str(BURST), str(tmp_path / "there"), "15", str(tmp_path / "out"), *NIM], env=ENV,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr
    pieces = sorted((tmp_path / "out").glob("run.tgz.*"))
    assert pieces and all(p.stat().st_size <= 15 * 2**20 for p in pieces)
    here = tmp_path / "here"
    here.mkdir()
    with open(tmp_path / "run.tgz", "wb") as whole:
        for piece in pieces:
            whole.write(piece.read_bytes())
    with tarfile.open(tmp_path / "run.tgz") as archive:
        archive.extractall(here, filter="data")
    generations = sum('"kind": "generation"' in line for line in (here / "metrics.jsonl").read_text().splitlines())
    assert generations >= 1 and list((here / "checkpoints").glob("*.keras"))
    # the first machine goes on from it: one generation more, then done
    more = subprocess.run([sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--resume", str(here),
                           "--set", f"selfplay.generations={generations + 1}"], env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert more.returncode == 0, more.stderr
    assert f"after {generations} generation" in more.stdout + more.stderr
    after = sum('"kind": "generation"' in line for line in (here / "metrics.jsonl").read_text().splitlines())
    assert after == generations + 1
