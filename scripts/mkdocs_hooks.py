"""mkdocs hooks (mkdocs.yml names this file): the API pages read the package as it installs.

mkdocstrings finds modules by walking folders, and in a checkout ``hexzero.mctsfw`` is the
folder ``mctsfw/`` (pyproject.toml maps each folder to its place in the package). Before
the build, the package is laid out as the wheel lays it out, in ``build/api-src``, which is
where mkdocs.yml tells mkdocstrings to look.
"""

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API_SOURCE = ROOT / "build" / "api-src"


def package_folder(package: str, folders: dict[str, str]) -> Path:
    """Where a package's modules are in the checkout, as setuptools finds them: the folder
    ``package-dir`` maps it or its nearest parent to, the rest of its name below that."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        parent = ".".join(parts[:cut])
        if parent in folders:
            return ROOT / folders[parent] / Path(*parts[cut:])
    return ROOT / Path(*parts)


def lay_out_package(target: Path = API_SOURCE) -> Path:
    """Copy each package of pyproject.toml to its place under ``target``; returns ``target``."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = setuptools.get("package-dir", {})
    shutil.rmtree(target, ignore_errors=True)
    for package in setuptools["packages"]:
        source = package_folder(package, folders)
        destination = target.joinpath(*package.split("."))
        destination.mkdir(parents=True, exist_ok=True)
        for module in source.glob("*.py"):
            shutil.copy2(module, destination / module.name)
    return target


def on_startup(command: str, dirty: bool) -> None:  # before mkdocstrings reads its paths
    lay_out_package()


def on_pre_build(config) -> None:  # mkdocs serve: each rebuild reads the edited sources
    lay_out_package()
