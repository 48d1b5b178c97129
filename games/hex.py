"""Hex on an n x n rhombus, with the conventions of the Online Hex Tournament (OHT).

Cells are row-major, action ``a = row*n + col``. Player 1 connects row 0 to row n-1
(the north-east and south-west sides of the diamond), player 2 connects column 0 to
column n-1 (north-west and south-east). The neighbours of (r, c) are (r-1, c),
(r-1, c+1), (r, c-1), (r, c+1), (r+1, c-1), (r+1, c).

A state is the tuple ``(player_to_move, stones_of_1, stones_of_2, winner)`` with the
stones as bitboards (bit ``a`` is cell ``a``) and winner 0 while the game runs.
Win detection is incremental: a move only floods the group of the stone just played.
A playout fills the remaining cells and tests the connection once, which is exact
because a full Hex board holds exactly one winning chain (that of the player who
connected first: stones never leave).
"""

from __future__ import annotations

import random
import threading
from typing import Any, Callable, Sequence

import networkx as nx
import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.game import (EmptyCells, Forcing, Game, IllegalMoveError, KeptAnswers, compiled_module, letter_cell_name,
                                  parse_letter_cell, stone_planes_of_encoded)
from hexzero.mctsfw.schema import Parameters, Setting

MIN_SIZE, MAX_SIZE = 3, 19

HexState = tuple  # (player_to_move, stones_of_1, stones_of_2, winner)
#: ``Hex._pairing``'s working arrays by (board size, thread): a thread's own, kept off the
#: game (which pickles)
_PAIRING_WORK: dict[tuple[int, int], tuple] = {}


