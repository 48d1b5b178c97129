"""Terminal displays of actual games (never rollouts).

The board is the game's own picture (``Game.render_after``: the last move marked where
the game can show it). On a terminal that supports them the stones are coloured (player
1 red, player 2 blue, the last move bright) and an agent's thinking is one line
rewritten in place (``\\r``) while it searches; into a pipe or a file nothing is
coloured, and each searched move gets one summary line instead.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from typing import TextIO

from hexzero import mctsfw
from hexzero.mctsfw.game import Game, State
from hexzero.mctsfw.search import SearchProgress
from hexzero.mctsfw.schema import Section, Setting

#: ``[show]``: how actual games are shown (read by every command that draws games)
SHOW_SECTION = Section("show", "showing actual games (never rollouts)", [
    Setting("enabled", True, "draw the board after every actual move (cli.py play)", resumable=True),
    Setting("delay", 0.0, "seconds to pause after each drawn move", low=0, resumable=True),
])

#: ANSI styles of the two players' stones, and of the last move's
STONE_STYLES = {"X": "\033[31m", "O": "\033[34m"}
LAST_MOVE_STYLE = "\033[1;7m"  # bold, reversed
RESET = "\033[0m"
CLEAR_LINE = "\r\033[K"
#: a stone is X or O standing alone (not inside a word), maybe in the brackets of a last move
STONE = re.compile(r"\((X|O)\)|(?<![A-Za-z])(X|O)(?![A-Za-z])")


def colour_supported(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that takes ANSI colours: not a pipe or file, no
    ``NO_COLOR`` in the environment (https://no-color.org), a ``TERM`` other than dumb."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def colour_board(picture: str) -> str:
    """The stones of a board picture coloured, a stone in brackets (the last move) bright.
    Only lines that hold a board cell (a ``.``, a ``+`` or a bracket) or a legend are
    touched, so that a row of column letters (Go's ``O`` column) stays plain; in a line
    about a player (``player 1 (X) to move``) brackets are words, not a mark."""
    def painter(mark: bool):
        def paint(match: re.Match) -> str:
            if match.group(1):
                stone = match.group(1)
                style = (LAST_MOVE_STYLE if mark else "") + STONE_STYLES[stone]
                return f"{style}({stone}){RESET}" if mark else f"({style}{stone}{RESET})"
            return f"{STONE_STYLES[match.group(2)]}{match.group(2)}{RESET}"
        return paint

    board, words = painter(True), painter(False)
    return "\n".join(STONE.sub(words if line.startswith("player") else board, line) if re.search(r"[.+()=]", line)
                     else line for line in picture.split("\n"))


def thinking_line(progress: SearchProgress, game: Game | None) -> str:
    """One line of a search's progress: search games, seconds, the win estimate of the
    player to move (or the proven result: "proven: wins in 3"), and the move in front with
    its share of the visits."""
    text = f"{progress.simulations} search games, {progress.seconds:.1f} s, {progress.outlook()}"
    if progress.best_action is not None:
        name = game.action_to_text(progress.best_action) if game is not None else str(progress.best_action)
        text += f", best {name} ({progress.share(progress.best_action):.0%} of visits)"
    return text


class TerminalDisplay:
    """Prints the board after every actual move, with an optional pause; ``thinking``
    (hand it to ``Actor.watch``) shows an agent's search as it goes.

    ``colour``: None (the default) colours when the stream is a terminal that supports
    it (``colour_supported``); False never (``cli.py play --no-color``); True always."""

    name = "terminal"
    description = "text pictures in the terminal (Hex as a diamond, NIM as piles, Connect Four, Gomoku and Go as grids)"

    def __init__(self, delay: float = 0.0, stream: TextIO | None = None, colour: bool | None = None):
        self.delay = float(delay)
        self.stream = stream or sys.stdout
        self.live = colour_supported(self.stream)  # a terminal: the thinking line is rewritten in place
        self.colour = self.live if colour is None else bool(colour)
        self.game: Game | None = None
        self._thought: SearchProgress | None = None  # the last progress of the search under way
        self._line_open = False  # a thinking line waits to be cleared

    def thinking(self, progress: SearchProgress) -> None:
        """A search's progress (several times a move, and once at its end)."""
        self._thought = progress
        if self.live:
            width = shutil.get_terminal_size().columns - 1  # a line that wrapped could not be rewritten
            self.stream.write(CLEAR_LINE + ("thinking: " + thinking_line(progress, self.game))[:width])
            self.stream.flush()
            self._line_open = True

    def _end_thinking(self, mover: int | None) -> None:
        """Before a board: the thinking line cleared (terminal) or summed up (pipe)."""
        if self._line_open:
            self.stream.write(CLEAR_LINE)
            self._line_open = False
        if self._thought is not None and not self.live and mover is not None:
            print(f"player {mover} thought: {thinking_line(self._thought, self.game)}", file=self.stream)
        self._thought = None

    def show(self, game: Game, state: State, last_action: int | None = None, mover: int | None = None) -> None:
        self.game = game
        self._end_thinking(mover if last_action is not None else None)
        if last_action is not None:
            print(f"player {mover} plays {game.action_to_text(last_action, state)}", file=self.stream)
        picture = game.render_after(state, last_action)
        print(colour_board(picture) if self.colour else picture, file=self.stream)
        print(file=self.stream)
        self.stream.flush()
        if self.delay:
            time.sleep(self.delay)


@mctsfw.hookimpl
def mctsfw_register_displays():
    return [TerminalDisplay]


@mctsfw.hookimpl
def mctsfw_config_sections():
    return [SHOW_SECTION]
