"""The compiled code's on-disk cache (``mctsfw.jit``): a kernel that calls into another
file runs that file's new code after it changes, and a cache is still used when nothing did."""

import subprocess
import sys
import textwrap
from pathlib import Path

from hexzero.games import hex_kernels, hex_vc
from hexzero.mctsfw import jit

REPO = Path(__file__).resolve().parent.parent

RUN = """
import sys, time
from pathlib import Path
from hexzero.mctsfw import jit
jit._BASE = Path(sys.argv[1])                # the package is the folder made by the test
jit.package_fingerprint.cache_clear()         # read already for the core's own kernels
sys.path.insert(0, str(jit._BASE / "games"))
import caller
print(caller.twice_plus_one(5), sum(caller.twice_plus_one.stats.cache_hits.values()))
"""

CALLEE = """
from hexzero.mctsfw.jit import njit

@njit(cache=True)
def plus_one(x):
    return x + {step}
"""

CALLER = """
from hexzero.mctsfw.jit import njit
from callee import plus_one

@njit(cache=True)
def twice_plus_one(x):
    return plus_one(2 * x)
"""


def run(base):
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(base)], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    value, hits = done.stdout.split()
    return int(value), int(hits)


def test_a_caller_runs_its_callees_new_code_after_an_edit(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    (games / "callee.py").write_text(textwrap.dedent(CALLEE.format(step=1)))
    (games / "caller.py").write_text(textwrap.dedent(CALLER))
    first, hits = run(tmp_path)
    assert (first, hits) == (11, 0)
    assert run(tmp_path) == (11, 1)  # compiled once, then read from the cache
    # only the callee's file changes: numba alone would give the caller's cached 11
    (games / "callee.py").write_text(textwrap.dedent(CALLEE.format(step=100)))
    assert run(tmp_path) == (110, 0)
    assert run(tmp_path) == (110, 1)


def test_every_kernel_file_of_the_package_is_in_the_stamp():
    names = {path.name for path in jit.kernel_files()}
    for module in (hex_kernels, hex_vc):
        assert Path(module.__file__).name in names
    assert hex_vc.prune._cache._cache_file._source_stamp[1] == jit.package_fingerprint()
    # every file that compiles anything does so through the one decorator
    for root in jit.ROOTS:
        for path in (REPO / root).rglob("*.py"):
            if path.name == "jit.py":
                continue
            text = path.read_text(encoding="utf-8")
            assert "from numba import njit" not in text, path
            if "@njit" in text:
                assert path.name in names, path
