"""Our GTP engine driven by real GUIs on a virtual screen: Quarry for Go, HexGui for Hex.

    python scripts/gui_check.py quarry [--moves 12] [--out docs/quarry-go.png] [--player mcts] [--search-games 200]
    python scripts/gui_check.py hexgui --hexgui PATH [--moves 8] [--out docs/hexgui-hex.png]

Needs the system packages ``xvfb``, ``xdotool`` and ``imagemagick``, and the GUI:
Debian's ``quarry`` (``apt-get install -y quarry xvfb xdotool imagemagick``), or HexGui
built from its source (``git clone https://github.com/ryanbhayward/hexgui && cd hexgui &&
ant``, with ``default-jdk`` and ``ant``; ``--hexgui`` names that folder). The script
starts Xvfb and the GUI with a home of its own (a temporary HOME), our engine (``cli.py
gtp``) attached to it: Quarry gets it in its GTP engine list and a new 9x9 game (the
engine White, a person Black, komi 7.5) through its own dialogs; HexGui gets it with
``-program`` on its 11x11 board (it answers every move: ``auto-respond``). Then the
script clicks Black's moves on the board as a person would and waits for each of the
engine's answers. Every command the GUI sends and every answer are logged
(``--log-dir``); at the end the screen is saved (``--out``) and the script prints what
the GUI sent, and exits 1 if the engine refused any of it or fewer moves were played
than asked. Everything it started is stopped when it ends.

The window positions below are Quarry 0.2's and HexGui 0.9's on a screen without a
window manager: every window opens at the top left.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hexzero.plugins.gtp import _die_with_parent  # noqa: E402  (Linux: what we start dies with us)
PROGRAMS = {"Xvfb": "xvfb", "xdotool": "xdotool", "import": "imagemagick"}
LETTERS = "ABCDEFGHJ"  # GTP's columns of a 9x9 board (no I)
#: where Quarry 0.2 draws a 9x9 board in a 900 x 850 game window: column A, row 1, the spacing
BOARD_X0, BOARD_Y1, STEP = 78, 703, 59
#: Black's moves in Go, tried in this order (one already taken is skipped)
BLACK = ["E5", "C3", "G7", "C7", "G3", "D5", "F5", "E3", "E7", "B5", "H5", "D2", "F8", "B8", "H2", "J5", "A5"]
#: where HexGui 0.9 draws cell a1 of its 11x11 board, and the steps along a row and down a row
HEX_A1, HEX_COLUMN, HEX_ROW = (108, 184), 34, (17, 30)
#: Black's moves in Hex (HexGui's cells: column letter, row number)
HEX_BLACK = ["f6", "e7", "g5", "d8", "h4", "c9", "i3", "f5", "e6", "g4", "d7", "h3", "b10", "j2", "f7", "e8"]

QUARRY_CONFIG = """\
[GTP Engine "hexzero"]
Screen name format	= "%n %v"
Name			= "hexzero"
Command line		= "{command}"
Supported games		= "Go"

[New Game Parameters]
Game			= "Go"
White player name	= "hexzero"
White is computer	= true
Engine playing white	= "hexzero"
Black player name	= "person"
Black is computer	= false

[New Go Game Parameters]
Board size		= 9
Handicap is fixed	= true
Fixed handicap		= 0
Free handicap		= 0
Komi			= 7.5
Time control type	= 0
"""


def find(program: str) -> str | None:
    return shutil.which(program) or shutil.which(program, path="/usr/games")


class Screen:
    """Xvfb and xdotool: windows found by name, clicks as a mouse makes them."""

    def __init__(self, display: str):
        self.env = {**os.environ, "DISPLAY": display}

    def xdo(self, *args: str) -> str:
        return subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=60).stdout

    def window(self, name: str, seconds: float = 60.0) -> str:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            found = self.xdo("search", "--onlyvisible", "--name", name).split()
            if found:
                return found[0]
            time.sleep(0.3)
        raise SystemExit(f"Quarry's window {name!r} did not open in {seconds:g} s")

    def place(self, window: str, width: int | None = None, height: int | None = None) -> None:
        self.xdo("windowmove", window, "0", "0")
        if width:
            self.xdo("windowsize", window, str(width), str(height))
        time.sleep(0.8)

    def click(self, x: int, y: int) -> None:
        self.xdo("mousemove", str(x), str(y))
        time.sleep(0.2)
        self.xdo("mousedown", "1")  # GTK wants the press and the release apart
        time.sleep(0.15)
        self.xdo("mouseup", "1")

    def save(self, path: Path, width: int, height: int) -> None:
        subprocess.run(["import", "-window", "root", "-crop", f"{width}x{height}+0+0", str(path)], env=self.env,
                       check=True, timeout=60)


def free_display() -> str:
    for number in range(90, 200):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and not Path(f"/tmp/.X{number}-lock").exists():
            return f":{number}"
    raise SystemExit("no free X display number between :90 and :199")


def engine_pids(home: Path) -> list[int]:
    """The processes whose command line names the run's folder: the engine and its log pipes."""
    found = subprocess.run(["pgrep", "-f", str(home)], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found if int(pid) != os.getpid()]


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


