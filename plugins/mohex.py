"""MoHex 2.0, the Hex engine of the benzene project, as a player: ``mohex:SIMULATIONS``.

MoHex is built from the benzene sources (``scripts/build_mohex.sh``, docs/hex.md) and
found as ``$HEXZERO_MOHEX``, else ``mohex`` on PATH. It speaks GTP (HexGui's dialect,
which ``GtpActor`` speaks: ``boardsize N``, ``play b a1``, ``genmove w``): black is player
1 and connects the top and bottom rows, as here. The player it stands for is MoHex held
to a number of simulations a move, so that a figure measured against it reruns on any
machine: one search thread, no pondering, no time management, no tree kept from the
last move, no solver beside the search; each game from an empty tree. With ``seed``
given, MoHex's random numbers are seeded from it, so a match replays (``mohex_argv``:
MoHex reads a seed of 0 as "from the clock", so 0 is passed as another number).
``mohex:1000`` is the yardstick of docs/hex.md and the teacher of ``cli.py imitate``
(``imitate.player1 = "mohex:1000"``).
"""

from __future__ import annotations

from typing import Any

from hexzero import mctsfw
from hexzero.mctsfw.game import Game
from hexzero.plugins.gtp import (GtpActor, GtpCommandRefused, budget_of_spec, built_program, check_game,
                                 find_built_program)

#: where the program is looked for first (a path), then ``mohex`` on PATH
MOHEX_VARIABLE = "HEXZERO_MOHEX"

#: how MoHex plays a fixed number of simulations a move (``param_mohex`` of benzene's MoHexEngine)
FIXED_BUDGET = ("num_threads 1", "ponder 0", "use_time_management 0", "reuse_subtree 0", "use_parallel_solver 0",
                "max_time 100000")
#: the seed MoHex is given for ``seed = 0`` (it reads 0 and -1 as "seed from the clock")
SEED_FOR_ZERO = 2**31 - 1
#: tree nodes kept a simulation: MoHex allocates its tree before each search, 1 GB by default
NODES_PER_SIMULATION = 200


def mohex_argv(program: str, seed: int | None = None) -> list[str]:
    """The command line of MoHex seeded from ``seed`` (any int; unseeded without one)."""
    seeded = [] if seed is None else [f"--seed={seed % 2**31 or SEED_FOR_ZERO}"]
    return [program, "--quiet", "--use-logfile=0", *seeded]


def find_mohex() -> str | None:
    """The MoHex program: ``$HEXZERO_MOHEX`` if it names one, else ``mohex`` on PATH; None if neither."""
    return find_built_program(MOHEX_VARIABLE, "mohex")


class MoHexActor(GtpActor):
    """MoHex at ``simulations`` a move (spec ``mohex:SIMULATIONS``)."""

    kind = "mohex"
    name = "mohex"
    description = "MoHex 2.0, the benzene Hex engine, at N simulations a move: mohex:1000 (scripts/build_mohex.sh)"

    @classmethod
    def from_spec(cls, argument: str, game: Game, **params: Any) -> "MoHexActor":
        """``make_actor("mohex:N", game, seed=S)``: other search parameters are MoHex's own business."""
        return cls(game, budget_of_spec("mohex", argument, "simulations", 1000), seed=params.get("seed"))

    def __init__(self, game: Game, simulations: int, seed: int | None = None):
        check_game(f"mohex:{simulations}", "MoHex", game, "hex")
        program = built_program(f"mohex:{simulations}", "MoHex", MOHEX_VARIABLE, "mohex", "scripts/build_mohex.sh")
        super().__init__(game, mohex_argv(program, seed))
        self.simulations = simulations
        try:
            nodes = max(100_000, NODES_PER_SIMULATION * simulations)
            for setting in (*FIXED_BUDGET, f"max_nodes {nodes}", f"max_games {simulations}"):
                self.engine.send(f"param_mohex {setting}")
        except BaseException:
            self.engine.kill()
            raise

    def genmove(self, colour: str) -> str:
        """MoHex's move; where its root is already won through the cells it fills in, its
        search of that root ends with no move (it answers ``? illegal move``), so the move
        is searched again from the position as played (``use_root_data 0``)."""
        try:
            return super().genmove(colour)
        except GtpCommandRefused:
            self.engine.send("param_mohex use_root_data 0")
            try:
                return super().genmove(colour)
            finally:
                self.engine.send("param_mohex use_root_data 1")

    def default_label(self) -> str:
        return f"mohex({self.simulations})"


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [MoHexActor]
