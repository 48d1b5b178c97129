"""Terminal displays of actual games (never rollouts)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import mctsfw
from mctsfw.game import Game, State
from mctsfw.schema import Section, Setting

#: ``[show]``: how actual games are shown (read by every command that draws games)
SHOW_SECTION = Section("show", "showing actual games (never rollouts)", [
    Setting("enabled", True, "draw the board after every actual move (cli.py play)", resumable=True),
    Setting("delay", 0.0, "seconds to pause after each drawn move", low=0, resumable=True),
])


class TerminalDisplay:
    """Prints ``game.render(state)`` after every actual move, with an optional pause."""

    name = "terminal"
    description = "text pictures in the terminal (Hex as a diamond, NIM as piles, Connect Four, Gomoku and Go as grids)"

    def __init__(self, delay: float = 0.0, stream: TextIO | None = None):
        self.delay = float(delay)
        self.stream = stream or sys.stdout

    def show(self, game: Game, state: State, last_action: int | None = None, mover: int | None = None) -> None:
        if last_action is not None:
            print(f"player {mover} plays {game.action_to_text(last_action, state)}", file=self.stream)
        print(game.render(state), file=self.stream)
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