class Gui:
    """One GUI's part: what it needs, how it starts with our engine, how Black's move is clicked."""

    game, size, screenshot, moves = "go", 9, (900, 850), BLACK

    def __init__(self, args: argparse.Namespace, home: Path, wrapper: Path):
        self.args, self.home, self.wrapper = args, home, wrapper

    def missing(self) -> list[str]:
        return []

    def start(self, screen: Screen) -> subprocess.Popen:
        raise NotImplementedError

    def point(self, move: str) -> tuple[int, int]:
        raise NotImplementedError

    @staticmethod
    def is_move(text: str) -> bool:
        """Whether an answer is a move (a cell or vertex, a pass, a resignation, HexGui's swap)."""
        return bool(re.fullmatch(r"[A-Za-z]\d{1,2}|pass|resign|swap-pieces", text.strip(), re.IGNORECASE))


class Quarry(Gui):
    def missing(self) -> list[str]:
        return [] if find("quarry") else ["quarry"]

    def start(self, screen: Screen) -> subprocess.Popen:
        (self.home / ".quarry").write_text(QUARRY_CONFIG.format(command=self.wrapper))
        process = subprocess.Popen([find("quarry")], env={**screen.env, "HOME": str(self.home)},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                   preexec_fn=_die_with_parent)
        screen.place(screen.window("Quarry Control Center"))
        screen.click(95, 26)  # New Game
        screen.place(screen.window("New Game"))
        screen.click(429, 422)  # Forward: the players as the configuration set them
        time.sleep(1.0)
        screen.click(432, 422)  # Play: 9x9, komi 7.5
        screen.place(screen.window("hexzero"), *self.screenshot)
        return process

    def point(self, move: str) -> tuple[int, int]:
        column, row = LETTERS.index(move[0]), int(move[1:])
        return BOARD_X0 + STEP * column, BOARD_Y1 - STEP * (row - 1)


