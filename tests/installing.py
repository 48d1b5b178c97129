"""Installing with pip as a user would (``pip install DIR``), into a folder, for the tests.

The sources are copied first so that the build leaves nothing in the checkout, and pip
runs offline with this environment's setuptools (``--no-build-isolation``, ``--no-deps``).
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: what the package is built from (pyproject.toml lists the packages)
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "cli.py", "mctsfw", "games", "nets", "plugins")


def pip_install(source: Path, target: Path, parts: tuple[str, ...] | None = None) -> Path:
    """``pip install SOURCE`` (not editable) into ``target``; returns ``target``."""
    build = target.parent / f"{target.name}-source"
    if parts is None:
        shutil.copytree(source, build, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    else:
        build.mkdir(parents=True)
        for part in parts:
            copy = shutil.copytree if (source / part).is_dir() else shutil.copy2
            copy(source / part, build / part, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                                 if (source / part).is_dir() else {}))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(build)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    return target
