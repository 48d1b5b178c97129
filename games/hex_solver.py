"""Perfect play for small Hex boards (5x5 from the empty board, larger boards from
positions with few empty cells): which player wins a position and which moves keep the win.

Hex has no draws and a stone never hurts its owner, so a position is a win or a loss for
the player to move. ``HexSolver`` answers by depth-first proof search (negamax on
booleans) with a transposition table of every position it settled, pruned by what a
player's stones already guarantee:

- **Pairing connections.** A chain of groups from one side to the other in which each
  link is solid, a bridge (two empty cells next to both groups, or to a group and its
  side) or, for the player to move, at most one gap (a single such cell), with the
  cells of the links all different. Its owner answers an intrusion into a bridge with
  the bridge's other cell, so it cannot be cut: whoever holds one (with the gap, when
  they are to move and fill it) wins. A chain of groups that touch the sides is
  itself such a connection, and a cell that completes one is a gap.
- **Must-play.** Where the opponent has such a chain with one gap, a move outside its
  cells (the gap and the bridges' cells) lets the opponent fill the gap and win, so only
  moves inside every such chain found are searched; none left means a loss.
- **Proof carriers.** Each result comes with the empty cells its proof needs: the
  loser's stones elsewhere would not change it. So after a move that loses, the moves
  outside the carrier of the opponent's win lose too and are not tried.

Moves are tried centre first, and the first winning move ends the search of a position.
The learning benchmark and ``benchmarks/hex_perfect.py`` measure networks and searches
against it; ``tests/test_hex_solver.py`` checks it against plain minimax.
"""

from __future__ import annotations

from hexzero.games.hex import Hex, HexState, iter_bits

#: chains of groups examined per player and position (the search stays exact beyond: the
#: chains only prune)
MAX_CHAINS = 64


