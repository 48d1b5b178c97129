"""Another git revision of this repository, measured beside the working tree in the same run.

A speed figure moves with the machine (another job, the clock, the evening): measured
alone, a change's effect hides in that noise. The benchmarks' ``--against REV`` extracts
REV into a temporary folder (``git archive``) and measures it and this tree in turns,
each measurement in a fresh process, so a busy machine slows both alike and the ratio
says what the code changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def trees(against: str | None) -> Iterator[dict[str, Path]]:
    """``{"this tree": ROOT}``, and ``{REV: a folder holding REV's files}`` with ``against``
    (removed afterwards). A revision git does not know stops with git's message."""
    with tempfile.TemporaryDirectory() as folder:
        found = {"this tree": ROOT}
        if against:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", against], capture_output=True)
            if archive.returncode:
                sys.exit(f"--against {against}: {archive.stderr.decode().strip()}")
            subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
            found[against] = Path(folder)
        yield found


def run_in(tree: Path, code: str, *args, environ: dict[str, str] | None = None) -> object:
    """Run ``code`` in a fresh Python process with ``tree`` first on sys.path (its
    ``sys.argv[1:]``: ``args`` as JSON; ``environ``: variables set for it) and return the
    JSON of its last line of output."""
    source = (f"import sys; sys.path.insert(0, {str(tree)!r})\n"
              # an editable install's finder would answer for a module the revision lacks
              # (``hexzero.mctsfw.search`` before it existed) with this checkout's
              "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n"
              + code)
    done = subprocess.run([sys.executable, "-c", source, *(json.dumps(a) for a in args)], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, **(environ or {})})
    if done.returncode:
        raise RuntimeError(f"the measurement in {tree} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])