class HexGui(Gui):
    game, size, screenshot, moves = "hex", 11, (900, 610), HEX_BLACK

    def missing(self) -> list[str]:
        jar = Path(self.args.hexgui or "") / "lib" / "hexgui.jar"
        missing = [] if find("java") else ["default-jdk"]
        return missing + ([] if jar.is_file() else [f"HexGui built (--hexgui DIR with {jar.relative_to(jar.parents[1])})"])

    def start(self, screen: Screen) -> subprocess.Popen:
        jar = Path(self.args.hexgui) / "lib" / "hexgui.jar"
        process = subprocess.Popen([find("java"), f"-Duser.home={self.home}", "-jar", str(jar), "-program", str(self.wrapper)],
                                   env={**screen.env, "HOME": str(self.home)}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        screen.place(screen.window("HexGui"))
        time.sleep(3.0)  # it connects the program: name, version, hexgui-analyze_commands, boardsize
        return process

    def point(self, move: str) -> tuple[int, int]:
        column, row = ord(move[0]) - ord("a"), int(move[1:]) - 1
        return HEX_A1[0] + HEX_COLUMN * column + HEX_ROW[0] * row, HEX_A1[1] + HEX_ROW[1] * row


GUIS = {"quarry": Quarry, "hexgui": HexGui}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gui", choices=sorted(GUIS), help="quarry (Go) or hexgui (Hex)")
    parser.add_argument("--hexgui", help="the folder of a built HexGui (its lib/hexgui.jar)")
    parser.add_argument("--moves", type=int, default=12, help="Black's moves to play")
    parser.add_argument("--out", help="the screenshot (default: docs/quarry-go.png, docs/hexgui-hex.png)")
    parser.add_argument("--player", default="mcts", help="the engine's player (cli.py gtp --p)")
    parser.add_argument("--search-games", type=int, default=200)
    parser.add_argument("--log-dir", help="where the GTP traffic is logged (default: a temporary folder)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix=f"hexzero-{args.gui}-"))
    logs = Path(args.log_dir) if args.log_dir else home
    logs.mkdir(parents=True, exist_ok=True)
    sent, answered = logs / "gtp-in.log", logs / "gtp-out.log"
    for path in (sent, answered):
        path.write_text("")
    marker = home / "engine.toml"  # in the engine's command line: how its processes are found at the end
    marker.write_text("[mcts]\nseed = 1\n")
    wrapper = home / "hexzero-gtp"
    gui = GUIS[args.gui](args, home, wrapper)
    missing = [package for program, package in PROGRAMS.items() if find(program) is None] + gui.missing()
    if missing:
        print(f"error: {args.gui} needs: {', '.join(missing)}", file=sys.stderr)
        return 2
    engine = [sys.executable, str(ROOT / "cli.py"), "gtp", "--config", str(marker), "--game", gui.game,
              "--size", str(gui.size), "--p", args.player, "--search-games", str(args.search_games)]
    wrapper.write_text(f"#!/bin/sh\n# what the GUI sends and what the engine answers, logged on the way\n"
                       f"tee -a {shlex.quote(str(sent))} | {shlex.join(engine)} 2>>{shlex.quote(str(logs / 'gtp-err.log'))}"
                       f" | tee -a {shlex.quote(str(answered))}\n")
    wrapper.chmod(0o755)
    out = Path(args.out or ROOT / "docs" / ("quarry-go.png" if args.gui == "quarry" else "hexgui-hex.png"))

    display = free_display()
    started: list[subprocess.Popen] = []
    played = 0
    try:
        started.append(subprocess.Popen([find("Xvfb"), display, "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent))
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{display[1:]}").exists():
                break
            time.sleep(0.1)
        screen = Screen(display)
        started.append(gui.start(screen))

        tried = list(gui.moves)
        while played < args.moves and tried:
            move = tried.pop(0)
            taken = {line.split()[-1].lower() for line in lines(sent) if line.startswith("play ")}
            taken |= {line[2:].strip().lower() for line in lines(answered) if line.startswith("= ")}
            if move.lower() in taken:
                continue
            before = len([line for line in lines(sent) if line.startswith("genmove")])
            plays = len([line for line in lines(sent) if line.startswith("play ")])
            for _ in range(5):  # a click while the GUI still draws the last answer may be lost: again
                screen.click(*gui.point(move))
                time.sleep(2.0)
                if len([line for line in lines(sent) if line.startswith("play ")]) > plays:
                    break
            end = time.monotonic() + 180  # the first answer may wait for compiled code (Go's playouts)
            while time.monotonic() < end:  # the GUI sends play and genmove; the engine answers
                asked = [line for line in lines(sent) if line.startswith("genmove")]
                moves = [line for line in lines(answered) if line.startswith("= ") and gui.is_move(line[2:].strip())]
                if len(asked) > before and len(moves) >= len(asked):
                    break
                time.sleep(0.3)
            else:
                print(f"the GUI sent no genmove after Black's {move}, or the engine did not answer", file=sys.stderr)
                break
            played += 1
            time.sleep(1.0)
        time.sleep(1.5)  # the GUI draws the last answer
        out.parent.mkdir(parents=True, exist_ok=True)
        screen.save(out, *gui.screenshot)
    finally:
        for process in reversed(started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM) if process is not started[0] else process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        end = time.monotonic() + 15  # the engine leaves when the GUI's pipe closes; else it is ended
        while time.monotonic() < end and engine_pids(home):
            time.sleep(0.3)
        for pid in engine_pids(home):
            os.kill(pid, signal.SIGKILL)

    commands = [line.split()[0] for line in lines(sent) if line.strip()]
    refused = [line for line in lines(answered) if line.startswith("?")]
    print(f"{args.gui} sent {len(commands)} commands: "
          + ", ".join(f"{name} x{commands.count(name)}" for name in dict.fromkeys(commands)))
    print(f"Black played {played} moves by clicks; the engine answered {commands.count('genmove')} genmove; "
          f"refused: {len(refused)}" + (f" ({'; '.join(refused)})" if refused else ""))
    print(f"screenshot: {out}; the GTP traffic: {sent}, {answered}")
    return 1 if refused or played < args.moves else 0


if __name__ == "__main__":
    sys.exit(main())