def hex_graph(n: int) -> nx.Graph:
    """The board as a graph: a node per cell index, an edge between neighbours."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n * n))
    for r in range(n):
        for c in range(n):
            for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < n and 0 <= cc < n:
                    graph.add_edge(r * n + c, rr * n + cc)
    return graph


def iter_bits(bits: int):
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


#: the planes' order under the mirror with colours swapped: each side's stones, who moves and
#: each side's edges trade places
SWAPPED_PLANES = [1, 0, 3, 2, 5, 4]


class Hex(Game):
    name = "hex"
    description = "Hex on an n x n board (OHT orientation: player 1 joins rows, player 2 columns)"

    parameters = Parameters(
        Setting("size", 5, "board side (5: cli.py train's run; the shipped networks play 5, 7, 9 and 11)", low=MIN_SIZE, high=MAX_SIZE),
        Setting("swap", False, "the pie rule: after the first move the second player may take it (HexGui's "
                               "swap-pieces: the stone mirrored across the long diagonal becomes theirs)"),
        Setting("pairing", False, "searches prove a position won where the player to move holds a chain of bridges "
                                 "and edge templates with at most one gap, and keep only the moves inside the "
                                 "opponent's such chains (games/hex_pairing.py; with the search's threats)"),
        Setting("vc", False, "searches prove a position won where the player to move holds a virtual connection "
                             "between their sides found by H-search, and keep only the moves inside the opponent's "
                             "semi connections (games/hex_vc.py; about 2 ms a node on 9x9, 5 on 11x11)"),
        Setting("prune", False, "searches leave out the moves into cells that fill-in fills for the player to move, "
                                "dead cells and captured ones, as MoHex does (games/hex_vc.py's prune; with the "
                                "search's threats)"),
    )
    #: SGF's Hex (``mctsfw.sgf``): cells as HexGui writes them, ``a1`` = action 0 = row 0
    #: (the top row, player 1's first side), column a; player 1 is Black. The board is
    #: numbered row by row from the top, so ``Game.grid_cell``/``grid_action`` serve as they are.
    sgf_game = 11
    #: UCT's c with random rollouts: c = 0.25 beats 1.4 at 400 search games from 7x7 up
    #: (benchmarks/exploration.py; the figures: docs/search.md, exploration settings)
    tree_policy_defaults = {"uct": {"c": 0.25}}
    #: a match between players that choose alike every time starts each pair of games from
    #: two random stones, one of each player (``Game.match_opening``)
    match_opening_moves = 2
    #: the on-policy ANET convolves over the board: on 5x5 its raw networks keep more won
    #: positions against perfect play than an MLP's, in about twice the time (docs/hex.md)
    net_defaults = {"anet": {"conv_layers": [16, 16, 16], "hidden_layers": []}}

    def __init__(self, size: int = parameters.default("size"), swap: bool = parameters.default("swap"),
                 pairing: bool = parameters.default("pairing"), vc: bool = parameters.default("vc"),
                 prune: bool = parameters.default("prune")):
        problems = self.param_problems({"size": size, "swap": swap, "pairing": pairing, "vc": vc, "prune": prune})
        if problems:
            raise ValueError("; ".join(problems))
        self.swap = bool(swap)
        self.pairing = bool(pairing)
        self.vc = bool(vc)
        self.prune = bool(prune)
        n = self.size = int(size)
        self.num_actions = n * n
        self.move_help = (
            f"a column letter and a row number like 'b3' (columns a-{chr(ord('a') + n - 1)}, "
            f"rows 1-{n}), or 'row col' counted from 0 like '2 1'"
        )
        self.graph = hex_graph(n)
        self.bit = [1 << a for a in range(n * n)]
        self.neighbours = [sum(self.bit[b] for b in self.graph.neighbors(a)) for a in range(n * n)]
        self.full = (1 << (n * n)) - 1
        row0 = (1 << n) - 1
        col0 = sum(1 << (r * n) for r in range(n))
        # (start side, end side) for each player
        self.sides = {1: (row0, row0 << (n * (n - 1))), 2: (col0, col0 << (n - 1))}
        # each player's lines across their sides, from the start side: rows for 1, columns for 2
        self._lines = {1: [row0 << (n * r) for r in range(n)], 2: [col0 << c for c in range(n)]}
        self._not_first_col = self.full & ~col0
        # the cells of each byte of a bitboard, by the byte's value: lists cells fast
        self._nbytes = (n * n + 7) // 8
        self._cells_of_byte = [
            [tuple(8 * i + b for b in range(8) if value >> b & 1) for value in range(256)] for i in range(self._nbytes)
        ]
        self._not_last_col = self.full & ~(col0 << (n - 1))
        self._tiled: dict[int, tuple[int, int, int, int]] = {}  # batch size -> ``_decided``'s masks
        self._empty = EmptyCells(self.full, self.num_actions)
        self._reaches = {1: KeptAnswers(), 2: KeptAnswers()}  # player -> stones -> their reach (``completing_cells``)
        # ``symmetries``: where each cell of a symmetric board comes from, and whether the colours swap
        cells = np.arange(n * n)
        mirrored = cells.reshape(n, n).T.reshape(-1)
        self._symmetries = ((cells, False), (cells[::-1], False), (mirrored, True), (cells[::-1][mirrored], True))
        edges = np.zeros((size, size, 2), dtype=np.float32)
        edges[[0, -1], :, 0] = 1.0  # player 1 connects row 0 to row n-1
        edges[:, [0, -1], 1] = 1.0  # player 2 connects column 0 to column n-1
        self._edge_planes = edges

    def kernels(self):
        """The compiled kernels of the array search (``games.hex_kernels``; None without numba)."""
        module = compiled_module("hexzero.games.hex_kernels")
        return None if module is None else module.HexKernels(self)

    def params(self) -> dict[str, Any]:
        # the pie rule and the pairing proofs only when they are on: records and names of games
        # without them stay as they were
        params = {"size": self.size}
        if self.swap:
            params["swap"] = True
        if self.pairing:
            params["pairing"] = True
        if self.vc:
            params["vc"] = True
        if self.prune:
            params["prune"] = True
        return params

    # ---- the pie rule ---------------------------------------------------------------------
    def swap_problem(self, starting_player: int, moves) -> str | None:
        if not self.swap:
            return "the pie rule is off (games.hex.swap = false)"
        if len(moves) != 1:
            return "the swap is the second player's first move"
        return None

    def swapped(self, starting_player: int, moves) -> tuple[int, list[int]]:
        """HexGui's swap-pieces: the first stone, mirrored across the long diagonal (row and
        column exchanged), becomes the second player's, and the first player moves: the
        game in which the second player opened there. Mirroring exchanges the two players'
        sides, so the second player keeps their side and the position is the one the first
        player made, seen from the other side."""
        if len(moves) != 1:
            raise IllegalMoveError("the swap is the second player's first move")
        row, col = self.grid_cell(moves[0])
        return 3 - starting_player, [self.grid_action(col, row)]

    # ---- the rules --------------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> HexState:
        if starting_player not in (1, 2):
            raise ValueError(f"starting_player is 1 or 2, not {starting_player!r}")
        return (starting_player, 0, 0, 0)

    def current_player(self, state: HexState) -> int:
        return state[0]

    def legal_actions(self, state: HexState) -> list[int]:
        if state[3]:
            return []
        empty = (self.full & ~(state[1] | state[2])).to_bytes(self._nbytes, "little")
        return [a for cells, byte in zip(self._cells_of_byte, empty) for a in cells[byte]]

    def legal_mask(self, state: HexState) -> np.ndarray:
        """``Game.legal_mask`` from the bitboard: the empty cells unpacked, no list made."""
        return self.legal_masks([state])[0]

    def legal_masks(self, states: Sequence[HexState]) -> np.ndarray:
        """``Game.legal_masks`` from the bitboards, unpacked in one call (``EmptyCells``:
        each position's moves kept, which the search lists those leaves' moves from next)."""
        return self._empty.masks([self.full if state[3] else state[1] | state[2] for state in states])

    def search_array(self, state: HexState) -> np.ndarray:
        """``Game.search_array`` from the bitboard: the empty cells' actions, kept (no list made)."""
        return np.empty(0, dtype=np.intp) if state[3] else self._empty.moves(state[1] | state[2])

    def next_state(self, state: HexState, action: int) -> HexState:
        player, ones, twos, winner = state
        if winner:
            raise IllegalMoveError(f"the game is over: player {winner} has won")
        if not (isinstance(action, (int, np.integer)) and 0 <= action < self.num_actions):
            raise IllegalMoveError(f"action {action!r} is not a cell of the {self.size}x{self.size} board")
        bit = self.bit[action]
        if (ones | twos) & bit:
            r, c = divmod(int(action), self.size)
            raise IllegalMoveError(f"cell {self.cell_name(action)} (row {r}, col {c}) is already taken")
        before = ones if player == 1 else twos
        own = before | bit
        if player == 1:
            ones = own
        else:
            twos = own
        kept = self._reaches[player]
        reach = kept.get(before)  # where the search asked the position's threats
        if reach is not None:  # the mover's reach kept too, grown where the stone joins a side's chain:
            near_start, near_end = reach  # by the stones it brings (the chain is ``before & near_start``)
            if bit & near_start & near_end:
                winner = player
            else:
                if bit & near_start:
                    reach = (near_start | self._brought(own & ~near_start, action), near_end)
                elif bit & near_end:
                    reach = (near_start, near_end | self._brought(own & ~near_end, action))
                kept.keep(own, reach)
        elif own.bit_count() >= self.size:  # (a chain across the board has at least `size` stones)
            start, end = self.sides[player]
            group = self._group(own, bit)
            if group & start and group & end:
                winner = player
        return (3 - player, ones, twos, winner)

    def is_final(self, state: HexState) -> bool:
        return state[3] != 0

    def winner(self, state: HexState) -> int | None:
        return state[3] or None

    def _group(self, own: int, seed: int) -> int:
        """The stones of ``own`` connected to the stones in ``seed``."""
        neighbours = self.neighbours
        group = frontier = seed
        while frontier:
            reach = 0
            while frontier:
                low = frontier & -frontier
                reach |= neighbours[low.bit_length() - 1]
                frontier ^= low
            frontier = reach & own & ~group
            group |= frontier
        return group

    def _brought(self, others: int, action: int) -> int:
        """The cells on or next to the stones a stone at ``action`` joins to a chain: itself
        and those of ``others`` (the mover's stones outside that chain) connected to it."""
        if self.neighbours[action] & others:
            bit = self.bit[action]
            return self._around(self._flood(others | bit, bit))
        return self.bit[action] | self.neighbours[action]  # (most often: a stone alone)

    def _around(self, group: int) -> int:
        """``group`` and every cell next to it (bit shifts: the six neighbours)."""
        n = self.size
        right = group & self._not_last_col
        left = group & self._not_first_col
        return (group | (group << n) & self.full | group >> n | right << 1 | left >> 1 | right >> (n - 1)
                | (left << (n - 1)) & self.full)

    def _flood(self, own: int, side: int, stop: int = 0) -> int:
        """The stones of ``own`` connected to the cells of ``side`` (whole-board flood by
        bit shifts); it stops early, incomplete, once it reaches a cell of ``stop``."""
        group = own & side
        n, not_first, not_last, full = self.size, self._not_first_col, self._not_last_col, self.full
        while group:  # ``_around`` written out: the threats of every node of a search flood
            right = group & not_last
            left = group & not_first
            grown = (group | (group << n) & full | group >> n | right << 1 | left >> 1 | right >> (n - 1)
                     | (left << (n - 1)) & full) & own
            if grown == group or grown & stop:
                return grown
            group = grown
        return group

    def _connects(self, own: int, player: int) -> bool:
        """Whether ``own`` joins the player's two sides: ``_flood`` from the start side,
        stopping at the end side, written out here (every playout ends in this test)."""
        n = self.size
        start, end = self.sides[player]
        group = own & start
        if not group:
            return False
        not_first, not_last, full = self._not_first_col, self._not_last_col, self.full
        while True:
            right = group & not_last
            left = group & not_first
            grown = (
                group
                | (group << n) & full
                | group >> n
                | right << 1
                | left >> 1
                | right >> (n - 1)
                | (left << (n - 1)) & full
            ) & own
            if grown == group:
                return bool(group & end)
            if grown & end:
                return True
            group = grown

    def completing_cells(self, own: int, player: int, empty: int) -> int:
        """The cells of ``empty`` where one more stone of ``own`` joins the player's two
        sides: each touches (or lies on) the start side's chain and the end side's.

        The two reaches (the cells next to or on each side's chain) are kept for the latest
        stone sets (``KeptAnswers``): a search asks at every new node for both players, and
        the stones of the player to move there are those its parent asked about for the
        opponent (so are its siblings'); the mover's are grown from their parent's by the
        new stone (``next_state``), so a search floods the whole board only at its root."""
        kept = self._reaches[player]
        reach = kept.get(own)
        if reach is None:
            start, end = self.sides[player]
            reach = kept.keep(own, (self._around(self._flood(own, start)) | start,
                                    self._around(self._flood(own, end)) | end))
        return reach[0] & reach[1] & empty

    def forcing_actions(self, state: HexState) -> Forcing | None:
        """The cells that join the two sides for the player to move; else the cells that
        would join the opponent's (each must be taken); else None."""
        player, ones, twos, _ = state
        if ones.bit_count() < self.size - 1 and twos.bit_count() < self.size - 1:
            return None  # a chain across the board has at least `size` stones
        empty = self.full & ~(ones | twos)
        for who, stones, wins in ((player, ones if player == 1 else twos, True),
                                  (3 - player, twos if player == 1 else ones, False)):
            cells = self.completing_cells(stones, who, empty)
            if cells:
                return Forcing(tuple(iter_bits(cells)), wins)
        return None

    # ---- what the stones already hold: pairing connections (``games.hex_pairing``) --------
    def _pairing(self):
        """(the compiled ``hex_pairing`` module, the neighbour table, this thread's working
        arrays), or None without numba (whatever ``pairing`` says: the solver prunes with it)."""
        module = compiled_module("hexzero.games.hex_pairing")
        if module is None:
            return None
        key = (self.size, threading.get_ident())
        work = _PAIRING_WORK.get(key)
        if work is None:
            nbr = compiled_module("hexzero.games.hex_kernels").neighbour_table(self.size)
            work = _PAIRING_WORK[key] = (module, nbr, module.scratch(self.size))
        return work

    def _vc(self, on: bool = True):
        """(the compiled ``hex_vc`` module, the neighbour table) where ``on`` (a setting);
        else (or without numba) None."""
        module = compiled_module("hexzero.games.hex_vc") if on else None
        return None if module is None else (module, compiled_module("hexzero.games.hex_kernels").neighbour_table(self.size))

    def _spans(self, stones: int, player: int) -> bool:
        """``hex_pairing.spans`` on the bitboard: no two lines in a row across the player's
        sides without a stone of theirs (else no chain: the kernel is not called)."""
        bare = 0
        for line in self._lines[player]:
            bare = 0 if stones & line else bare + 1
            if bare == 2:
                return False
        return True

    def forced_win(self, state: HexState, thorough: bool = False) -> list[int] | None:
        """Where the player to move holds a pairing connection with at most one gap (its
        bridges and second-row edge templates; ``games.hex_pairing``): a winning line, the
        gap first, then each bridge's intrusion and answer (``Game.forced_win``). Sound: the
        owner of such a chain answers every intrusion. Else, with ``vc``, where H-search
        (``games.hex_vc``) finds the player a connection between their sides: its first move
        (a semi connection's key), then its carrier. ``thorough`` changes nothing."""
        if state[3]:
            return None
        player = state[0]
        pairing = self._pairing() if self.pairing else None
        if pairing is not None and self._spans(state[player], player):
            module, nbr, work = pairing
            line = np.empty(self.num_actions + 1, np.int64)
            k = module.won_line(self.boards([state])[0], self.size, player, nbr, *work, line)
            if k:
                return line[:k].tolist()
        vc = self._vc(self.vc)
        if vc is None:
            return None
        line = np.empty(self.num_actions, np.int64)
        k = vc[0].won_line(self.boards([state])[0], self.size, player, vc[1], line)
        return line[:k].tolist() if k else None

    def threat_defences(self, state: HexState) -> tuple[int, ...] | None:
        """Where the opponent holds pairing connections with a gap (``games.hex_pairing``),
        the empty cells common to every one found (``Game.threat_defences``): a move
        elsewhere leaves the opponent the gap to fill. Where they share none, or the
        opponent's chain has no gap, every move loses, and the first chain's cells are the
        moves kept. Else, with ``vc``, the cells common to the opponent's semi connections
        between their sides that H-search finds (``hex_vc.must_play``). With ``prune``, the
        cells fill-in fills for the player to move are left out of these (or of every empty
        cell), where any are left (``hex_vc.prune``): a move left out is then lost or no
        better than one kept. None where nothing is left out."""
        other = 3 - state[0]
        pairing = self._pairing() if self.pairing and not state[3] else None
        chains = pairing is not None and self._spans(state[other], other)
        if state[3] or not (chains or self.vc or self.prune):
            return None  # (before the board is made: every new node of a search asks)
        board = self.boards([state])[0]
        mask = None
        if chains:
            module, nbr, work = pairing
            mask = np.zeros(self.num_actions, np.bool_)
            if module.defences(board, self.size, state[0], nbr, *work, mask) <= 0:
                mask = None
        vc = self._vc(self.vc)
        if mask is None and vc is not None:
            mask = np.zeros(self.num_actions, np.bool_)
            if not vc[0].must_play(board, self.size, other, vc[1], mask):
                mask = None
        vc = self._vc(self.prune)
        if vc is not None:
            if mask is None:
                mask = board == 0
                if vc[0].prune(board, self.size, state[0], vc[1], mask) == mask.size - np.count_nonzero(board):
                    return None
            else:
                vc[0].prune(board, self.size, state[0], vc[1], mask)
        return None if mask is None else tuple(int(a) for a in np.flatnonzero(mask))

    def _decided(self, x: np.ndarray) -> np.ndarray:
        """The winner of each encoded position of a batch so far: 1 or 2 where that
        player's stones join their sides, else 0 (never 0 on a full board).

        ``_connects`` for every board and both players in one flood: the 2B stone sets
        (player 1's, player 2's, board after board) are packed into one integer, each
        followed by at least n empty bits so that every shift of the flood stays inside
        its own set (``& stones`` clears what lands in the padding). The neighbours are
        the same for both players; only the sides where a flood starts and ends differ.
        """
        n, n2, count = self.size, self.num_actions, len(x)
        nbytes = (n2 + n + 7) // 8
        padded = np.zeros((count, 2, nbytes * 8), dtype=bool)
        padded[:, :, :n2] = x[:, : 2 * n2].reshape(count, 2, n2) > 0
        stones = int.from_bytes(np.packbits(padded, axis=2, bitorder="little").tobytes(), "little")
        start, end, not_first, not_last = self._tiled_sides(count)
        group = stones & start
        while True:
            right = group & not_last
            left = group & not_first
            grown = (group | group << n | group >> n | right << 1 | left >> 1 | right >> (n - 1) | left << (n - 1)) & stones
            if grown == group:
                break
            group = grown
        reached = (group & end).to_bytes(2 * nbytes * count, "little")
        joined = np.frombuffer(reached, dtype=np.uint8).reshape(count, 2, nbytes).any(axis=2)
        return np.where(joined[:, 0], 1, np.where(joined[:, 1], 2, 0))

    def _tiled_sides(self, count: int) -> tuple[int, int, int, int]:
        """The masks of ``_decided``'s flood for ``count`` boards: where it starts, where
        it ends, and the cells off the first and last columns, repeated for each stone set."""
        tiled = self._tiled.get(count)
        if tiled is None:
            nbytes = (self.num_actions + self.size + 7) // 8

            def repeat(mask1: int, mask2: int) -> int:
                return int.from_bytes((mask1.to_bytes(nbytes, "little") + mask2.to_bytes(nbytes, "little")) * count, "little")

            (start1, end1), (start2, end2) = self.sides[1], self.sides[2]
            tiled = self._tiled[count] = (
                repeat(start1, start2), repeat(end1, end2),
                repeat(self._not_first_col, self._not_first_col), repeat(self._not_last_col, self._not_last_col),
            )  # fmt: skip
        return tiled

    def playout(
        self, state: HexState, rng: random.Random, choose: Callable[[HexState], int] | None = None
    ) -> int:
        """Fill the empty cells (randomly, or by ``choose``) and test the connection once."""
        player, ones, twos, winner = state
        if winner:
            return winner
        if choose is None:
            mover_bits = self._movers_half(self.full & ~(ones | twos), rng)
            # the other player gets every remaining cell
            if player == 1:
                ones |= mover_bits
            else:
                ones |= self.full & ~(ones | twos | mover_bits)
        else:
            occupied = ones | twos
            while occupied != self.full:
                bit = self.bit[choose((player, ones, twos, 0))]
                if player == 1:
                    ones |= bit
                else:
                    twos |= bit
                occupied |= bit
                player = 3 - player
        return 1 if self._connects(ones, 1) else 2

    def _movers_half(self, empty: int, rng: random.Random) -> int:
        """The cells the player to move gets when the board is filled at random: a
        uniformly random half (rounded up) of ``empty``, as after a random order of moves:
        a random bit per cell, kept when exactly that many came up (rejection)."""
        share = (empty.bit_count() + 1) // 2
        getrandbits, n2 = rng.getrandbits, self.num_actions
        mover_bits = getrandbits(n2) & empty
        while mover_bits.bit_count() != share:
            mover_bits = getrandbits(n2) & empty
        return mover_bits

    def playout_played(self, state: HexState, rng: random.Random,
                       choose: Callable[[HexState], int] | None = None) -> tuple[int, tuple[list, list]]:
        """The fill-and-test playout, and the empty cells each player got: stones never
        move, so the cells a player holds at the end are the moves they made."""
        player, ones, twos, winner = state
        if choose is not None or winner:
            return super().playout_played(state, rng, choose)
        empty = self.full & ~(ones | twos)
        mover_bits = self._movers_half(empty, rng)
        other_bits = empty & ~mover_bits
        mine, theirs = list(iter_bits(mover_bits)), list(iter_bits(other_bits))
        if player == 1:
            ones |= mover_bits
            played = (mine, theirs)
        else:
            ones |= other_bits
            played = (theirs, mine)
        return (1 if self._connects(ones, 1) else 2), played

    def playout_batch(self, states, rng: random.Random, policy=None) -> list[int]:
        """Playouts in lock-step: one ``choose_batch`` call per move for the whole batch.

        The batch is sorted by empty cells, most first, so the games still running at
        any step are a prefix of it and every step works on array views; the encoded
        states and legal masks are updated in place, one cell a move. A game's last
        cell needs no choice: it is filled without asking the policy.

        From half-way (``DECIDED_FIRST_TEST``), every ``DECIDED_TEST_EVERY`` moves, the
        boards are tested together (``_decided``) and the games already won leave the
        batch: a connection never breaks, so the rest of their moves (about 40% of a
        greedy 5x5 playout from a search's leaves) would only cost network calls. The
        winners are those of filling every board.
        """
        if policy is None or not states:
            return [self.playout(state, rng) for state in states]
        boards = self.boards(states)
        empty = (boards == 0).sum(axis=1)
        order = np.argsort(-empty, kind="stable")  # order[i]: the state of row i
        boards, empty = boards[order], empty[order]
        players = np.array([states[i][0] for i in order], dtype=np.int64)  # to move now
        x = self.encode_boards(boards, players)
        mask = (boards == 0).astype(np.float32)
        winners = np.zeros(len(states), dtype=np.int64)
        moves = int(empty[0] * self.DECIDED_FIRST_TEST)
        while len(order):
            moves = min(max(moves, 1), int(empty[0]))
            self._play_lockstep(policy, x, mask, empty, players, moves)
            winner = self._decided(x)
            winners[order] = winner  # the undecided ones are set again later
            going = winner == 0  # (a game with no cell left is decided)
            x, mask, order = x[going], mask[going], order[going]
            empty = empty[going] - moves
            players = players[going] if moves % 2 == 0 else 3 - players[going]
            moves = self.DECIDED_TEST_EVERY
        return winners.tolist()

    #: when lock-step playouts first test for decided games (a share of the longest
    #: playout's moves), and the moves between later tests: few games are decided in the
    #: first half, and testing 32 boards costs about half a network call. Measured on the
    #: leaves of a 5x5 search with the shipped ANET, per rollout: batches of 32, 24.6 us
    #: (filling every board) -> 23.5 us; of 128, 17.3 -> 14.1 us (testing from the first
    #: move: 26.9 and 15.6 us).
    DECIDED_FIRST_TEST = 0.5
    DECIDED_TEST_EVERY = 4

    def _play_lockstep(self, policy, x: np.ndarray, mask: np.ndarray, empty: np.ndarray, players: np.ndarray,
                       moves: int) -> None:
        """Up to ``moves`` moves of every game of a batch (those with fewer empty cells
        fill them), updating the encoded states ``x`` and masks in place; the games are
        sorted by empty cells, most first, and ``players`` are to move in each now."""
        n2 = self.num_actions
        # every game alternates, so who moves at a step is known in advance: where a
        # stone goes in the flat encoding and the to-move bits, for even and odd steps
        width, rows = x.shape[1], np.arange(len(x))
        stone_at = (rows * width + (players - 1) * n2, rows * width + (2 - players) * n2)
        to_move = (x[:, -2:].copy(), x[:, -2:][:, ::-1].copy())
        cell_at = rows * n2
        flat_x, flat_mask = x.reshape(-1), mask.reshape(-1)  # views: one index per cell set
        # running[s]: games with a cell left at step s (they are the first ones)
        running = np.cumsum(np.bincount(empty, minlength=int(empty[0]) + 2)[::-1])[::-1][1:].tolist()
        for step in range(moves):
            k, chosen = running[step], running[step + 1]  # games with a cell left; with two or more
            if chosen:
                actions = policy.choose_batch(x[:chosen], mask[:chosen])
                if chosen < k:  # the rest have one cell left
                    actions = np.concatenate([actions, mask[chosen:k].argmax(axis=1)])
            else:
                actions = mask[:k].argmax(axis=1)
            flat_x[stone_at[step % 2][:k] + actions] = 1.0
            flat_mask[cell_at[:k] + actions] = 0.0
            x[:k, -2:] = to_move[(step + 1) % 2][:k]  # the other player moves next

    # ---- networks -------------------------------------------------------------------
    def boards(self, states) -> np.ndarray:
        """The states as an int8 array (batch, n*n) of cells 0, 1 or 2."""
        nbytes = (self.num_actions + 7) // 8
        raw = b"".join(s[1].to_bytes(nbytes, "little") + s[2].to_bytes(nbytes, "little") for s in states)
        bits = np.unpackbits(
            np.frombuffer(raw, dtype=np.uint8).reshape(len(states), 2, nbytes), axis=2, count=self.num_actions, bitorder="little"
        )
        return (bits[:, 0] + 2 * bits[:, 1]).astype(np.int8)

    def encode_boards(self, boards: np.ndarray, players: np.ndarray) -> np.ndarray:
        """``encode`` for a batch of boards (batch, n*n) and players to move (batch,)."""
        return np.concatenate(
            [boards == 1, boards == 2, (players == 1)[:, None], (players == 2)[:, None]], axis=1
        ).astype(np.float32)

    def symmetries(self, x: np.ndarray, target: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The four positions equal to this one for the player to move: itself, the board
        turned by 180 degrees (cell a becomes n*n-1-a, each side stays its owner's), and both
        of them mirrored across the long diagonal with the colours swapped (cell (r, c)
        becomes (c, r), player 1's stones player 2's and the other to move: a connection
        between rows becomes one between columns, so the mover wins or loses alike)."""
        n2 = self.num_actions
        cases = []
        for source, swap in self._symmetries:
            if x.ndim == 3:  # planes (row, col, channel): each side's stones, who moves, each side's edges
                flat = x.reshape(n2, -1)[source]
                if swap:
                    flat = flat[:, SWAPPED_PLANES[:flat.shape[1]]]
                moved = np.ascontiguousarray(flat.reshape(x.shape))
            else:  # player 1's stones, player 2's, then who moves (1, 2)
                ones, twos, to_move = x[:n2][source], x[n2:2 * n2][source], x[2 * n2:]
                moved = np.concatenate([twos, ones, to_move[::-1]] if swap else [ones, twos, to_move])
            cases.append((moved, target[source].copy()))
        return cases

    def planes_of_encoded(self, x: np.ndarray) -> np.ndarray:
        """The flat encodings of a batch laid out as planes (n, n, 4): player 1's stones,
        player 2's, then all-ones for who moves (1, 2); what the ANET's convolutions read
        (``encode_planes`` adds the edges)."""
        return stone_planes_of_encoded(x, self.size, self.size)

    def encode_planes(self, state: HexState) -> np.ndarray:
        """Six planes (n, n, 6): player 1's stones, player 2's, all-ones for who moves (1,
        2), then each player's two edges: ones on rows 0 and n-1 (player 1's), ones on
        columns 0 and n-1 (player 2's). A convolution then knows where the board ends and
        whose edge it touches, on any board size."""
        planes = np.empty((self.size, self.size, 6), dtype=np.float32)
        planes[:, :, :4] = self.planes_of_encoded(self.encode(state)[None, :])[0]
        planes[:, :, 4:] = self._edge_planes
        return planes

    def encode(self, state: HexState) -> np.ndarray:
        """Two planes of n*n bits (player 1's stones, player 2's) then two bits for who moves."""
        return self.encode_boards(self.boards([state]), np.array([state[0]]))[0]

    # ---- the OHT flat state ---------------------------------------------------------
    def to_flat(self, state: HexState) -> tuple[int, ...]:
        """``(player_to_move, cell_0, ..., cell_{n*n-1})`` with cells 0 empty, 1 or 2."""
        player, ones, twos, _ = state
        cells = [1 if ones >> a & 1 else 2 if twos >> a & 1 else 0 for a in range(self.num_actions)]
        return (player, *cells)

    def from_flat(self, flat: Sequence[int]) -> HexState:
        """The state of an OHT flat tuple; a malformed one raises ValueError saying why."""
        flat = list(flat)
        if len(flat) != self.num_actions + 1:
            raise ValueError(
                f"a flat {self.size}x{self.size} Hex state has {self.num_actions + 1} values "
                f"(player to move, then {self.num_actions} cells), not {len(flat)}"
            )
        player, cells = flat[0], flat[1:]
        if player not in (1, 2):
            raise ValueError(f"the player to move (first value) is 1 or 2, not {player!r}")
        bad = [i for i, v in enumerate(cells) if v not in (0, 1, 2)]
        if bad:
            raise ValueError(f"cell values are 0, 1 or 2; cell {bad[0]} holds {cells[bad[0]]!r}")
        ones = sum(self.bit[a] for a, v in enumerate(cells) if v == 1)
        twos = sum(self.bit[a] for a, v in enumerate(cells) if v == 2)
        winner = 1 if self._connects(ones, 1) else 2 if self._connects(twos, 2) else 0
        return (player, ones, twos, winner)

    # ---- people -----------------------------------------------------------------------
    def cell_name(self, action: int) -> str:
        return letter_cell_name(action, self.size)

    def action_to_text(self, action: int, state: HexState | None = None) -> str:
        return self.cell_name(action)

    def parse_action(self, text: str, state: HexState) -> int:
        action = parse_letter_cell(text, self.size, self.move_help)
        self.check_legal(state, action)
        return action

    def check_legal(self, state: HexState, action: int) -> None:
        if state[3]:
            raise IllegalMoveError(f"the game is over: player {state[3]} has won")
        if (state[1] | state[2]) & self.bit[action]:
            raise IllegalMoveError(f"cell {self.cell_name(action)} is already taken")

    def render_after(self, state: HexState, last_action: int | None = None) -> str:
        return self.render(state, last_action)

    def render(self, state: HexState, last_action: int | None = None) -> str:
        """The board as a diamond: cell (0, 0) on top, rows run down to the right; the
        cell of ``last_action`` in brackets, ``(X)``.

        X (player 1) joins the north-east and south-west sides (rows 1 and n);
        O (player 2) joins the north-west and south-east sides (columns a and last).
        Every side is labelled: row numbers on the north-west and south-east sides,
        column letters on the north-east and south-west ones (the west and east corners
        carry the labels of their upper side).
        """
        n = self.size
        player, ones, twos, winner = state
        width = 4 * (n - 1) + 1
        margin = 6
        lines = []
        top = " " * (margin + 2 * (n - 1)) + "N"
        lines.append(top)
        for d in range(2 * n - 1):
            cells = [(r, d - r) for r in range(min(d, n - 1), max(0, d - n + 1) - 1, -1)]
            row = [" "] * (width + 2 * margin)
            for r, c in cells:
                a = r * n + c
                x = margin + 2 * (c - r + n - 1)
                row[x] = "X" if ones >> a & 1 else "O" if twos >> a & 1 else "."
                if a == last_action:
                    row[x - 1], row[x + 1] = "(", ")"
            text = "".join(row).rstrip()
            # the labels of the leftmost and rightmost cells of the line: above the middle,
            # row numbers on the north-west side (column a) and column letters on the
            # north-east side (row 1); below it, column letters on the south-west side
            # (row n) and row numbers on the south-east side (the last column)
            (r_left, c_left), (r_right, c_right) = cells[0], cells[-1]
            left, right = (f"{r_left + 1}", chr(ord("a") + c_right)) if d < n else \
                (chr(ord("a") + c_left), f"{r_right + 1}")
            first_x = margin + 2 * (c_left - r_left + n - 1)
            text = text[: first_x - 4] + f"{left:>2}" + text[first_x - 2:]
            text = text + " " * (margin + 2 * (c_right - r_right + n - 1) + 4 - len(text)) + right
            lines.append(text)
        lines.append(" " * (margin + 2 * (n - 1)) + "S")
        lines.append(
            "X = player 1: joins rows 1 and %d (north-east and south-west sides)\n"
            "O = player 2: joins columns a and %s (north-west and south-east sides)" % (n, chr(ord("a") + n - 1))
        )
        if winner:
            lines.append(f"player {winner} ({'X' if winner == 1 else 'O'}) has won")
        else:
            lines.append(f"player {player} ({'X' if player == 1 else 'O'}) to move")
        return "\n".join(lines)


@mctsfw.hookimpl
def mctsfw_register_games():
    return [Hex]


#: the colours of player 1's and player 2's stones and goal sides on the web board
HEX_COLOURS = {1: "#d62728", 2: "#1f5fbf"}


@mctsfw.hookimpl
def mctsfw_board_svg(game, state, last_action, heat):
    """Hex as the diamond of ``render``: cell a1 on top, row 1 running down to the right
    (north-east side) and column a down to the left (north-west side); player 1's goal
    sides (north-east, south-west) and player 2's (north-west, south-east) coloured as
    their stones."""
    if not isinstance(game, Hex):
        return None
    from hexzero.mctsfw import svg

    n, (_, ones, twos, _) = game.size, state
    radius = 20.0
    width = 3 ** 0.5 * radius  # between the centres of two neighbours
    x0, y0 = 40.0 + (n - 1) * width / 2, 72.0

    def centre(r: float, c: float) -> tuple[float, float]:
        return x0 + (c - r) * width / 2, y0 + (r + c) * 1.5 * radius

    def hexagon(x: float, y: float, size: float) -> str:
        corners = [(x + size * dx, y + size * dy) for dx, dy in
                   ((0, -1), (0.866, -0.5), (0.866, 0.5), (0, 1), (-0.866, 0.5), (-0.866, -0.5))]
        return " ".join(f"{px:.1f},{py:.1f}" for px, py in corners)

    reach = 0.9  # the goal bands run just outside the outermost cells
    top, right = centre(-reach, -reach), centre(-reach, n - 1 + reach)
    left, bottom = centre(n - 1 + reach, -reach), centre(n - 1 + reach, n - 1 + reach)
    middle = centre((n - 1) / 2, (n - 1) / 2)
    body = []
    for (a, b), player in (((top, right), 1), ((left, bottom), 1), ((top, left), 2), ((right, bottom), 2)):
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (a, b, middle))
        body.append(f'<polygon {svg.attrs(points=points, fill=HEX_COLOURS[player], class_=f"goal-{player}")}/>')
    centres = {r * n + c: centre(r, c) for r in range(n) for c in range(n)}
    for a, (x, y) in centres.items():
        body.append(f'<polygon {svg.attrs(points=hexagon(x, y, radius), fill="#f3e6c4", stroke="#6b5b3e", stroke_width=1.2)}/>')
    for a, (x, y) in centres.items():
        owner = 1 if ones >> a & 1 else 2 if twos >> a & 1 else 0
        if owner:
            body.append(svg.stone(x, y, radius * 0.72, HEX_COLOURS[owner], last=a == last_action))
    body += svg.heat_layer({a: s for a, s in (heat or {}).items() if not (ones | twos) >> a & 1}, centres, radius * 0.7)
    for i in range(n):  # column letters beyond row 1 (north-east), row numbers beyond column a (north-west)
        x, y = centre(-1.55, i)
        body.append(f'<text {svg.attrs(x=f"{x:.1f}", y=f"{y + 4:.1f}", font_size=13, text_anchor="middle", fill="#333333")}>{chr(ord("a") + i)}</text>')
        x, y = centre(i, -1.55)
        body.append(f'<text {svg.attrs(x=f"{x:.1f}", y=f"{y + 4:.1f}", font_size=13, text_anchor="middle", fill="#333333")}>{i + 1}</text>')
    for a, (x, y) in centres.items():  # the click targets, on top of everything
        body.append(f'<polygon {svg.attrs(points=hexagon(x, y, radius), fill="transparent", class_="cell", data_action=a)}>'
                    f'<title>{letter_cell_name(a, n)}</title></polygon>')
    w = 2 * x0
    h = centre(n - 1 + 1.6, n - 1 + 1.6)[1] + 10
    return svg.document(w, h, body, f"Hex {n}x{n}")
