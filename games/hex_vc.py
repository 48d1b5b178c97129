"""Virtual connections (H-search) for Hex: what a player's stones guarantee, found by
Anshelevich's two rules, as MoHex's solver and search use them.

A **full connection** between two points (an empty cell, a group of the player's stones
or one of the player's two sides) with a *carrier* (a set of empty cells) is one the
player keeps with the opponent to move: every intrusion into the carrier has an answer
inside it. A **semi connection** is one the player makes by moving first (into its key).
Both are found by

- the base: two neighbouring points are fully connected, carrier empty;
- the AND rule: full connections x-z and z-y with disjoint carriers that hold neither x
  nor y give x-y a full connection through a group z (carrier: the union), a semi through
  an empty cell z (carrier: the union and z);
- the OR rule: semi connections of x-y whose carriers share no cell give a full one
  (carrier: the union): whatever the opponent takes, one is left to complete.

H-search is sound (a connection it finds is real) but incomplete, and it is capped here
(``MAX_FULL``, ``MAX_SEMI`` carriers a pair, ``OR_DEPTH`` semis an OR), so it misses some.
What the search takes from it (``Hex.forced_win``, ``Hex.threat_defences`` with the
game's ``vc`` setting):

- the player to move holding a semi or full connection between their sides **wins**;
- facing the opponent's semi connections between the opponent's sides, the player to move
  must play in the cells every one of them needs (the intersection of their carriers and
  keys): a move elsewhere lets the opponent complete one; none left (or an opponent's full
  connection) means the position is lost.

Carriers are Python ints (bit ``a`` is cell ``a``), the board ``Hex``'s bitboards.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

#: connections kept a pair of points (the smallest carriers first found)
MAX_FULL = 4
MAX_SEMI = 12
#: semis combined by one OR at most
OR_DEPTH = 4


class Connections:
    """The full and semi connections of ``player`` on the board ``(mine, theirs)`` of an
    ``n`` x ``n`` Hex game (``Hex.sides``, ``Hex.neighbours`` give the geometry)."""

    def __init__(self, game, mine: int, theirs: int, player: int):
        n = game.size
        cells = n * n
        self.player = player
        start, end = game.sides[player]
        empty = game.full & ~(mine | theirs)
        # points: the empty cells (their own number), the groups (cells + group index), the
        # sides (groups that touch a side are the side)
        self.START, self.END = cells, cells + 1
        point_of = {}
        groups: list[int] = []
        seen = 0
        for a in range(cells):
            if not mine >> a & 1 or seen >> a & 1:
                continue
            group = game._group(mine, 1 << a)
            seen |= group
            if group & start and group & end:
                raise ValueError("the game is over")
            point = self.START if group & start else self.END if group & end else cells + 2 + len(groups)
            if point >= cells + 2:
                groups.append(group)
            for b in _bits(group):
                point_of[b] = point
        self.stones = {p for p in set(point_of.values())}  # groups and sides reached by stones
        self.stones |= {self.START, self.END}
        neighbours: dict[int, set[int]] = defaultdict(set)
        for a in _bits(empty):
            for b in _bits(game.neighbours[a] & (empty | mine)):
                neighbours[a].add(b if empty >> b & 1 else point_of[b])
            if start >> a & 1:
                neighbours[a].add(self.START)
            if end >> a & 1:
                neighbours[a].add(self.END)
        self.full: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.semi: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.key: dict[tuple[int, int, int], int] = {}  # (pair, carrier) -> a semi's key
        self.at: dict[int, set[int]] = defaultdict(set)  # point -> the points it has a full connection with
        self.queue: list[tuple[int, int, int, int]] = []
        for a, around in neighbours.items():
            for b in around:
                self._add_full(a, b, 0)
        self._run()

    # ---- the two rules -----------------------------------------------------------------
    def _add_full(self, x: int, y: int, carrier: int) -> None:
        key = (x, y) if x < y else (y, x)
        kept = self.full[key]
        if not _keep(kept, carrier, MAX_FULL):
            return
        self.at[x].add(y)
        self.at[y].add(x)
        heapq.heappush(self.queue, (carrier.bit_count(), x, y, carrier))

    def _add_semi(self, x: int, y: int, carrier: int, z: int) -> None:
        key = (x, y) if x < y else (y, x)
        if any(c & carrier == c for c in self.full.get(key, ())):
            return
        kept = self.semi[key]
        if not _keep(kept, carrier, MAX_SEMI):
            return
        self.key[(*key, carrier)] = z
        self._or(x, y, kept, carrier)

    def _or(self, x: int, y: int, semis: list[int], new: int) -> None:
        others = [c for c in semis if c != new]

        def combine(i: int, union: int, common: int, depth: int) -> bool:
            for j in range(i, len(others)):
                shared = common & others[j]
                if shared == common:
                    continue  # no cell taken out of the common ones
                if shared == 0:
                    self._add_full(x, y, union | others[j])
                    return True
                if depth + 1 < OR_DEPTH and combine(j + 1, union | others[j], shared, depth + 1):
                    return True
            return False

        combine(0, new, new, 1)

    def _run(self) -> None:
        cell = self.START  # points below this are empty cells
        while self.queue:
            _, x, y, carrier = heapq.heappop(self.queue)  # (the smallest carriers first)
            for z, other in ((x, y), (y, x)):
                if z in (self.START, self.END):
                    continue  # (through a side: everything near it joins everything near it)
                through_stone = z >= cell
                for w in list(self.at[z]):
                    if w == other:
                        continue
                    for c in list(self.full[(z, w) if z < w else (w, z)]):
                        if c & carrier or (other < cell and c >> other & 1) or (w < cell and carrier >> w & 1):
                            continue
                        if through_stone:
                            self._add_full(other, w, carrier | c)
                        else:
                            self._add_semi(other, w, carrier | c | 1 << z, z)

    # ---- what the search asks ------------------------------------------------------------
    def sides(self, kind: str) -> list[int]:
        """The carriers of the player's ``kind`` ("full" or "semi") connections between
        their sides."""
        return list((self.full if kind == "full" else self.semi).get((self.START, self.END), ()))

    def winning_line(self) -> list[int] | None:
        """For the player to move: a move that keeps a connection between the sides (a
        semi's key: the rest of its carrier is then a full connection; else a cell of a full
        one's carrier, which a stone of the owner's does not spoil), then the other cells
        of that carrier; None where the player holds neither."""
        for kind in ("semi", "full"):
            for carrier in sorted(self.sides(kind), key=int.bit_count):
                move = self.key[(self.START, self.END, carrier)] if kind == "semi" else (carrier & -carrier).bit_length() - 1
                return [move, *(a for a in _bits(carrier) if a != move)]
        return None

    def must_play(self) -> list[int] | None:
        """For the opponent of the player these connections are of, to move: the cells
        every one of the player's semi connections between the sides needs (a move
        elsewhere lets the player complete one). Where there are none (or the player holds
        a full connection), every move loses: the smallest carrier's cells. None where the
        player holds no connection between the sides."""
        fulls, semis = self.sides("full"), self.sides("semi")
        if not fulls and not semis:
            return None
        if not fulls:
            common = semis[0]
            for carrier in semis[1:]:
                common &= carrier
            if common:
                return list(_bits(common))
        return list(_bits(min(fulls + semis, key=int.bit_count)))


def connections(game, state, player: int) -> Connections:
    """``player``'s connections in the ``Hex`` state ``state`` (a game not over)."""
    return Connections(game, state[player], state[3 - player], player)


def _keep(kept: list[int], carrier: int, most: int) -> bool:
    """Whether ``carrier`` joins the carriers ``kept`` (none of them inside it; those that
    hold it go; at the cap it replaces the largest, if it is smaller)."""
    if any(c & carrier == c for c in kept):
        return False
    kept[:] = [c for c in kept if c & carrier != carrier]
    if len(kept) >= most:
        largest = max(range(len(kept)), key=lambda i: kept[i].bit_count())
        if kept[largest].bit_count() <= carrier.bit_count():
            return False
        del kept[largest]
    kept.append(carrier)
    return True


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low
