"""Every reader of files refuses what is not a regular file, or is larger than its kind may
be, with one line and without hanging (``mctsfw.files``): SGF (GTP ``loadsgf``, ``play
--from``), configs, models, game records, run files, TOPP results."""

from __future__ import annotations

import os

import pytest

from hexzero import mctsfw
from hexzero.mctsfw import files
from hexzero.mctsfw.checkpoints import ModelFileError, load_net
from hexzero.mctsfw.config import ConfigError, read_toml
from hexzero.mctsfw.records import read_game_lines
from hexzero.mctsfw.sgf import SgfError, read_sgf_file
from hexzero.plugins.gtp import GtpEngine
from tests.test_plugins import run_cli


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.sgf"
    os.mkfifo(path)  # opening it to read would wait for a writer for ever
    return path


@pytest.mark.parametrize("special, reason", [("/dev/zero", "character device"), ("fifo", r"pipe \(FIFO\)")])
def test_special_files_are_refused_at_once(special, reason, fifo):
    path = fifo if special == "fifo" else special
    with pytest.raises(files.FileRefused, match=reason):
        files.read_bytes(path, "sgf")
    with pytest.raises(SgfError, match=f"cannot be read.*{reason}"):
        read_sgf_file(path)
    with pytest.raises(ConfigError, match=reason):
        read_toml(path)
    with pytest.raises(OSError, match=reason):
        read_game_lines(path)
    with pytest.raises(ModelFileError, match=reason):
        load_net(path, mctsfw.make_game("hex", size=5))


def test_files_larger_than_their_kind_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.sgf"
    path.write_text("(;GM[11]SZ[5]" + ";B[aa]" * 100 + ")")
    monkeypatch.setitem(files.LIMITS, "sgf", 200)
    with pytest.raises(SgfError, match="more than the 200 bytes a sgf file may have"):
        read_sgf_file(path)
    monkeypatch.setitem(files.LIMITS, "sgf", 10_000)
    assert files.read_text(path, "sgf").startswith("(;GM[11]")
    with pytest.raises(IsADirectoryError):
        files.read_bytes(tmp_path, "config")
    with pytest.raises(FileNotFoundError):
        files.read_bytes(tmp_path / "missing", "config")


def test_gtp_loadsgf_of_an_endless_file_is_refused_and_the_engine_goes_on(fifo):
    engine = GtpEngine("go", {"size": 9}, lambda game: mctsfw.make_actor("random", game, seed=1))
    engine.handle("play b D4")
    for path in ("/dev/zero", str(fifo)):
        response = engine.handle(f"loadsgf {path}")
        assert response.startswith("? cannot load file:") and "not a regular file" in response
    assert engine.moves == [engine.game.parse_action("D4", engine.game.initial_state())]
    assert engine.handle("genmove w").startswith("= ")


def test_the_cli_refuses_special_files_in_one_line(fifo):
    for args in (["play", "--config", "/dev/zero"],
                 ["play", "--game", "go", "--size", "9", "--p1", "random", "--p2", "random", "--no-display",
                  "--from", str(fifo)],
                 ["play", "--game", "hex", "--p1", str(fifo), "--p2", "random", "--no-display"]):
        result = run_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr
        assert "not a regular file" in result.stderr or "must be" in result.stderr
