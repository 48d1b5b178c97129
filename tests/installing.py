"""Installing with pip as a user would, for the tests: a wheel into a fresh virtual
environment, or ``pip install DIR`` into a folder.

The sources are copied first so that the build leaves nothing in the checkout, and pip
runs offline with this environment's setuptools (``--no-build-isolation``, ``--no-deps``).
"""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: what the package is built from (pyproject.toml maps the folders into the one package hexzero)
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "hexzero", "mctsfw", "games", "nets", "plugins")
PIP_OFFLINE = ("--quiet", "--no-deps", "--no-build-isolation", "--no-index")


def copy_sources(source: Path, build: Path, parts: tuple[str, ...] | None = None) -> Path:
    """The files of ``source`` (only ``parts`` if given) copied to ``build``, without caches."""
    skip = shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    if parts is None:
        shutil.copytree(source, build, ignore=skip)
        return build
    build.mkdir(parents=True)
    for part in parts:
        if (source / part).is_dir():
            shutil.copytree(source / part, build / part, ignore=skip)
        else:
            shutil.copy2(source / part, build / part)
    return build


def pip(python: Path | str, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", *args], check=True, capture_output=True, text=True, timeout=300)


def pip_install(source: Path, target: Path, parts: tuple[str, ...] | None = None) -> Path:
    """``pip install SOURCE`` (not editable) into the folder ``target``; returns ``target``."""
    build = copy_sources(source, target.parent / f"{target.name}-source", parts)
    pip(sys.executable, "install", *PIP_OFFLINE, "--target", str(target), str(build))
    return target


def build_wheel(source: Path, out: Path, parts: tuple[str, ...] | None = None) -> Path:
    """``pip wheel SOURCE``: the wheel file built in ``out``."""
    build = copy_sources(source, out / "source", parts)
    pip(sys.executable, "wheel", *PIP_OFFLINE, "--wheel-dir", str(out / "wheels"), str(build))
    (wheel,) = (out / "wheels").glob("*.whl")
    return wheel


class Venv:
    """A fresh virtual environment (``python -m venv``, pip from Python's own bundle)."""

    def __init__(self, path: Path):
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=300)
        self.path = path
        self.python = path / "bin" / "python"
        self.site = Path(subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True).stdout.strip())

    def install(self, *wheels: Path) -> None:
        pip(self.python, "install", *PIP_OFFLINE, *map(str, wheels))

    def reach_dependencies(self) -> None:
        """Let it import what this environment has installed (numpy, keras, ...), after its
        own packages: a ``.pth`` line adds this environment's site-packages at the end of
        sys.path (its own ``.pth`` files, such as an editable install's, are not run)."""
        (self.site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
