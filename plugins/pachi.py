"""Pachi, the Monte Carlo Go engine, as a player: ``pachi:PLAYOUTS``.

Pachi is built from its sources without its neural network (``scripts/build_pachi.sh``,
docs/go.md: ``make DCNN=0``: its patterns and playouts) and found as ``$HEXZERO_PACHI``,
else ``pachi`` on PATH. It speaks GTP (``GtpActor``). The player it stands for is Pachi
held to a number of playouts a move (``-t =PLAYOUTS``) on one thread, so that a figure
measured against it reruns on any machine: ``pachi:5000`` is the Go yardstick of issue
56 and a teacher for ``cli.py imitate`` (``imitate.player1 = "pachi:5000"``), as GNU Go
is (``gtp.gnugo_spec``). It plays area (Chinese) rules, as the Go here does, and passes
only once every dead stone is off the board (``pass_all_alive``), so its games end with
the board as the Tromp-Taylor count here scores it. It resigns below a fifth of a chance
(``Resignation``). With ``seed`` given, Pachi's random numbers are seeded from it.
"""

from __future__ import annotations

from typing import Any

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.game import Game
from hexzero.plugins.gtp import GtpActor, budget_of_spec, built_program, check_game, find_built_program

#: where the program is looked for first (a path), then ``pachi`` on PATH
PACHI_VARIABLE = "HEXZERO_PACHI"
#: the fewest playouts a move Pachi takes (``-t =N``)
LEAST_PLAYOUTS = 500


def find_pachi() -> str | None:
    """The Pachi program: ``$HEXZERO_PACHI`` if it names one, else ``pachi`` on PATH; None if neither."""
    return find_built_program(PACHI_VARIABLE, "pachi")


def pachi_argv(program: str, playouts: int, seed: int | None = None) -> list[str]:
    """Pachi's command line for ``playouts`` a move on one thread (``pachi:PLAYOUTS``)."""
    return [program, "-t", f"={playouts}", "-r", "chinese", "-D", "-d", "1",
            *(["-s", str(seed % 2**31)] if seed is not None else []), "threads=1,pass_all_alive"]


class PachiActor(GtpActor):
    """Pachi at ``playouts`` a move (spec ``pachi:PLAYOUTS``)."""

    kind = "pachi"
    name = "pachi"
    description = "Pachi, the Monte Carlo Go engine (no network), at N playouts a move: pachi:5000 " \
                  "(scripts/build_pachi.sh)"

    @classmethod
    def from_spec(cls, argument: str, game: Game, **params: Any) -> "PachiActor":
        """``make_actor("pachi:N", game, seed=S)``: other search parameters are Pachi's own business."""
        return cls(game, budget_of_spec("pachi", argument, "playouts", 5000), seed=params.get("seed"))

    def __init__(self, game: Game, playouts: int, seed: int | None = None):
        check_game(f"pachi:{playouts}", "Pachi", game, "go")
        if playouts < LEAST_PLAYOUTS:
            raise ActorError(f"pachi:{playouts}: Pachi plays at least {LEAST_PLAYOUTS} playouts a move "
                             f"(pachi:{LEAST_PLAYOUTS})")
        program = built_program(f"pachi:{playouts}", "Pachi", PACHI_VARIABLE, "pachi", "scripts/build_pachi.sh")
        super().__init__(game, pachi_argv(program, playouts, seed))
        self.playouts = playouts

    def default_label(self) -> str:
        return f"pachi({self.playouts})"


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [PachiActor]
