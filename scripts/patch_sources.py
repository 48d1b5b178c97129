"""Mends the outside programs' sources before they are built (``scripts/build_mohex.sh``
and ``scripts/build_rapfi.sh`` run this on their checkouts; running it again changes nothing).

``benzene`` (MoHex 2.0, the CMake port of benzene): two crashes met in positions already
decided by the cells MoHex fills in (dead and captured cells), near the end of games
against a weaker player or of MoHex against itself:

- the pre-search's resistance evaluation indexes the group of a side's source edge,
  which has no index when that edge's group is the sink's (the side is already
  connected): a segmentation fault in ``Resistance::ComputeScores``. Such a side's
  resistance is taken as all but zero;
- in a lost position MoHex plays "the most blocking move", the cell in most of the
  winner's connections; with no connection left to block it answered an invalid point,
  and printing it crashed. It then plays a random empty cell instead (the game is lost
  whatever it plays), as it does in a won position where its search gives no move.

``rapfi`` (the Gomocup brain): Rapfi prints its move, then marks its search over, and its
protocol loop skips every word it reads while the search is on: a command sent the
moment the move arrives (``TURN x,y``) can be skipped in part (``ERROR Unknown command:
x,y``) or whole (no answer ever). On a busy machine, with two brains a worker, that
happened every few hundred games. The search is marked over before the move is printed,
under the lock the protocol loop takes before it runs a command, so a command that comes
after the move waits until the board has it.

    python scripts/patch_sources.py benzene|rapfi SOURCE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

BENZENE = {
    "src/hex/Resistance.cpp": [(
        "    const int n = static_cast<int>(groups.NumGroups(not_other) - 1);\n",
        "    const int n = static_cast<int>(groups.NumGroups(not_other) - 1);\n"
        "    if (groups.CaptainOf(source) == groups.CaptainOf(sink)) { m_resistance[color] = 1e-9; return; }"
        "  // hexzero: already connected\n",
    )],
    "src/hex/EndgameUtil.cpp": [(
        "    if (curMostHits == 0)\n"
        "        LogWarning() << \"curMostHits == 0!!\\n\";\n"
        "    BenzeneAssert(curMostHits > 0);\n",
        "    if (curMostHits == 0)  // hexzero: no connection left to block or to play in\n"
        "        return INVALID_POINT;\n",
    ), (
        "        return MostOverlappingMove(brd.Cons(color).GetFullCarriers(),\n"
        "                                   brd.GetInferiorCells());\n",
        "    {\n"
        "        HexPoint move = MostOverlappingMove(brd.Cons(color).GetFullCarriers(),\n"
        "                                            brd.GetInferiorCells());\n"
        "        return move != INVALID_POINT ? move : BoardUtil::RandomEmptyCell(brd.GetPosition());"
        "  // hexzero\n"
        "    }\n",
    ), (
        "    return MostOverlappingMove(\n"
        "        brd.Cons(other).SemiExists() ?\n"
        "        brd.Cons(other).GetSemiCarriers() : brd.Cons(other).GetFullCarriers(),\n"
        "        brd.GetInferiorCells());\n",
        "    HexPoint move = MostOverlappingMove(\n"
        "        brd.Cons(other).SemiExists() ?\n"
        "        brd.Cons(other).GetSemiCarriers() : brd.Cons(other).GetFullCarriers(),\n"
        "        brd.GetInferiorCells());\n"
        "    return move != INVALID_POINT ? move : BoardUtil::RandomEmptyCell(brd.GetPosition());  // hexzero\n",
    )],
}

RAPFI = {
    "Rapfi/command/gomocup.cpp": [(
        "            sendActionAndUpdateBoard(Search::Threads.main()->resultAction,\n"
        "                                     Search::Threads.main()->bestMove);\n"
        "            thinking = false;\n",
        "            thinking = false;  // hexzero: before the move is out, or a command right after it is skipped\n"
        "            sendActionAndUpdateBoard(Search::Threads.main()->resultAction,\n"
        "                                     Search::Threads.main()->bestMove);\n",
    )],
}

#: the patches of each program, by the name the build scripts give
PROGRAMS = {"benzene": BENZENE, "rapfi": RAPFI}


def patch(program: str, source: Path) -> list[str]:
    """Apply every patch of ``program`` not applied yet; the files changed. A file whose
    text is not what a patch expects raises SystemExit naming it."""
    changed = []
    for name, edits in PROGRAMS[program].items():
        path = source / name
        text = path.read_text()
        new = text
        for old, replacement in edits:
            if replacement in new:
                continue
            if old not in new:
                raise SystemExit(f"{path}: not the {program} source this patch knows (looked for {old.splitlines()[0]!r})")
            new = new.replace(old, replacement, 1)
        if new != text:
            path.write_text(new)
            changed.append(name)
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in PROGRAMS:
        raise SystemExit(f"usage: python scripts/patch_sources.py {'|'.join(PROGRAMS)} SOURCE_DIR")
    done = patch(sys.argv[1], Path(sys.argv[2]))
    print(f"patched {', '.join(done)}" if done else "already patched")
