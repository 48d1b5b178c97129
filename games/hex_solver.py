"""Perfect play for small Hex boards (5x5 from the empty board, larger boards from
positions with few empty cells): which player wins a position and which moves keep the win.

Hex has no draws and a stone never hurts its owner, so a position is a win or a loss for
the player to move. ``HexSolver`` answers by depth-first proof search (negamax on
booleans) with a transposition table of every position it settled, pruned by what a
player's stones already guarantee:

- **Pairing connections** (``games.hex_pairing``, which the searches prove with too). A
  chain of groups from one side to the other in which each link is solid, a bridge (two
  empty cells next to both groups, or to a group and its side) or, for the player to
  move, at most one gap (a single such cell), with the cells of the links all different.
  Its owner answers an intrusion into a bridge with the bridge's other cell, so it
  cannot be cut: whoever holds one (with the gap, when they are to move and fill it)
  wins. A chain of groups that touch the sides is itself such a connection, and a cell
  that completes one is a gap. (At most ``hex_pairing.MAX_CHAINS`` chains a position, found in a
  capped walk: the solver stays exact, the chains only prune.)
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
        # ``hex_pairing``'s kernel, whatever the game's ``pairing`` says (the solver's own pruning)
        self.pairing = game._pairing()

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
        ``gaps`` gaps (``games.hex_pairing.chains``, the walk the search proves with).
        ``first``: stop at the first one found; else up to ``hex_pairing.MAX_CHAINS``, a gapless one
        ending the list."""
        game = self.game
        others = game.full & ~empty & ~own
        ones, twos = (own, others) if player == 1 else (others, own)
        module, nbr, work = self.pairing
        count = module.chains(game.boards([(player, ones, twos, 0)])[0], game.size, player, nbr, gaps, first, *work)
        return [module.found(work, game.size, i) for i in range(count)]