class HexSolver:
    """Exact results of Hex positions of one board (``game``), remembered across calls."""

    def __init__(self, game: Hex):
        if game.swap:
            raise ValueError("the solver plays Hex without the pie rule")
        self.game = game
        n = game.size
        middle = (n - 1) / 2
        # centre first (distance on the hexagonal grid), then row-major
        self.order = sorted(range(n * n), key=lambda a: (max(abs(a // n - middle), abs(a % n - middle),
                                                             abs(a // n + a % n - 2 * middle)), a))
        self.known: dict[tuple[int, int, int], tuple[bool, int]] = {}
        self.positions = 0  # positions settled by search (not found in the table)

    # ---- the public API -------------------------------------------------------------
    def wins(self, state: HexState) -> bool:
        """Whether the player to move in ``state`` wins with perfect play (in a finished
        game: whether they are the winner)."""
        if state[3]:
            return state[3] == state[0]
        player, mine, theirs, _ = self._sides(state)
        return self._wins(mine, theirs, player)

    def winning_moves(self, state: HexState) -> list[int]:
        """The moves of the player to move that keep a win: empty when the position is lost."""
        if state[3]:
            return []
        player, mine, theirs, empty = self._sides(state)
        return [a for a in iter_bits(empty) if not self._wins(theirs, mine | 1 << a, 3 - player)]

    def winning_move(self, state: HexState) -> int | None:
        """One move that keeps the win (the first in the solver's centre-first order), or
        None when the position is lost: what a perfect player plays, at the cost of one
        proof rather than ``winning_moves``' proof per move."""
        if state[3]:
            return None
        player, mine, theirs, empty = self._sides(state)
        for a in self.order:
            if empty >> a & 1 and not self._wins(theirs, mine | 1 << a, 3 - player):
                return a
        return None

    def forget(self, most: int = 4_000_000) -> None:
        """Empties the table of settled positions when it holds more than ``most`` (about
        1 GB), for long runs of solving."""
        if len(self.known) > most:
            self.known.clear()

    def _sides(self, state: HexState) -> tuple[int, int, int, int]:
        """(the player to move, their stones, the opponent's, the empty cells)."""
        player, ones, twos, _ = state
        mine, theirs = (ones, twos) if player == 1 else (twos, ones)
        return player, mine, theirs, self.game.full & ~(ones | twos)

    # ---- the search -----------------------------------------------------------------
    def _wins(self, mine: int, theirs: int, player: int) -> bool:
        return self._solve(mine, theirs, player)[0]

    def _solve(self, mine: int, theirs: int, player: int) -> tuple[bool, int]:
        """Whether the player to move (stones ``mine``) wins, and the proof's carrier: the
        empty cells its reasoning depends on. A loser's stone outside the carrier would
        not change the result, so after a move that loses, the other moves outside the
        carrier of the opponent's win lose too and are not searched."""
        key = (mine, theirs, player)
        known = self.known.get(key)
        if known is not None:
            return known
        empty = self.game.full & ~(mine | theirs)
        won = self.chains(mine, player, empty, gaps=1, first=True)
        if won:
            result = (True, won[0][0] | won[0][1])
        else:
            chains = self.chains(theirs, 3 - player, empty, gaps=1)
            if chains and not chains[0][1]:  # a gapless chain: it cannot be cut
                result = (False, chains[0][0])
            else:
                must, carrier = empty, 0
                for cells, gap in chains:
                    must &= cells | gap
                    carrier |= cells | gap
                self.positions += 1
                result = None
                for a in self.order:
                    if not must >> a & 1:
                        continue
                    bit = 1 << a
                    theirs_win, theirs_carrier = self._solve(theirs, mine | bit, 3 - player)
                    if not theirs_win:
                        result = (True, theirs_carrier | bit)
                        break
                    must &= theirs_carrier
                    carrier |= theirs_carrier | bit
                if result is None:
                    result = (False, carrier)
        self.known[key] = result
        return result

    def chains(self, own: int, player: int, empty: int, gaps: int, first: bool = False) -> list[tuple[int, int]]:
        """Pairing connections of ``own`` between the player's sides as ``(cells, gap)``:
        the empty cells of their bridges and the gap's cell (0 for none), at most
        ``gaps`` gaps. ``first``: stop at the first one found; else up to ``MAX_CHAINS``,
        a gapless one ending the list."""
        game = self.game
        start, end = game.sides[player]
        groups, rest = [], own
        while rest:
            group = game._group(own, rest & -rest)
            groups.append((group, game._around(group)))
            rest &= ~group
        # the links of each node: 0 the start side, 1 the end side, 2.. the groups
        links: list[list[tuple[int, int]]] = [[] for _ in range(len(groups) + 2)]

        def link(a: int, b: int, common: int, touching: bool) -> None:
            if touching:
                common = 0  # solid: no cell needed
            elif not common:
                return
            links[a].append((b, common))
            links[b].append((a, common))

        for i, (group, around) in enumerate(groups, start=2):
            link(0, i, around & start & empty, bool(group & start))
            link(1, i, around & end & empty, bool(group & end))
            for j in range(i + 1, len(groups) + 2):
                other, other_around = groups[j - 2]
                link(i, j, around & other_around & empty, False)
        found: list[tuple[int, int]] = []
        seen = {0}

        def walk(node: int, cells: int, gap: int) -> bool:
            """Extends the chain at ``node``; True to stop the walk."""
            for nxt, common in links[node]:
                if nxt in seen or common & (cells | gap):
                    continue
                if common & (common - 1) or not common:  # solid or a bridge
                    grown, grown_gap = cells | common, gap
                elif not gap and gaps:  # a single cell: the gap
                    grown, grown_gap = cells, common
                else:
                    continue
                if nxt == 1:
                    found.append((grown, grown_gap))
                    if first or not grown_gap or len(found) >= MAX_CHAINS:
                        return True
                    continue
                seen.add(nxt)
                stop = walk(nxt, grown, grown_gap)
                seen.discard(nxt)
                if stop:
                    return True
            return False

        walk(0, 0, 0)
        if found and not found[-1][1]:
            return [found[-1]]
        return found
