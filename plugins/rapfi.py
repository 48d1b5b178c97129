"""Rapfi, an open-source Gomocup brain, as a player: ``rapfi:NODES``.

Rapfi (github.com/dhbloo/rapfi) is built from its sources (``scripts/build_rapfi.sh``,
docs/gomoku.md) and found as ``$HEXZERO_RAPFI``, else ``pbrain-rapfi`` on PATH. It speaks
the Gomocup protocol (``PbrainActor``) and plays with the classical evaluator built into
the program (alpha-beta with its own threat search; no network file). The player it
stands for is Rapfi held to a number of search nodes a move (its ``INFO MAX_NODE``), so
that a figure measured against it reruns on any machine: one search thread, no
pondering; a ``time_limit`` given as well stops it sooner. Rapfi's search is
deterministic: the same position gets the same move. ``rapfi:100`` is the yardstick of
docs/gomoku.md; as an ``imitate`` player it teaches (``imitate.player1 = "rapfi:1000"``).
"""

from __future__ import annotations

import tempfile
from typing import Any

from hexzero import mctsfw
from hexzero.mctsfw.game import Game
from hexzero.plugins.gtp import budget_of_spec, built_program, check_game, find_built_program
from hexzero.plugins.pbrain import PbrainActor

#: where the program is looked for first (a path), then ``pbrain-rapfi`` on PATH
RAPFI_VARIABLE = "HEXZERO_RAPFI"
#: a move's time when no time limit is given: the node budget ends the search long before
NO_TIME_LIMIT_MS = 3_600_000


def find_rapfi() -> str | None:
    """The Rapfi program: ``$HEXZERO_RAPFI`` if it names one, else ``pbrain-rapfi`` on PATH; None if neither."""
    return find_built_program(RAPFI_VARIABLE, "pbrain-rapfi")


class RapfiActor(PbrainActor):
    """Rapfi at ``nodes`` search nodes a move (spec ``rapfi:NODES``)."""

    kind = "rapfi"
    name = "rapfi"
    description = "Rapfi, an open-source Gomocup brain, at N search nodes a move: rapfi:100 (scripts/build_rapfi.sh)"

    @classmethod
    def from_spec(cls, argument: str, game: Game, **params: Any) -> "RapfiActor":
        """``make_actor("rapfi:N", game, time_limit=T)``: other search parameters are Rapfi's own business."""
        return cls(game, budget_of_spec("rapfi", argument, "search nodes", 100), time_limit=params.get("time_limit"))

    def __init__(self, game: Game, nodes: int, time_limit: float | None = None):
        check_game(f"rapfi:{nodes}", "Rapfi", game, "gomoku")
        program = built_program(f"rapfi:{nodes}", "Rapfi", RAPFI_VARIABLE, "pbrain-rapfi", "scripts/build_rapfi.sh")
        self.nodes = nodes
        # Rapfi reads a config.toml from its working directory if there is one (a run
        # directory has ours): it starts in an empty one and keeps its built-in config
        self.workdir = tempfile.TemporaryDirectory(prefix="hexzero-rapfi-")
        try:
            super().__init__(game, [program], time_limit=time_limit, cwd=self.workdir.name)
        except BaseException:
            self.workdir.cleanup()
            raise

    def new_game(self) -> None:
        """A new game as ``PbrainActor`` starts one, Rapfi held to its nodes, one thread, no pondering."""
        super().new_game()
        for setting in ("THREAD_NUM 1", "PONDERING 0", f"MAX_NODE {self.nodes}"):
            self.brain.send(f"INFO {setting}", answer=False)
        if not self.time_limit:
            self.brain.send(f"INFO timeout_turn {NO_TIME_LIMIT_MS}", answer=False)
            self.brain.send("INFO timeout_match 0", answer=False)

    def default_label(self) -> str:
        return f"rapfi({self.nodes})"

    def close(self) -> None:
        super().close()
        self.workdir.cleanup()


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [RapfiActor]
