"""The manual as a reader meets it: one design reference inside the repository, and each
figure stated once, where the other pages link to it."""

import re
import subprocess

from tests.test_plugins import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def tracked_text_files():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in names:
        path = ROOT / name
        if path.suffix in (".py", ".md", ".toml", ".yml", ".sh", "") and path.is_file():
            yield path


def test_the_design_is_a_page_of_the_site_and_every_reference_points_there():
    """A reader who clones the repository can follow every design reference: the outside
    design document is named nowhere, docs/design.md is in the site's navigation."""
    assert (ROOT / "docs" / "design.md").is_file()
    assert "design.md" in (ROOT / "mkdocs.yml").read_text()
    named = [str(path.relative_to(ROOT)) for path in tracked_text_files() if "DESIGN" + ".md" in path.read_text()]
    assert named == []


def test_the_time_of_the_two_commands_and_the_size_of_the_suite_are_said_once():
    """README, getting started and training once gave three times for the same two
    commands and two counts of the tests: now one place says each."""
    counts = [(page.name, hit) for page in PAGES
              for hit in re.findall(r"about [\d,]+ tests|[\d,]+ passed", page.read_text())]
    assert len(counts) <= 1, counts
    setup = [(page.name, hit) for page in PAGES
             for hit in re.findall(r"\(about \d+ minutes on a 2-core machine", page.read_text())]
    assert len(setup) <= 1, setup


def test_the_api_pages_read_every_module_the_package_installs(tmp_path):
    """The documentation site's API source is the package laid out as the wheel lays it
    out, subpackages included (``hexzero.mctsfw.search`` lives in ``mctsfw/search``)."""
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    target = hooks.lay_out_package(tmp_path / "api-src")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package in setuptools["packages"]:
        laid_out = sorted(p.name for p in target.joinpath(*package.split(".")).glob("*.py"))
        assert "__init__.py" in laid_out, package
    search = sorted(p.name for p in (ROOT / "mctsfw" / "search").glob("*.py"))
    assert sorted(p.name for p in (target / "hexzero" / "mctsfw" / "search").glob("*.py")) == search


def test_no_page_keeps_a_placeholder_for_a_figure():
    """A table or paragraph written before its figures were measured holds a name in
    capitals (a line or a table cell of its own) until they are: none is left."""
    left = [(page.name, hit) for page in PAGES for hit in
            re.findall(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|\|\s*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\s*\|",
                       page.read_text(), re.MULTILINE)]
    assert left == []
