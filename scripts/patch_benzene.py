"""Mends two crashes of MoHex 2.0 (the CMake port of benzene) before it is built
(``scripts/build_mohex.sh`` runs this on the checkout; running it again changes nothing).

Both are met in positions already decided by the cells MoHex fills in (dead and captured
cells), near the end of games against a weaker player or of MoHex against itself:

- the pre-search's resistance evaluation indexes the group of a side's source edge,
  which has no index when that edge's group is the sink's (the side is already
  connected): a segmentation fault in ``Resistance::ComputeScores``. Such a side's
  resistance is taken as all but zero;
- in a lost position MoHex plays "the most blocking move", the cell in most of the
  winner's connections; with no connection left to block it answered an invalid point,
  and printing it crashed. It then plays a random empty cell instead (the game is lost
  whatever it plays), as it does in a won position where its search gives no move.

    python scripts/patch_benzene.py BENZENE_SOURCE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

MARK = "hexzero:"

PATCHES = {
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


def patch(source: Path) -> list[str]:
    """Apply every patch not applied yet; the files changed. A file whose text is not
    what a patch expects raises SystemExit naming it."""
    changed = []
    for name, edits in PATCHES.items():
        path = source / name
        text = path.read_text()
        new = text
        for old, replacement in edits:
            if replacement in new:
                continue
            if old not in new:
                raise SystemExit(f"{path}: not the benzene source this patch knows (looked for {old.splitlines()[0]!r})")
            new = new.replace(old, replacement, 1)
        if new != text:
            path.write_text(new)
            changed.append(name)
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/patch_benzene.py BENZENE_SOURCE_DIR")
    done = patch(Path(sys.argv[1]))
    print(f"patched {', '.join(done)}" if done else "already patched")
