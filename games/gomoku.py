"""Gomoku (five in a row) on a size x size board, freestyle by default, as OpenSpiel's ``gomoku``.

Players place a stone on any empty cell in turn; the first with ``connect`` (5) stones in
an unbroken line (across, down or along a diagonal) wins. Freestyle (the default): five
or more wins. ``exactly_five``: a line of more than ``connect`` stones (an overline) does
not win, only exactly ``connect``. A full board without a line is a draw (final, winner
None). Player 1 (black, X) opens unless ``initial_state`` says otherwise.

Action ``a = row*size + col`` with row 0 at the TOP (as OpenSpiel's ``gomoku``). People
type ``h8`` (a column letter a.., no letter skipped, then a row number counted from 1 at
the top, as the picture labels them: ``h8`` is row 7, column 7, the centre of 15x15) or
``row col`` counted from 0.

A state is the tuple ``(player_to_move, stones_of_1, stones_of_2, winner, moves)``:
winner is 0 while the game runs and for a draw, ``moves`` the actions from the empty
board (the game's "ID"), from which the last move and the history planes are read. The
stones are bitboards with a guard column: cell (r, c) is bit ``r*(size+1) + c`` and bit
``r*(size+1) + size`` is always empty, so that lines shifted by 1 (across), size+1
(down), size+2 (diagonal \\) and size (diagonal /) never wrap from one row into the next.
A win is found by the shift-and test on the mover's stones just after their move: the
position before held no winning line, so any line found holds that stone.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.game import (EmptyCells, Forcing, Game, IllegalMoveError, KeptAnswers, compiled_module, letter_cell_name,
                                 parse_letter_cell, without_compiled)
from hexzero.mctsfw.schema import Parameters, Setting

MIN_SIZE, MAX_SIZE = 5, 20  # 20: the Gomocup freestyle board
MARKS = {1: "X", 2: "O"}
COLOURS = {1: "black", 2: "white"}

GomokuState = tuple  # (player_to_move, stones_of_1, stones_of_2, winner, moves)
#: positions the thorough threat search (once a move, at a search's root or for a raw
#: network's move) gives victories by threes: about 0.8 ms a call on 15x15 compiled, 7 ms in
#: Python (benchmarks/tactics.py)
THOROUGH_POSITIONS = 300
#: the compiled threat search (numba): the victories by continuous fours and by threes, the answers to a three
THREATS_MODULE = "hexzero.games.gomoku_threats"


def compiled_threats():
    """The compiled threat search (``games/gomoku_threats``), or None without numba."""
    return compiled_module(THREATS_MODULE)


def python_threats():
    """Within: ``forced_win``'s fours and threes and ``threat_defences`` are worked out in
    Python on the bitboards, as without numba: the reference the compiled ones give the same
    answers as (the tests) and what they are measured against (benchmarks/tactics.py)."""
    return without_compiled(THREATS_MODULE)


def runs_at_least(stones: int, shift: int, length: int) -> int:
    """The bits of ``stones`` that start a run of at least ``length`` stones in the
    direction of ``shift`` (the run goes on at bit + shift, bit + 2*shift, ...)."""
    runs, have = stones, 1
    while have < length:
        step = min(have, length - have)
        runs &= runs >> (step * shift)
        have += step
    return runs


class Gomoku(Game):
    name = "gomoku"
    description = "Gomoku: five in a row wins on a 15x15 board (freestyle by default; --size 9 for the small board)"

    parameters = Parameters(
        Setting("size", 15, "board side (15 is the standard board, 20 Gomocup's freestyle one, 9 the small one)", low=MIN_SIZE, high=MAX_SIZE),
        Setting("connect", 5, "stones in a row that win", low=3, high=MAX_SIZE),
        Setting("exactly_five", False, "true: only exactly `connect` in a row wins, an overline (more) does not; "
                "false: freestyle, five or more wins (as OpenSpiel's gomoku)"),
        Setting("history", 0, "earlier positions in the network planes (encode_planes): own and opponent stones "
                "of each of the last T positions", low=0, high=8),
    )

    def __init__(
        self,
        size: int = parameters.default("size"),
        connect: int = parameters.default("connect"),
        exactly_five: bool = parameters.default("exactly_five"),
        history: int = parameters.default("history"),
    ):
        params = {"size": size, "connect": connect, "exactly_five": exactly_five, "history": history}
        self.check_params(params)
        n = self.size = int(size)
        self.connect = int(connect)
        self.exactly_five = bool(exactly_five)
        self.history = int(history)
        self.num_actions = n * n
        last = chr(ord("a") + n - 1)
        self.move_help = (
            f"a column letter and a row number like '{self.cell_name((n // 2) * n + n // 2)}' "
            f"(columns a-{last}, rows 1-{n} from the top), or 'row col' counted from 0 like '{n // 2} {n // 2}'"
        )
        w = self.width = n + 1  # bits a row: the guard column keeps shifts from wrapping
        self.shifts = (1, w, w + 1, w - 1)  # across, down, diagonal \, diagonal /
        self.bit = [1 << (a + a // n) for a in range(n * n)]
        self.full = sum(self.bit)
        self._bit_cells = np.array([a + a // n for a in range(n * n)], dtype=np.int64)  # bit index of each action
        self._action_of_bit = {b: a for a, b in enumerate(self.bit)}
        self._completing = KeptAnswers()  # stones -> ``completing_cells`` before ``& empty``
        self._nbytes = (n * w + 7) // 8
        # the stones (as bit values) of each byte of a bitboard, by the byte's value: lists empty cells fast
        self._bits_of_byte = [
            [tuple(1 << (8 * i + b) for b in range(8) if value >> b & 1) for value in range(256)]
            for i in range(self._nbytes)
        ]
        # playouts test both players' stones in one integer: the second player's shifted
        # above the first's, with a gap wide enough that no shift of the test reaches across
        self._pair_shift = n * w + 4 * (w + 1)
        self._freestyle_five = self.connect == 5 and not self.exactly_five  # the unrolled test applies
        # the compiled threat search's padded board (games/gomoku_threats.py): cell (r, c) at bit + connect rows
        self._action_of_padded = {int(p): a for a, p in enumerate(self._bit_cells + self.connect * w)}
        self._empty = EmptyCells(self.full, self.num_actions, self._bit_cells)
        # the compiled threat search's tables, made at its first call (``_kernel_tables``)
        self._zobrist = self._lines = self._windows = self._windows3 = None

    @classmethod
    def param_problems(cls, params: dict[str, Any]) -> list[str]:
        problems = super().param_problems(params)
        if not problems:
            size = params.get("size", cls.parameters.default("size"))
            connect = params.get("connect", cls.parameters.default("connect"))
            if connect > size:
                problems.append(f"connect: {connect} in a row cannot fit on a {size}x{size} board")
        return problems

    def kernels(self):
        """The compiled kernels of the array search (``games.gomoku_kernels``; None without numba)."""
        module = compiled_module("hexzero.games.gomoku_kernels")
        return None if module is None else module.GomokuKernels(self)

    def params(self) -> dict[str, Any]:
        return {"size": self.size, "connect": self.connect, "exactly_five": self.exactly_five, "history": self.history}

    # ---- the rules --------------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> GomokuState:
        if starting_player not in (1, 2):
            raise ValueError(f"starting_player is 1 or 2, not {starting_player!r}")
        return (starting_player, 0, 0, 0, ())

    def current_player(self, state: GomokuState) -> int:
        return state[0]

    def legal_actions(self, state: GomokuState) -> list[int]:
        # the empty cells unpacked (as ``legal_mask``), their actions listed by numpy: 5x faster
        # on 15x15 than a Python list of the bits (a search lists every new node's moves)
        return [] if state[3] else self._empty.moves(state[1] | state[2]).tolist()

    def search_array(self, state: GomokuState) -> np.ndarray:
        """``Game.search_array`` from the bitboard: the empty cells' actions, kept (no list made)."""
        return np.empty(0, dtype=np.intp) if state[3] else self._empty.moves(state[1] | state[2])

    def legal_mask(self, state: GomokuState) -> np.ndarray:
        """``Game.legal_mask`` from the bitboard: the empty cells unpacked, no list made."""
        return self.legal_masks([state])[0]

    def legal_masks(self, states: Sequence[GomokuState]) -> np.ndarray:
        """``Game.legal_masks`` from the bitboards, unpacked in one call (``EmptyCells``:
        each position's moves kept, which the search lists those leaves' moves from next)."""
        return self._empty.masks([self.full if state[3] else state[1] | state[2] for state in states])

    def check_legal(self, state: GomokuState, action: int) -> None:
        _, ones, twos, winner, moves = state
        if winner:
            raise IllegalMoveError(f"the game is over: player {winner} has won")
        if len(moves) == self.num_actions:
            raise IllegalMoveError("the game is over: the board is full (a draw)")
        if isinstance(action, bool) or not (isinstance(action, (int, np.integer)) and 0 <= action < self.num_actions):
            raise IllegalMoveError(
                f"action {action!r} is off the {self.size}x{self.size} board: actions are 0 to {self.num_actions - 1}"
            )
        if (ones | twos) & self.bit[action]:
            raise IllegalMoveError(f"{self.cell_name(action)} is already occupied")

    def next_state(self, state: GomokuState, action: int) -> GomokuState:
        self.check_legal(state, action)
        player, ones, twos, winner, moves = state
        action = int(action)
        if player == 1:
            ones |= self.bit[action]
            won = self._wins(ones)
        else:
            twos |= self.bit[action]
            won = self._wins(twos)
        return (3 - player, ones, twos, player if won else 0, moves + (action,))

    def _wins(self, own: int) -> bool:
        """Whether ``own`` holds a winning line (checked just after a move of its owner)."""
        if self._freestyle_five:
            return self._five(own)
        if self.connect == 5:
            return self._exact_five(own)
        k = self.connect
        for d in self.shifts:
            runs = runs_at_least(own, d, k)
            if runs and self.exactly_five:
                # starts of runs of exactly k: not continued past the end, not preceded by a stone
                runs &= ~(runs_at_least(own, d, k + 1) | own << d)
            if runs:
                return True
        return False

    def is_final(self, state: GomokuState) -> bool:
        return bool(state[3]) or len(state[4]) == self.num_actions

    def winner(self, state: GomokuState) -> int | None:
        return state[3] or None

    # ---- threats ----------------------------------------------------------------------
    def completing_cells(self, own: int, empty: int) -> int:
        """The empty cells (bits of ``empty``) on which one more stone of ``own`` makes
        ``connect`` in a row: for each direction, each window of ``connect`` cells with one
        gap and the rest ``own`` (a broken four's middle, either end of an open four).
        In freestyle that stone wins; with ``exactly_five`` it may make an overline
        (``forcing_actions`` tests those). Kept for the latest stone sets (``KeptAnswers``):
        a search asks at every new node for both players, and the stones of the player to
        move there are those its parent asked about for the opponent."""
        found = self._completing.get(own)
        if found is None:
            found = self._completing.keep(own, self._completing_anywhere(own))
        return found & empty

    def _completing_anywhere(self, own: int) -> int:
        """``completing_cells`` before ``& empty``."""
        k = self.connect
        found = 0
        for d in self.shifts:
            # before[j]: cells whose j-th cell back (against the direction) is own; after[j]: j-th cell on
            before, after = [0] * k, [0] * k
            run_before, run_after = -1, -1
            for j in range(1, k):
                run_before &= own << (j * d)
                run_after &= own >> (j * d)
                before[j], after[j] = run_before, run_after
            before[0] = after[0] = -1
            for gap in range(k):  # stones on gap cells before the empty one, k - 1 - gap after it
                found |= before[gap] & after[k - 1 - gap]
        return found

    def forcing_actions(self, state: GomokuState) -> Forcing | None:
        """The cells that complete five for the player to move; else the opponent's such
        cells (each must be taken, or the opponent wins next move); else None."""
        player, ones, twos, winner, moves = state
        if len(moves) < 2 * self.connect - 3:
            return None  # nobody has connect - 1 stones yet
        own, other = (ones, twos) if player == 1 else (twos, ones)
        empty = self.full & ~(ones | twos)
        for stones, wins in ((own, True), (other, False)):
            cells = self.completing_cells(stones, empty)
            if cells and self.exactly_five:  # keep the cells that make exactly five, not an overline
                cells = sum(b for b in self._bits(cells) if self._wins(stones | b))
            if cells:
                of_bit = self._action_of_bit
                return Forcing(tuple(sorted(of_bit[b] for b in self._bits(cells))), wins)
        return None

    # ---- threat-space search: victory by continuous fours (VCF, Allis 1994) ----------------
    def four_cells(self, own: int, other: int, empty: int) -> int:
        """The empty cells on which a stone of ``own`` makes a four: some window of
        ``connect`` cells then holds ``connect - 1`` of its stones and one empty cell (the
        cell that would complete it). Bit-parallel: for each direction, each window's
        stones are counted by a bit-sliced adder, and the empty cells of the windows
        with ``connect - 2`` stones and none of ``other`` are the answer."""
        k = self.connect
        found = 0
        for d in self.shifts:
            starts = self.full
            for j in range(1, k):  # windows wholly on the board and free of the other's stones
                starts &= self.full >> (j * d)
            for j in range(k):
                starts &= ~(other >> (j * d))
            windows = self._holding(own, starts, d, range(k), k - 2)
            for j in range(k):
                found |= windows << (j * d)
        return found & empty

    @staticmethod
    def _holding(own: int, starts: int, d: int, offsets: range, target: int) -> int:
        """The bits of ``starts`` whose cells at ``offsets`` steps of ``d`` hold exactly
        ``target`` of ``own``'s stones: each window's count by a bit-sliced adder."""
        planes: list[int] = []  # the count of own stones of each window, bit by bit
        for j in offsets:
            carry = (own >> (j * d)) & starts
            for i, plane in enumerate(planes):
                planes[i], carry = plane ^ carry, plane & carry
                if not carry:
                    break
            if carry:
                planes.append(carry)
        windows = starts
        for i in range(max(len(planes), target.bit_length())):
            plane = planes[i] if i < len(planes) else 0
            windows &= plane if target >> i & 1 else ~plane
        return windows

    def continuous_fours(self, own: int, other: int, empty: int, depth: int, budget: list[int],
                         table: dict) -> list[int] | None:
        """A victory by continuous fours for the owner of ``own``, to move, whose opponent
        (``other``) may hold one cell that completes a line (then the attacker's move
        must take it, making a four): the attacker's moves and the defender's forced
        replies (bits), ending with a move that leaves two cells completing a line (an open
        four or a double four) while the defender has none; None when there is none within
        ``depth`` attacker moves or ``budget[0]`` positions (spent here). Freestyle only."""
        key = (own, other)
        known = table.get(key)  # (depth searched, line, the position's fours) from an earlier visit
        if known is not None and (known[1] is not None or known[0] >= depth):
            return known[1]
        budget[0] -= 1
        if budget[0] < 0:
            return None
        fours = known[2] if known is not None else self._fours(own, other, empty)
        if fours is None:  # two cells win for the defender: a four cannot stop both
            table[key] = (depth, None, None)
            return None
        if isinstance(fours, int):  # an open four or a double four: won
            table[key] = (depth, [fours], fours)
            return [fours]
        line = None
        if depth > 1:
            for move, threats in fours:  # one cell completes it: the defender must take it
                rest = self.continuous_fours(own | move, other | threats, empty & ~(move | threats), depth - 1,
                                             budget, table)
                if rest is not None:
                    line = [move, threats, *rest]
                    break
        table[key] = (depth, line, fours)
        return line

    def _fours(self, own: int, other: int, empty: int) -> list[tuple[int, int]] | int | None:
        """The attacker's moves of ``continuous_fours`` in a position, worked out once a
        position: None when the defender has two cells that complete a line; a move (bit)
        that leaves two cells completing the attacker's line; else each four (move, the
        one cell that completes it), only those on the defender's cell where it has one."""
        against = self.completing_cells(other, empty)
        if against & (against - 1):
            return None
        moves = self.four_cells(own, other, empty)
        if against:
            moves &= against  # the attacker must take the defender's cell, and make a four there
        fours = []
        for move in self._bits(moves):
            threats = self.completing_cells(own | move, empty & ~move)
            if threats & (threats - 1):  # the shortest wins first
                return move
            fours.append((move, threats))
        return fours

    def forced_win(self, state: GomokuState, thorough: bool = False, depth: int = 12, positions: int = 200,
                   threes: int = 3, three_positions: int | None = None) -> list[int] | None:
        """A forced win beyond one move for the player to move (``Game.forced_win``):
        victory by continuous fours (``continuous_fours``) within ``depth`` of its moves and
        ``positions`` positions searched; failing that, with ``three_positions`` (by default
        ``THOROUGH_POSITIONS`` when ``thorough``, else none), victory by continuous threats
        (``continuous_threats``, fours and threes) within ``threes`` attacker moves; both
        compiled (``games/gomoku_threats``) where numba is installed. The moves from ``state``, the winner's and the replies (of the
        longest defence) in turn, the last of them leaving two cells that complete a line.
        Only where nobody can complete a line at once (``forcing_actions`` is None there),
        in freestyle (with ``exactly_five`` a completed line may be an overline: None)."""
        player, ones, twos, winner, moves = state
        if self.exactly_five or winner or len(moves) < 2 * (self.connect - 2) - 1:
            return None
        own, other = (ones, twos) if player == 1 else (twos, ones)
        empty = self.full & ~(ones | twos)
        kernels = compiled_threats()
        line = self._fours_line(own, other, empty, depth, positions, kernels)
        if line is False:
            return None  # a win at once, or a threat to stop: forcing_actions' business
        if line:
            return line
        if three_positions is None:
            three_positions = THOROUGH_POSITIONS if thorough else 0
        if not three_positions:
            return None
        if kernels is None:
            return self._deepening(self.continuous_threats, own, other, empty, threes, three_positions)
        found = kernels.continuous_threats(*self._bytes(own, other), self._lines, *self._windows, *self._windows3,
                                           self.size, self.connect, threes, three_positions, self._zobrist).tolist()
        return [self._action_of_padded[p] for p in found] or None

    def _deepening(self, search: Callable, own: int, other: int, empty: int, limit: int,
                   positions: int) -> list[int] | None:
        """``search`` (``continuous_fours`` or ``continuous_threats``) deepened one
        attacker move at a time to ``limit`` (the shortest win first), one table and one
        budget of ``positions`` across the depths; the line as actions, or None."""
        budget, table = [positions], {}
        for moves_deep in range(1, limit + 1):
            if budget[0] <= 0:
                break
            line = search(own, other, empty, moves_deep, budget, table)
            if line is not None:
                return [self._action_of_bit[b] for b in line]
        return None

    def _fours_line(self, own: int, other: int, empty: int, depth: int, positions: int,
                    kernels: Any) -> list[int] | None | bool:
        """``forced_win``'s victory by continuous fours for ``own`` to move: its line (actions),
        None when none is found, False when either player completes a line at once (no
        claim made). By the compiled module ``kernels`` (``games/gomoku_threats``), or with None
        by ``continuous_fours`` in Python on the bitboards (the same answers; the tests check)."""
        if kernels is None:
            if self.completing_cells(own, empty) or self.completing_cells(other, empty):
                return False
            return self._deepening(self.continuous_fours, own, other, empty, depth, positions)
        self._kernel_tables(kernels)
        found = kernels.forced_fours(*self._bytes(own, other), self._lines, *self._windows, self.size, self.connect,
                                     depth, positions, self._zobrist).tolist()
        if found and found[0] < 0:
            return False
        return [self._action_of_padded[p] for p in found] or None

    def _kernel_tables(self, kernels: Any) -> None:
        """The compiled threat search's tables for this board, made once: the lines its
        windows slide along and the Zobrist keys of its table of positions."""
        if self._lines is None:
            self._lines = kernels.lines_of(self.size, self.connect)
            self._windows = kernels.windows_of(self.size, self.connect)
            self._windows3 = kernels.windows_of(self.size, self.connect, self.connect + 1)  # (the VCT's)
            self._zobrist = kernels.zobrist((self.size + 2 * self.connect) * self.width)

    def _bytes(self, own: int, other: int) -> tuple[np.ndarray, np.ndarray]:
        """Two bitboards' bytes (little-endian) as uint8 arrays: what the compiled kernels read."""
        return (np.frombuffer(own.to_bytes(self._nbytes, "little"), dtype=np.uint8),
                np.frombuffer(other.to_bytes(self._nbytes, "little"), dtype=np.uint8))

    # ---- threats to win by force: open and broken threes -------------------------------------
    def open_four_moves(self, own: int, other: int, empty: int) -> list[tuple[int, int]]:
        """The moves (bits) after which ``own`` has two or more cells that complete a line
        (an open four, or two fours at once: nothing stops both), each with those cells.
        A position where such a move exists holds a threat of ``own`` to win in two of its
        moves: an open three (``.XXX.``) or a broken one (``.X.XX.``)."""
        found = []
        for move in self._bits(self.four_cells(own, other, empty)):
            cells = self.completing_cells(own | move, empty & ~move)
            if cells & (cells - 1):
                found.append((move, cells))
        return found

    def threat_defences(self, state: GomokuState) -> tuple[int, ...] | None:
        """Where the opponent has a three (a move that leaves them an open four or a
        double four: ``open_four_moves``) and nobody can complete a line at once, the moves
        that do not lose to it (``Game.threat_defences``): the cells that leave the opponent
        no such move, and the mover's own fours (the defender gains a move: the opponent
        must answer). Any other move loses: the opponent makes the open four, one of its two
        cells stays free. Exact: a defence at ``d`` kills the threat on ``m`` when ``d`` is
        ``m`` or one of exactly two cells ``m`` would leave (a stone of the defender changes
        nothing else of it). Where none holds (two threes that no stone stops both of), the
        cells of the opponent's open fours: every move loses, these last longest. Freestyle
        only (with ``exactly_five`` a completed line may be an overline: None)."""
        player, ones, twos, winner, moves = state
        if self.exactly_five or winner or len(moves) < 2 * (self.connect - 2) - 1:
            return None
        own, other = (ones, twos) if player == 1 else (twos, ones)
        kernels = compiled_threats()
        if kernels is not None:  # the same answers, compiled (games/gomoku_threats.py)
            self._kernel_tables(kernels)
            replies = kernels.threat_defences(*self._bytes(own, other), self._lines, self.size, self.connect).tolist()
            if not replies or replies[0] < 0:
                return None
            return tuple(self._action_of_padded[p] for p in replies)
        empty = self.full & ~(ones | twos)
        if self.completing_cells(own, empty) or self.completing_cells(other, empty):
            return None  # a win at once, or one to stop: forcing_actions' business
        threats = self.open_four_moves(other, own, empty)
        if not threats:
            return None
        replies = self._defences(own, other, empty, threats)
        if not replies:  # two threes (or more) that no one stone stops: each move loses; taking a threat's cell
            replies = sum(move for move, _ in threats)  # makes the opponent use the other
        of_bit = self._action_of_bit
        return tuple(sorted(of_bit[b] for b in self._bits(replies)))

    def _defences(self, own: int, other: int, empty: int, threats: list[tuple[int, int]]) -> int:
        """The moves (bits) of ``own``, to move, that do not lose to ``other``'s
        ``threats`` (``open_four_moves``): the cells that leave none of them (``m`` itself,
        or one of exactly two cells ``m`` would leave), and ``own``'s fours; 0: none."""
        stops = empty
        for move, cells in threats:
            stops &= move | (cells if cells.bit_count() == 2 else 0)
        return stops | self.four_cells(own, other, empty)

    # ---- threat-space search: victory by continuous threats, fours and threes (VCT) ----------
    def three_cells(self, own: int, other: int, empty: int) -> int:
        """Empty cells on which a stone of ``own`` may make a three: the inner empty cells of
        the windows of ``connect + 1`` cells with both ends empty and ``connect - 3`` of
        ``own``'s stones inside, none of ``other``'s (one more stone inside, and one after
        it makes an open four). Candidates only: ``open_four_moves`` says which are threes."""
        k = self.connect
        found = 0
        for d in self.shifts:
            starts = self.full & empty & (empty >> (k * d))  # both ends on the board and empty
            for j in range(1, k):
                starts &= (self.full & ~other) >> (j * d)
            windows = self._holding(own, starts, d, range(1, k), k - 3)
            for j in range(1, k):
                found |= windows << (j * d)
        return found & empty

    def _replies(self, own: int, other: int, empty: int) -> int | None:
        """After a move of the attacker (``own``), the defender's moves that do not lose at
        once or to a three (bits): the one cell that blocks a four; else the stops and the
        defender's fours (``threat_defences``), or, where nothing stops the three, the first
        cell of its open four (to show the win to its end); 0: the attacker has won (two
        cells complete its line); None: no threat, or the defender wins at once."""
        if self.completing_cells(other, empty):
            return None
        cells = self.completing_cells(own, empty)
        if cells:
            return 0 if cells & (cells - 1) else cells
        threats = self.open_four_moves(own, other, empty)
        if not threats:
            return None
        return self._defences(other, own, empty, threats) or threats[0][0]

    def continuous_threats(self, own: int, other: int, empty: int, depth: int, budget: list[int],
                           table: dict) -> list[int] | None:
        """A victory by continuous threats for the owner of ``own``, to move: fours, and
        threes where every defence (``_replies``) still loses; the moves (bits), the
        attacker's and the replies of the longest defence in turn, ending with a move that
        leaves two cells completing a line. None when none is found within ``depth``
        attacker moves or ``budget[0]`` positions (spent here). Freestyle only."""
        key = (own, other)
        known = table.get(key)
        if known is not None and (known[1] is not None or known[0] >= depth):
            return known[1]
        budget[0] -= 1
        if budget[0] < 0 or depth < 1:
            return None
        against = self.completing_cells(other, empty)
        if against & (against - 1):
            table[key] = (depth, None)
            return None
        if against:  # the defender's four is blocked first: that must keep a threat
            moves = [against]
        else:
            fours = self.four_cells(own, other, empty)
            moves = [*self._bits(fours), *self._bits(self.three_cells(own, other, empty) & ~fours)]
        line = None
        for move in moves:
            replies = self._replies(own | move, other, empty & ~move)
            if replies is None:
                continue
            longest: list[int] | None = []
            for reply in self._bits(replies):
                rest = self.continuous_threats(own | move, other | reply, empty & ~(move | reply), depth - 1,
                                               budget, table)
                if rest is None:
                    longest = None
                    break
                if not longest or len(rest) + 1 > len(longest):
                    longest = [reply, *rest]
            if longest is not None:
                line = [move, *longest]
                break
        table[key] = (depth, line)
        return line

    @staticmethod
    def _bits(board: int) -> list[int]:
        """The set bits of ``board``, each as its value."""
        bits = []
        while board:
            low = board & -board
            bits.append(low)
            board ^= low
        return bits

    def state_after(self, moves, starting_player: int = 1) -> GomokuState:
        """The state reached by ``moves`` (the game's ID) from the start, as stepping
        through ``next_state`` gives it, five times faster (replay buffers and search
        rebuild positions from IDs): the stones are set without a test each, since in
        freestyle a line never disappears, so the moves were all legal iff no stone lands
        on another and the position before the last move holds no line; then one test for
        the last move. Anything else (an illegal move, exactly_five, where an overline
        can undo a line) steps through ``next_state``, which names the reason."""
        moves = tuple(moves)
        if not self._freestyle_five or not moves or len(moves) > self.num_actions \
                or starting_player not in (1, 2):
            return super().state_after(moves, starting_player)
        bit, n2 = self.bit, self.num_actions
        stones = [0, 0]
        occupied = 0
        try:
            for k, action in enumerate(moves):
                if type(action) is not int:
                    if isinstance(action, bool) or not isinstance(action, np.integer):
                        raise IndexError
                    action = int(action)
                if not 0 <= action < n2 or occupied & bit[action]:
                    raise IndexError
                occupied |= bit[action]
                stones[k & 1] |= bit[action]
        except IndexError:
            return super().state_after(moves, starting_player)  # raises with the reason
        last_owner = (len(moves) - 1) & 1
        last = bit[moves[-1]]
        if self._five(stones[last_owner] & ~last) or self._five(stones[1 - last_owner]):
            return super().state_after(moves, starting_player)  # a move after the end: raises
        mover = starting_player if last_owner == 0 else 3 - starting_player
        first, second = stones if starting_player == 1 else stones[::-1]
        winner = mover if self._five(stones[last_owner]) else 0
        return (3 - mover, first, second, winner, tuple(int(a) for a in moves))

    def winning_line(self, state: GomokuState) -> list[int]:
        """The actions of the winning line through the last stone (all its stones, an
        overline included in freestyle), in order along the line; [] unless won."""
        _, ones, twos, winner, moves = state
        if not winner:
            return []
        own = ones if winner == 1 else twos
        n, last = self.size, moves[-1]
        r0, c0 = divmod(last, n)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            line = [last]
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < n and 0 <= c < n and own & self.bit[r * n + c]:
                    line.append(r * n + c)
                    r, c = r + sign * dr, c + sign * dc
            if len(line) == self.connect or (len(line) > self.connect and not self.exactly_five):
                return sorted(line)
        return []

    # ---- playouts ---------------------------------------------------------------------
    #: moves between tests in a random playout; the stones of the last stretch are then
    #: replayed one by one to find the move that made the first line
    PLAYOUT_STRETCH = 12

    def playout(
        self, state: GomokuState, rng: random.Random, choose: Callable[[GomokuState], int] | None = None
    ) -> int | None:
        """Random moves until a line or a full board, on bare integers.

        The first line decides a Gomoku game (filling the board and testing once, as Hex
        does, would be wrong), but a line never disappears: so the moves are drawn in
        stretches of ``PLAYOUT_STRETCH``, both players' stones are tested once after each
        stretch (in one integer), and only the stretch in which a line appeared is
        replayed move by move to find who made it first. The moves are the same uniformly
        random sequence as stepping through ``next_state``. With ``exactly_five`` (or
        another ``connect``) the stones are tested after every move, still on integers.
        """
        player, ones, twos, winner, moves = state
        if winner:
            return winner
        if choose is not None:
            while not self.is_final(state):
                state = self.next_state(state, choose(state))
            return self.winner(state)
        empty = (self.full & ~(ones | twos)).to_bytes(self._nbytes, "little")
        cells = [b for table, byte in zip(self._bits_of_byte, empty) for b in table[byte]]
        left = len(cells)
        if not self._freestyle_five:
            # an overline can undo a line (exactly_five): test after every stone
            own, other = (ones, twos) if player == 1 else (twos, ones)
            random_, wins = rng.random, self._wins
            while left:
                k = int(random_() * left)
                left -= 1
                stone = cells[k]
                cells[k] = cells[left]
                own |= stone
                if wins(own):
                    return player
                own, other = other, own
                player = 3 - player
            return None
        own, other = (ones, twos) if player == 1 else (twos, ones)
        random_ = rng.random
        pair = self._pair_shift
        d1, d2, d3, d4 = self.shifts
        stretch = self.PLAYOUT_STRETCH
        played = []
        while left:
            before_own, before_other = own, other
            played.clear()
            for _ in range(stretch if stretch < left else left):
                k = int(random_() * left)
                left -= 1
                stone = cells[k]
                cells[k] = cells[left]
                played.append(stone)
                own, other = other, own | stone  # the mover's stone; the other moves next
            both = own | other << pair
            # the shift-and test for five in a row, unrolled: runs of 2, then 4, then 5
            t = both & both >> d1
            t &= t >> 2 * d1
            if not t & both >> 4 * d1:
                t = both & both >> d2
                t &= t >> 2 * d2
                if not t & both >> 4 * d2:
                    t = both & both >> d3
                    t &= t >> 2 * d3
                    if not t & both >> 4 * d3:
                        t = both & both >> d4
                        t &= t >> 2 * d4
                        if not t & both >> 4 * d4:
                            if len(played) % 2:
                                player = 3 - player  # own: the stones of the player to move now
                            continue
            # a line appeared in this stretch: replay it stone by stone
            own, other = before_own, before_other
            for stone in played:
                own |= stone
                if self._five(own):
                    return player
                own, other = other, own
                player = 3 - player
            raise AssertionError("a line appeared but no move made it")  # pragma: no cover
        return None

    def _exact_five(self, own: int) -> bool:
        """Whether ``own`` holds a run of exactly five: a run of five or more starting at
        a stone whose predecessor is empty and whose sixth cell is not its own."""
        for d in self.shifts:
            t = own & own >> d
            t &= t >> 2 * d
            t &= own >> 4 * d
            if t and t & ~(own >> 5 * d | own << d):
                return True
        return False

    def _five(self, own: int) -> bool:
        for d in self.shifts:
            t = own & own >> d
            t &= t >> 2 * d
            if t & own >> 4 * d:
                return True
        return False

    # ---- networks ---------------------------------------------------------------------
    def _cells(self, stones: int) -> np.ndarray:
        """The cells of a bitboard as 0/1 uint8 in action order (row 0 at the top)."""
        return self._empty.cells(stones)

    def board(self, state: GomokuState) -> np.ndarray:
        """The cells as an int8 array (size, size): 0 empty, 1 or 2; row 0 at the top."""
        return (self._cells(state[1]) + 2 * self._cells(state[2])).astype(np.int8).reshape(self.size, self.size)

    def encode(self, state: GomokuState) -> np.ndarray:
        """Player 1's stones (size*size, action order), player 2's, the last move (one 1,
        none at the start), then two bits for who moves (1, 2): 3*size*size + 2 values."""
        n2 = self.num_actions
        out = np.zeros(3 * n2 + 2, dtype=np.float32)
        out[:n2] = self._cells(state[1])
        out[n2 : 2 * n2] = self._cells(state[2])
        if state[4]:
            out[2 * n2 + state[4][-1]] = 1.0
        out[3 * n2 + state[0] - 1] = 1.0
        return out

    def encode_planes(self, state: GomokuState) -> np.ndarray:
        """Planes (size, size, 4 + 2*history): the stones of the player to move, the
        opponent's, the last move, all ones when player 1 (black) is to move, then for
        each of the ``history`` earlier positions (newest first) the stones of the player
        to move and the opponent's as they stood then (all zeros before the start)."""
        n = self.size
        player, ones, twos, _, moves = state
        own, other = (ones, twos) if player == 1 else (twos, ones)
        planes = np.zeros((n, n, 4 + 2 * self.history), dtype=np.float32)
        planes[:, :, 0] = self._cells(own).reshape(n, n)
        planes[:, :, 1] = self._cells(other).reshape(n, n)
        if moves:
            planes[moves[-1] // n, moves[-1] % n, 2] = 1.0
        if player == 1:
            planes[:, :, 3] = 1.0
        for t in range(1, self.history + 1):
            if t > len(moves):
                break
            bit = self.bit[moves[-t]]  # taken back: the stone played t moves ago
            own &= ~bit
            other &= ~bit
            planes[:, :, 2 + 2 * t] = self._cells(own).reshape(n, n)
            planes[:, :, 3 + 2 * t] = self._cells(other).reshape(n, n)
        return planes

    def symmetries(self, x: np.ndarray, target: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The 8 symmetries of the square (4 turns, each with and without a mirror), the
        identity first, applied to the board planes of ``x`` and to the target alike."""
        n, n2 = self.size, self.num_actions
        target = np.asarray(target)
        grid_target = target.reshape(n, n)
        if x.ndim == 3:  # planes (row, col, channel)
            boards, tail = x, None
        else:  # flat: three boards, then the to-move bits
            boards, tail = x[: 3 * n2].reshape(3, n, n).transpose(1, 2, 0), x[3 * n2 :]
        cases = []
        for mirror in (False, True):
            b, t = (boards[:, ::-1], grid_target[:, ::-1]) if mirror else (boards, grid_target)
            for turns in range(4):
                bb = np.rot90(b, turns, axes=(0, 1))
                tt = np.rot90(t, turns).reshape(n2).copy()
                if tail is None:
                    xx = np.ascontiguousarray(bb)
                else:
                    xx = np.concatenate([bb.transpose(2, 0, 1).reshape(-1), tail])
                cases.append((xx, tt))
        cases[0] = (x, target)
        return cases

    # ---- matches ----------------------------------------------------------------------
    match_opening_kind = "balanced stones near the centre"

    def match_opening(self, starting_player: int, rng: np.random.Generator) -> list[int]:
        """Three stones (the opener's, the other's, the opener's) drawn at random near the
        centre, within two cells of it (one on a board under 9), no two of one colour
        touching: balanced stones as Gomocup starts its games from, for the pairs of games
        of a match (``Game.match_opening``)."""
        n = self.size
        middle, reach = (n - 1) // 2, 2 if n >= 9 else 1
        near = [r * n + c for r in range(middle - reach, middle + reach + 1)
                for c in range(middle - reach, middle + reach + 1)]
        while True:
            moves = [int(a) for a in rng.choice(near, size=3, replace=False)]
            (r0, c0), (r2, c2) = divmod(moves[0], n), divmod(moves[2], n)
            if max(abs(r0 - r2), abs(c0 - c2)) > 1:
                return moves

    # ---- people -----------------------------------------------------------------------
    def cell_name(self, action: int) -> str:
        return letter_cell_name(action, self.size)

    def action_to_text(self, action: int, state: GomokuState | None = None) -> str:
        return self.cell_name(action)

    def parse_action(self, text: str, state: GomokuState) -> int:
        action = parse_letter_cell(text, self.size, self.move_help)
        self.check_legal(state, action)
        return action

    def render(self, state: GomokuState) -> str:
        """The board with row 1 at the top: X (player 1, black), O (player 2, white), '.'
        empty; the last stone in parentheses, the winning line in brackets; column letters
        above and below, row numbers on both sides; then who moves or how the game ended."""
        n = self.size
        player, _, _, winner, moves = state
        cells = self.board(state).reshape(-1)
        ordered = self.winning_line(state)
        line = set(ordered)
        last = moves[-1] if moves else None
        letters = "    " + "".join(f" {chr(ord('a') + c)} " for c in range(n))
        rows = [letters]
        for r in range(n):
            text = []
            for c in range(n):
                a = r * n + c
                mark = ".XO"[cells[a]]
                if a in line:
                    text.append(f"[{mark}]")
                elif a == last:
                    text.append(f"({mark})")
                else:
                    text.append(f" {mark} ")
            rows.append(f"{r + 1:>3} " + "".join(text) + f" {r + 1}")
        rows.append(letters)
        if winner:
            rows.append(f"player {winner} ({MARKS[winner]}) has won: {len(line)} in a row, "
                        f"{self.cell_name(ordered[0])}-{self.cell_name(ordered[-1])}")
        elif self.is_final(state):
            rows.append("a draw: the board is full")
        else:
            rows.append(f"player {player} ({MARKS[player]}) to move")
        return "\n".join(rows)


@mctsfw.hookimpl
def mctsfw_register_games():
    return [Gomoku]


@mctsfw.hookimpl
def mctsfw_board_svg(game, state, last_action, heat):
    """Gomoku on a grid with the cell names people type (``h8``: column letter, row number
    from the top row 1); black (player 1) opens."""
    if not isinstance(game, Gomoku):
        return None
    from hexzero.mctsfw import svg

    n, cells = game.size, game.board(state)
    stones = {r * n + c: int(cells[r, c]) for r in range(n) for c in range(n) if cells[r, c]}
    return svg.grid_board(n, stones, game.grid_action, column_names="abcdefghijklmnopqrstuvwxyz"[:n],
                          row_names=[str(i + 1) for i in range(n)], last_action=last_action, heat=heat,
                          title=f"Gomoku {n}x{n}")
