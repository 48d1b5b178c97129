"""scripts/device_slim.sh: models/ taken out of what travels to a lent device machine (the
tracked files and the untracked ones not ignored, at most 64 MiB), the files named kept in,
and put back as it was, in a repository of its own with a models/ over the limit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path):
    """A repository with the script, a README and a models/ of 70 MiB (a sparse file of zeros)."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "device_slim.sh", repo / "scripts")
    (repo / "README.md").write_text("hello\n")
    for folder in ("models/big", "models/small"):
        (repo / folder).mkdir(parents=True)
    with open(repo / "models/big/net.keras", "wb") as big:
        big.truncate(70 * 2**20)
    (repo / "models/small/net.keras").write_bytes(b"weights")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "models")
    return repo


def slim(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(repo / "scripts" / "device_slim.sh"), *args], capture_output=True, text=True,
                          timeout=60)


def test_models_go_out_of_what_travels_and_come_back_as_they_were(repo):
    before = slim(repo, "size")
    assert before.returncode == 1 and "OVER the device tool's 64 MiB" in before.stdout

    out = slim(repo, "on", "models/small/net.keras")
    assert out.returncode == 0, out.stderr
    assert "under the device tool's 64 MiB" in out.stdout
    assert git(repo, "ls-files", "models").split() == ["models/small/net.keras"]
    assert git(repo, "ls-files", "--others", "--exclude-standard").split() == []  # models/ ignored, not untracked
    assert (repo / "models/big/net.keras").stat().st_size == 70 * 2**20  # the files stay on disk

    again = slim(repo, "on")
    assert again.returncode == 2
    assert again.stderr.strip() == ("device_slim.sh: models/ is out already "
                                    "(bash scripts/device_slim.sh off puts it back)")

    back = slim(repo, "off")
    assert back.returncode == 0, back.stderr
    assert git(repo, "status", "--porcelain") == ""
    assert "device_slim.sh" not in (repo / ".git/info/exclude").read_text()
    assert slim(repo, "size").returncode == 1


@pytest.mark.parametrize("keep, message", [
    ("README.md", "device_slim.sh: README.md: only files under models/ are kept in"),
    ("models/none.keras", "device_slim.sh: models/none.keras: not a tracked file under models/"),
])
def test_a_file_it_cannot_keep_in_is_refused_and_nothing_changes(repo, keep, message):
    done = slim(repo, "on", keep)
    assert done.returncode == 2
    assert done.stderr.strip() == message
    assert git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "ls-files", "models").split()) == 2


def test_staged_changes_under_models_are_not_lost(repo):
    (repo / "models/small/net.keras").write_bytes(b"better weights")
    git(repo, "add", "models/small/net.keras")
    done = slim(repo, "on")
    assert done.returncode == 2
    assert done.stderr.strip() == "device_slim.sh: models/ has changes staged; commit or unstage them first"
    assert git(repo, "diff", "--cached", "--name-only").split() == ["models/small/net.keras"]
