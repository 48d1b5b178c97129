"""Go on a size x size board (5 to 19), area (Tromp-Taylor) scoring, komi 7.5, as OpenSpiel's ``go``.

The rules (Chinese / Tromp-Taylor):

- Black (player 1, X) moves first; a move puts a stone on an empty point or passes.
- After a stone is placed, opponent groups left without a liberty are captured (removed);
  then a group of the mover's own without a liberty would be suicide, which is illegal.
- Positional superko: a move may not recreate a whole-board position (the stones, not
  who is to move) that stood earlier in the game. This covers simple ko. Passing is
  always legal (it leaves the board as it stands).
- Two passes in a row end the game; so does the cut-off ``max_moves`` (passes count;
  0 means ``2*size*size``, OpenSpiel's ``max_game_length``): the position is then scored
  as it stands.
- The score (:meth:`Go.score`) is black's area minus white's area minus ``komi``: a
  player's area is their stones plus the empty points from which only their stones can
  be reached (through empty points). The sign gives the winner; 0 is a draw.

Actions: ``a = row*size + col`` with row 0 at the BOTTOM (A1 = 0, as OpenSpiel's ``go``
and GTP) and pass = ``size*size``. People (and GTP) type vertices like ``D4`` or ``d4``:
a column letter A.. skipping I, then a row number from 1 at the bottom; ``pass``; or
``row col`` counted from 0 (row 0 at the bottom, as the action numbers).

A state is the tuple ``(player_to_move, black, white, passes, moves, zhash, seen, recent, past)``:

- ``black``, ``white``: bitboards with a guard column: point (r, c) is bit
  ``r*(size+1) + c``, and bit ``r*(size+1) + size`` is always empty, so a shift by 1
  never wraps from one row into the next (neighbours are shifts by 1 and size+1).
  Groups, liberties, captures and scoring are flood fills on these integers.
- ``passes``: the passes in a row just played (2 ends the game).
- ``moves``: the actions from the empty board (the game's "ID"), passes included.
- ``zhash``: the Zobrist hash of the board (64-bit, one random key per point and colour,
  xored in as stones arrive and leave).
- ``seen`` and ``recent``: the Zobrist hashes of the boards that stood so far, split at
  the last capture: ``recent`` (a tuple) those since it, the current one included,
  ``seen`` (a frozenset) those before it. A move can only recreate a board of ``seen``:
  since the last capture stones were only added, so the point just played was empty in
  every board of ``recent`` (and the new board holds it). The superko test is thus one
  lookup in ``seen``, and ``seen`` changes only at a capture (it then takes in
  ``recent``): the states between two captures share one frozenset, so a state costs
  little memory and a move without a capture copies no set. A state so carries
  everything its rules need: search never replays the ID.
- ``past``: the boards ``(black, white)`` of the ``history`` positions before this one,
  newest first (empty when ``history`` is 0), for the planes.

States are immutable and hashable (equal states are the same game so far).
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.game import Game, IllegalMoveError, KeptAnswers, compiled_module
from hexzero.mctsfw.schema import Parameters, Setting

MIN_SIZE, MAX_SIZE = 5, 19
#: no random numbers given to the compiled playout: it draws its own
NO_UNIFORMS = np.zeros(0, dtype=np.float64)
#: ``_legal_array`` of a final position
NO_ACTIONS = np.empty(0, dtype=np.int64)
NO_ACTIONS.flags.writeable = False


def compiled_kernels():
    """The compiled kernels (``games/go_playout``: the light playout, the legal points), or
    None without numba."""
    return compiled_module("hexzero.games.go_playout")


def playout_kernel():
    """The compiled light playout (``games/go_playout.playout``), or None without numba."""
    kernels = compiled_kernels()
    return kernels.playout if kernels else None


MARKS = {1: "X", 2: "O"}
COLOURS = {1: "black", 2: "white"}
#: GTP column letters: A to T without I
COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRST"
ZOBRIST_SEED = 20261123

GoState = tuple  # (player_to_move, black, white, passes, moves, zhash, seen, recent, past)


class Go(Game):
    name = "go"
    description = "Go: area (Tromp-Taylor) scoring, komi 7.5, positional superko, 9x9 to 19x19"

    parameters = Parameters(
        Setting("size", 9, "board side (9, 13 and 19 are the usual boards)", low=MIN_SIZE, high=MAX_SIZE),
        Setting("komi", 7.5, "points given to white for moving second (area scoring)", low=-400, high=400),
        Setting("max_moves", 0, "the cut-off: after this many moves (passes included) the position is scored "
                "as it stands; 0 means 2*size*size (as OpenSpiel's max_game_length)", low=0),
        Setting("history", 0, "T, the earlier positions in the network planes (encode_planes): the stones of "
                "each colour in the current position and the T before it, plus the colour to move, 2*(T+1)+1 "
                "planes (T = 4: the 13x13 system's 11 planes; T = 7: AlphaGo Zero's 17)", low=0, high=16),
    )

    #: SGF's game number (GM[1])
    sgf_game = 1
    #: UCT's c with random rollouts: c = 0.25 beats 1.4 at 400 search games on 9x9
    #: (benchmarks/exploration.py; the figures: docs/search.md, exploration settings)
    tree_policy_defaults = {"uct": {"c": 0.25}}
    #: a match between players that choose alike every time starts each pair of games from
    #: two random stones, one of each colour (``Game.match_opening``; never a pass)
    match_opening_moves = 2

    def __init__(
        self,
        size: int = parameters.default("size"),
        komi: float = parameters.default("komi"),
        max_moves: int = parameters.default("max_moves"),
        history: int = parameters.default("history"),
    ):
        params = {"size": size, "komi": komi, "max_moves": max_moves, "history": history}
        self.check_params(params)
        n = self.size = int(size)
        self.komi = float(komi)
        self.max_moves_setting = int(max_moves)
        self.max_moves = int(max_moves) or 2 * n * n
        self.history = int(history)
        n2 = n * n
        self.num_actions = n2 + 1
        self.pass_action = n2
        self.move_help = (
            f"a vertex like '{self.action_to_text((n // 2) * n + n // 2)}' (columns A-{COLUMN_LETTERS[n - 1]} "
            f"without I, rows 1-{n} from the bottom), 'pass', or 'row col' counted from 0 at the bottom"
        )
        w = self.width = n + 1
        self.bit = [1 << (a + a // n) for a in range(n2)]
        self.full = sum(self.bit)
        self._bit_cells = np.array([a + a // n for a in range(n2)], dtype=np.int64)
        self._action_of_index = {a + a // n: a for a in range(n2)}
        self._nbytes = (n * w + 7) // 8
        # the actions of the points of each byte of a bitboard, by the byte's value
        self._actions_of_byte = [
            [tuple(self._action_of_index[8 * i + b] for b in range(8)
                   if value >> b & 1 and 8 * i + b in self._action_of_index) for value in range(256)]
            for i in range(self._nbytes)
        ]
        # the neighbours of each point, as bits
        self.neighbours = []
        self.neighbour_mask = []
        for a in range(n2):
            r, c = divmod(a, n)
            nb = [self.bit[(r + dr) * n + c + dc] for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                  if 0 <= r + dr < n and 0 <= c + dc < n]
            self.neighbours.append(tuple(nb))
            self.neighbour_mask.append(sum(nb))
        # each neighbour's bit with its own neighbours' mask: a quick liberty test before a search
        self.neighbour_pairs = [tuple((nb, self.neighbour_mask[self._action_of_index[nb.bit_length() - 1]])
                                      for nb in self.neighbours[a]) for a in range(n2)]
        # the diagonal points of each point, and whether it lies on the edge (false eyes)
        self.diagonal_mask = []
        self.on_edge = []
        for a in range(n2):
            r, c = divmod(a, n)
            self.diagonal_mask.append(sum(self.bit[(r + dr) * n + c + dc] for dr in (-1, 1) for dc in (-1, 1)
                                          if 0 <= r + dr < n and 0 <= c + dc < n))
            self.on_edge.append(r in (0, n - 1) or c in (0, n - 1))
        # Zobrist keys by bit index: one per point and colour
        rng = random.Random(ZOBRIST_SEED)
        nbits = n * w
        self.zobrist = {1: [rng.getrandbits(64) for _ in range(nbits)], 2: [rng.getrandbits(64) for _ in range(nbits)]}
        self._tables: dict[str, np.ndarray] | None = None  # the compiled kernels' (_kernel_tables)
        self._seen_array: tuple = (None, None)  # (a state's seen set, as an array: _hashes)
        self._legal_known = KeptAnswers(1024)  # id(state) -> (state, ``_legal_array``)

    def kernels(self):
        """The compiled kernels of the array search (``games.go_kernels``; None without numba)."""
        module = compiled_module("hexzero.games.go_kernels")
        return None if module is None else module.GoKernels(self)

    def params(self) -> dict[str, Any]:
        return {"size": self.size, "komi": self.komi, "max_moves": self.max_moves_setting, "history": self.history}

    # ---- bitboard helpers -------------------------------------------------------------
    def _dilate(self, x: int) -> int:
        """The points next to ``x`` or in it."""
        w = self.width
        return (x | x << 1 | x >> 1 | x << w | x >> w) & self.full

    def _flood(self, seed: int, within: int) -> int:
        """The points of ``within`` connected to ``seed`` (which lies in ``within``)."""
        w = self.width
        g = seed
        while True:
            grown = (g | g << 1 | g >> 1 | g << w | g >> w) & within
            if grown == g:
                return g
            g = grown

    def _dead_group(self, seed: int, stones: int, empty: int) -> int:
        """The group of ``stones`` at ``seed`` if it has no liberty in ``empty``, else 0
        (the search stops at the first liberty it finds)."""
        w = self.width
        g = seed
        while True:
            grown = g | g << 1 | g >> 1 | g << w | g >> w
            if grown & empty:
                return 0
            grown &= stones
            if grown == g:
                return g
            g = grown

    def _hash_of(self, stones: int, colour: int) -> int:
        keys = self.zobrist[colour]
        h = 0
        while stones:
            low = stones & -stones
            h ^= keys[low.bit_length() - 1]
            stones ^= low
        return h

    def _bits_to_actions(self, stones: int) -> list[int]:
        """The actions of the points of a bitboard, in order (a table lookup a byte)."""
        return [a for table, byte in zip(self._actions_of_byte, stones.to_bytes(self._nbytes, "little"))
                for a in table[byte]]

    # ---- the rules --------------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> GoState:
        if starting_player not in (1, 2):
            raise ValueError(f"starting_player is 1 or 2, not {starting_player!r}")
        return (starting_player, 0, 0, 0, (), 0, frozenset(), (0,), ())

    def current_player(self, state: GoState) -> int:
        return state[0]

    def is_final(self, state: GoState) -> bool:
        return state[3] >= 2 or len(state[4]) >= self.max_moves

    def _play(self, state: GoState, action: int) -> tuple[int, int, int, int] | str:
        """The board ``(black, white, zhash, captured stones)`` after the mover puts a stone
        on ``action``, or the reason it is illegal (occupied, suicide, superko)."""
        player, black, white, _, _, h, seen, *_ = state
        b = self.bit[action]
        if (black | white) & b:
            return f"{self.action_to_text(action)} is already occupied"
        own, opp = (black, white) if player == 1 else (white, black)
        own |= b
        h ^= self.zobrist[player][b.bit_length() - 1]
        empty = self.full & ~(own | opp)
        captured = 0
        for nb in self.neighbours[action]:
            if opp & nb and not captured & nb:
                captured |= self._dead_group(nb, opp, empty)
        if captured:
            opp &= ~captured
            h ^= self._hash_of(captured, 3 - player)
        elif not self.neighbour_mask[action] & empty and self._dead_group(b, own, empty):
            return f"{self.action_to_text(action)} is suicide: the stone's group would have no liberty"
        if h in seen:
            return (f"{self.action_to_text(action)} would repeat an earlier whole-board position "
                    f"(ko, positional superko)")
        return (own, opp, h, captured) if player == 1 else (opp, own, h, captured)

    def check_legal(self, state: GoState, action: int) -> None:
        if self.is_final(state):
            raise IllegalMoveError(f"the game is over ({self._end_reason(state)})")
        if isinstance(action, bool) or not (isinstance(action, (int, np.integer)) and 0 <= action < self.num_actions):
            raise IllegalMoveError(
                f"action {action!r} is off the {self.size}x{self.size} board: actions are 0 to "
                f"{self.num_actions - 1} ({self.pass_action} is pass)"
            )
        if action == self.pass_action:
            return
        result = self._play(state, int(action))
        if isinstance(result, str):
            raise IllegalMoveError(result)

    def next_state(self, state: GoState, action: int) -> GoState:
        if self.is_final(state):
            raise IllegalMoveError(f"the game is over ({self._end_reason(state)})")
        if isinstance(action, bool) or not (isinstance(action, (int, np.integer)) and 0 <= action < self.num_actions):
            self.check_legal(state, action)  # raises with the reason
        action = int(action)
        player, black, white, passes, moves, h, seen, recent, past = state
        if self.history:
            past = ((black, white),) + past[: self.history - 1]
        if action == self.pass_action:
            return (3 - player, black, white, passes + 1, moves + (action,), h, seen, recent, past)
        result = self._play(state, action)
        if isinstance(result, str):
            raise IllegalMoveError(result)
        black, white, h, captured = result
        if captured:  # the boards since the last capture join those that may come back
            return (3 - player, black, white, 0, moves + (action,), h, seen.union(recent), (h,), past)
        return (3 - player, black, white, 0, moves + (action,), h, seen, recent + (h,), past)

    def legal_actions(self, state: GoState) -> list[int]:
        """The empty points where a stone is legal (no suicide, no repeated board), then
        pass: found by the compiled kernel (``go_playout.legal_points``) on the padded
        board, by ``legal_actions_reference`` where numba is missing (the same moves: the
        tests compare them)."""
        known = self._legal_array(state)
        return self.legal_actions_reference(state) if known is None else known.tolist()

    def legal_mask(self, state: GoState) -> np.ndarray:
        """``Game.legal_mask`` from the kernel's array of legal moves (no list made)."""
        known = self._legal_array(state)
        if known is None:
            return super().legal_mask(state)
        mask = np.zeros(self.num_actions, dtype=np.float32)
        mask[known] = 1.0
        return mask

    def _legal_array(self, state: GoState) -> np.ndarray | None:
        """``legal_actions`` as the compiled kernel writes them (an int64 array, read-only);
        None where numba is missing. Kept by the state object itself (``KeptAnswers``): a
        search asks twice a leaf, for the priors' mask and then for its moves."""
        known = self._legal_known.get(id(state))  # (kept only where the kernels are)
        if known is not None and known[0] is state:
            return known[1]
        kernels = compiled_kernels()
        if kernels is None:
            return None
        if self.is_final(state):
            return NO_ACTIONS
        player, black, white, _, _, h, seen, *_ = state
        tables = self._kernel_tables()
        actions = np.empty(self.pass_action + 1, dtype=np.int64)
        count = kernels.legal_points(tables["board"], self._words(black, white), self._bit_cells, self.size,
                                     int(player), np.uint64(h), self._hashes(seen), tables["keys"], tables["point_of"],
                                     actions)
        actions[count] = self.pass_action
        legal = actions[:count + 1]
        legal.flags.writeable = False
        self._legal_known.keep(id(state), (state, legal))  # the state held: its id stays its own
        return legal

    def _hashes(self, seen: frozenset) -> np.ndarray:
        """``seen`` as an array for the kernels, kept while the states share that set (from
        one capture to the next)."""
        if self._seen_array[0] is not seen:
            self._seen_array = (seen, np.fromiter(seen, dtype=np.uint64, count=len(seen)))
        return self._seen_array[1]

    def _padded_board(self, black: int, white: int) -> np.ndarray:
        """The kernels' padded board (``_kernel_tables``) of these stones, put on their
        padded points by the compiled ``go_playout.padded_board`` from the bitboards' 64-bit words."""
        tables = self._kernel_tables()
        return compiled_kernels().padded_board(tables["board"], self._words(black, white), self._bit_cells,
                                               tables["point_of"])

    def _words(self, black: int, white: int) -> np.ndarray:
        """The two bitboards as the kernels read them: black's 64-bit words, then white's."""
        nbytes = -(-self._nbytes // 8) * 8
        return np.frombuffer(black.to_bytes(nbytes, "little") + white.to_bytes(nbytes, "little"), dtype=np.uint64)

    def legal_actions_reference(self, state: GoState) -> list[int]:
        """``legal_actions`` on the bitboards in Python: the liberties of every group, then
        each empty point (away from captures, all at once on the bitboards)."""
        if self.is_final(state):
            return []
        player, black, white, _, _, h, seen, *_ = state
        own, opp = (black, white) if player == 1 else (white, black)
        empty = self.full & ~(own | opp)
        # liberties of every group: opponent groups in atari (their one liberty captures)
        # and own groups with two or more liberties (joining them is never suicide)
        atari_points = 0
        safe_own = 0  # own stones in groups with >= 2 liberties
        remaining = opp
        while remaining:
            g = self._flood(remaining & -remaining, opp)
            remaining &= ~g
            libs = self._dilate(g) & empty
            if libs & (libs - 1) == 0:
                atari_points |= libs
        remaining = own
        while remaining:
            g = self._flood(remaining & -remaining, own)
            remaining &= ~g
            libs = self._dilate(g) & empty
            if libs & (libs - 1):
                safe_own |= g
        # away from the captures: a stone needs an empty neighbour or a neighbouring own group
        # with another liberty (else suicide), found for every point at once on the bitboards
        w = self.width
        reach = empty | safe_own
        quiet = empty & ~atari_points & (reach << 1 | reach >> 1 | reach << w | reach >> w)
        out = self._bits_to_actions(quiet)
        if seen:  # no capture there: the board after it is the current one and the stone
            keys, n = self.zobrist[player], self.size
            out = [a for a in out if h ^ keys[a + a // n] not in seen]
        if atari_points:  # a capture: played out (the captured stones decide suicide and ko)
            out = sorted(out + [a for a in self._bits_to_actions(atari_points)
                                if not isinstance(self._play(state, a), str)])
        out.append(self.pass_action)
        return out

    # ---- scoring ------------------------------------------------------------------------
    def areas(self, state: GoState) -> tuple[int, int]:
        """(black's area, white's area): stones plus the empty points that reach only that colour."""
        return self._areas(state[1], state[2])

    def _territories(self, black: int, white: int) -> tuple[int, int]:
        """(black's, white's) empty points: those that reach only that colour's stones."""
        empty = self.full & ~(black | white)
        reach_b = self._flood(self._dilate(black) & empty, empty) if black else 0
        reach_w = self._flood(self._dilate(white) & empty, empty) if white else 0
        return reach_b & ~reach_w, reach_w & ~reach_b

    def _areas(self, black: int, white: int) -> tuple[int, int]:
        own_b, own_w = self._territories(black, white)
        return black.bit_count() + own_b.bit_count(), white.bit_count() + own_w.bit_count()

    def ownership(self, state: GoState) -> np.ndarray:
        """Each point's owner as the area count sees the position: +1 black's (a stone, or
        an empty point that reaches black's stones only), -1 white's, 0 neither (dame)."""
        black, white = state[1], state[2]
        own_b, own_w = self._territories(black, white)
        return self._cells(black | own_b).astype(np.float32) - self._cells(white | own_w).astype(np.float32)

    def score(self, state: GoState) -> float:
        """Black's area minus white's area minus komi, for the position as it stands."""
        b, w = self.areas(state)
        return b - w - self.komi

    def winner(self, state: GoState) -> int | None:
        if not self.is_final(state):
            return None
        s = self.score(state)
        return 1 if s > 0 else 2 if s < 0 else None

    def _end_reason(self, state: GoState) -> str:
        if state[3] >= 2:
            return "both players passed"
        return f"the cut-off of {self.max_moves} moves"

    def search_actions(self, state: GoState) -> list[int]:
        """The legal moves less pass, unless the opponent has just passed or every other
        legal move fills one of the mover's own eyes: a search (and so a searching player)
        passes only then. An uninformed value head makes every move look alike, and PUCT
        would pour the visits into pass, the move of highest prior, teaching self-play to
        pass while the opponent fills the board."""
        return self._search_moves(state, self.legal_actions(state))

    def search_array(self, state: GoState) -> np.ndarray:
        """``search_actions`` from the kernel's array itself (no list made) where numba is."""
        known = self._legal_array(state)
        return super().search_array(state) if known is None else self._search_moves(state, known)

    def _search_moves(self, state: GoState, actions):
        """``search_actions``' rule on the legal moves (a list, or the kernel's array)."""
        if not len(actions) or state[3]:
            return actions
        own, opp = (state[1], state[2]) if state[0] == 1 else (state[2], state[1])
        moves = actions[:-1]  # pass is last
        if any(not self._is_eye(own, opp, a) for a in moves):
            return moves
        return actions

    # ---- playouts ---------------------------------------------------------------------
    def is_own_eye(self, state: GoState, action: int, player: int | None = None) -> bool:
        """Whether the empty point ``action`` is a single-point eye of ``player`` (the
        player to move by default), as light playouts judge it: every neighbour is the
        player's stone, and of the diagonal points at most one holds an opponent stone
        in the middle of the board, none on the edge (otherwise it is a false eye)."""
        player = state[0] if player is None else player
        own, opp = (state[1], state[2]) if player == 1 else (state[2], state[1])
        return self._is_eye(own, opp, action)

    def _is_eye(self, own: int, opp: int, action: int) -> bool:
        if (own | opp) & self.bit[action] or self.neighbour_mask[action] & ~own:
            return False
        bad = (self.diagonal_mask[action] & opp).bit_count()
        return bad == 0 if self.on_edge[action] else bad <= 1

    def playout(
        self, state: GoState, rng: random.Random, choose: Callable[[GoState], int] | None = None
    ) -> int | None:
        """The winner of a light random playout from ``state`` (:meth:`random_moves`)."""
        if choose is not None:
            return super().playout(state, rng, choose)
        return self.random_moves(state, rng)[1]

    def playout_played(self, state: GoState, rng: random.Random,
                       choose: Callable[[GoState], int] | None = None) -> tuple[int | None, tuple[list, list]]:
        """The light random playout and the moves each player made in it (for RAVE): the
        player to move made every other move, from the first."""
        if choose is not None:
            return super().playout_played(state, rng, choose)
        moves, winner = self.random_moves(state, rng)
        mine, theirs = moves[0::2], moves[1::2]
        return winner, ((mine, theirs) if state[0] == 1 else (theirs, mine))

    def random_moves(self, state: GoState, rng: random.Random) -> tuple[list[int], int | None]:
        """A light random playout (:meth:`random_moves_reference`'s rules), played by the
        compiled kernel (``games/go_playout.py``) with its own random numbers drawn from a
        seed that ``rng`` gives; by the reference where numba is missing."""
        if playout_kernel() is None:
            return self.random_moves_reference(state, rng)
        return self.random_moves_compiled(state, np.uint64(rng.getrandbits(64)))

    def random_moves_compiled(self, state: GoState, seed: np.uint64,
                              uniforms: np.ndarray | None = None) -> tuple[list[int], int | None]:
        """The compiled playout from ``state``: with ``uniforms`` (random numbers in [0, 1))
        exactly the moves :meth:`random_moves_reference` plays when its ``rng.random()``
        gives them in turn (the tests compare the two), then numbers of its own from ``seed``."""
        player, black, white, passes, moves, h, seen, recent, _ = state
        if self.is_final(state):
            return [], self.winner(state)
        kernel = playout_kernel()
        tables = self._kernel_tables()
        board = self._padded_board(black, white)
        point_of = tables["point_of"]
        empties = np.empty(self.size * self.size, dtype=np.int64)
        free = self._bits_to_actions(self.full & ~(black | white))
        empties[:len(free)] = free
        boards = np.fromiter((*seen, *recent), dtype=np.uint64, count=len(seen) + len(recent))
        left = self.max_moves - len(moves)
        out = np.empty(max(left, 0), dtype=np.int64)
        played, winner = kernel(board, self.size, int(player), passes, left, np.uint64(h), boards, self.komi,
                                tables["keys"], point_of, tables["action_of"], empties, len(free),
                                NO_UNIFORMS if uniforms is None else uniforms, seed, out)
        return out[:played].tolist(), int(winner) or None

    def _kernel_tables(self) -> dict[str, np.ndarray]:
        """The compiled playout's view of the board: the padded points of the actions and
        back, the empty padded board (its border marked) and the Zobrist keys by padded point."""
        if self._tables is None:
            n, stride = self.size, self.size + 2
            point_of = np.array([(a // n + 1) * stride + a % n + 1 for a in range(n * n)], dtype=np.int64)
            action_of = np.full(stride * stride, -1, dtype=np.int64)
            action_of[point_of] = np.arange(n * n)
            board = np.full(stride * stride, 3, dtype=np.int8)
            board[point_of] = 0
            keys = np.zeros((3, stride * stride), dtype=np.uint64)
            for colour in (1, 2):
                keys[colour, point_of] = [self.zobrist[colour][a + a // n] for a in range(n * n)]
            self._tables = {"point_of": point_of, "action_of": action_of, "board": board, "keys": keys}
        return self._tables

    def random_moves_reference(self, state: GoState, rng: random.Random) -> tuple[list[int], int | None]:
        """A light random playout: each move a uniformly random legal point that does not
        fill the mover's own single-point eye (:meth:`is_own_eye`), a pass when there is
        none; two passes in a row or the cut-off end it. Returns (the moves, the winner
        of the final position).

        The same rules as ``next_state`` on bare integers: the empty points in a list
        (a tried point is swapped behind the ones left to try, so each pick is uniform
        among the untried), captures and suicide by liberty searches that stop at the
        first liberty found, superko by the Zobrist hash in the state's ``seen``, its
        ``recent`` and the boards of this playout (a superset of the boards that can come
        back: a simpler test that gives the same answers)."""
        player, black, white, passes, moves, h, seen, recent, _ = state
        played: list[int] = []
        if self.is_final(state):
            return played, self.winner(state)
        own, opp = (black, white) if player == 1 else (white, black)
        left = self.max_moves - len(moves)
        pass_action, bit, full, w = self.pass_action, self.bit, self.full, self.width
        nmask, diag, edge, pairs = self.neighbour_mask, self.diagonal_mask, self.on_edge, self.neighbour_pairs
        keys_own, keys_opp = self.zobrist[player], self.zobrist[3 - player]
        of = self._action_of_index
        seen = set(seen)  # this playout's own copy: its boards join the game's
        seen.update(recent)
        empty = full & ~(own | opp)
        empties = self._bits_to_actions(empty)
        random_ = rng.random
        while left > 0 and passes < 2:
            left -= 1
            untried = len(empties)
            chosen = -1
            while untried:
                i = int(random_() * untried)
                a = empties[i]
                untried -= 1
                empties[i], empties[untried] = empties[untried], a  # tried: behind the untried ones
                nm = nmask[a]
                if not nm & ~own:  # every neighbour is the mover's: an eye unless a false one
                    bad = (diag[a] & opp).bit_count()
                    if bad == 0 or (bad == 1 and not edge[a]):
                        continue
                b = bit[a]
                after = empty ^ b
                captured = 0
                if nm & opp:
                    for nb, nb_mask in pairs[a]:
                        if nb & opp and not nb & captured and not nb_mask & after:
                            # the liberty search of the opponent group at nb, stopping at a liberty
                            g = nb
                            while True:
                                d = g | g << 1 | g >> 1 | g << w | g >> w
                                if d & after:
                                    break
                                d &= opp
                                if d == g:
                                    captured |= g
                                    break
                                g = d
                if not captured and not nm & after:
                    # no liberty next to it, none taken: a friendly neighbour with a liberty
                    # next to it, or the search for a liberty of its group
                    alive = False
                    for nb, nb_mask in pairs[a]:
                        if nb & own and nb_mask & after:
                            alive = True
                            break
                    if not alive:
                        own_b, g = own | b, b
                        while True:
                            d = g | g << 1 | g >> 1 | g << w | g >> w
                            if d & after:
                                alive = True
                                break
                            d &= own_b
                            if d == g:
                                break
                            g = d
                        if not alive:
                            continue  # suicide
                nh = h ^ keys_own[b.bit_length() - 1]
                if captured:
                    c = captured
                    while c:
                        low = c & -c
                        nh ^= keys_opp[low.bit_length() - 1]
                        c ^= low
                if nh in seen:
                    continue  # positional superko
                chosen = a
                break
            if chosen < 0:
                played.append(pass_action)
                passes += 1
            else:
                played.append(chosen)
                passes = 0
                h = nh
                seen.add(nh)
                own |= b
                empties[untried] = empties[-1]  # where the chosen point lies after its swap
                empties.pop()
                if captured:
                    opp &= ~captured
                    c = captured
                    while c:
                        low = c & -c
                        empties.append(of[low.bit_length() - 1])
                        c ^= low
                    after |= captured
                empty = after
            own, opp = opp, own
            keys_own, keys_opp = keys_opp, keys_own
        if len(played) % 2:
            player = 3 - player
        black, white = (own, opp) if player == 1 else (opp, own)
        b_area, w_area = self._areas(black, white)
        score = b_area - w_area - self.komi
        return played, (1 if score > 0 else 2 if score < 0 else None)

    # ---- networks ---------------------------------------------------------------------
    def _cells(self, stones: int) -> np.ndarray:
        """The points of a bitboard as 0/1 uint8 in action order (row 0 at the bottom)."""
        bits = np.unpackbits(np.frombuffer(stones.to_bytes(self._nbytes, "little"), dtype=np.uint8), bitorder="little")
        return bits[self._bit_cells]

    def board(self, state: GoState) -> np.ndarray:
        """The points as an int8 array (size, size): 0 empty, 1 black, 2 white; ``[r, c]``
        is the point of action ``r*size + c`` (row 0 at the bottom)."""
        return (self._cells(state[1]) + 2 * self._cells(state[2])).astype(np.int8).reshape(self.size, self.size)

    def encode(self, state: GoState) -> np.ndarray:
        """Black's stones (size*size, action order), white's, then two bits for who moves
        (black, white): 2*size*size + 2 values."""
        n2 = self.pass_action
        out = np.zeros(2 * n2 + 2, dtype=np.float32)
        out[:n2] = self._cells(state[1])
        out[n2 : 2 * n2] = self._cells(state[2])
        out[2 * n2 + state[0] - 1] = 1.0
        return out

    @property
    def num_planes(self) -> int:
        return 2 * (self.history + 1) + 1

    def encode_planes(self, state: GoState) -> np.ndarray:
        """AlphaGo Zero's planes, (size, size, 2*(T+1) + 1) with T = ``history``:
        planes 0..T are X_t, X_{t-1}, .., X_{t-T}: the stones of the player to move now,
        in the current position and the T before it (newest first); planes T+1..2T+1 are
        Y_t..Y_{t-T}: the opponent's stones likewise; the last plane C is all ones when
        black is to move, zeros when white is. Positions before the start are empty.
        ``[r, c]`` is the point of action ``r*size + c`` (row 0 at the bottom)."""
        n, t = self.size, self.history
        player, black, white, *_, past = state
        boards = ((black, white),) + past[:t]
        own = [b if player == 1 else w for b, w in boards]
        opp = [w if player == 1 else b for b, w in boards]
        nbytes = self._nbytes
        data = b"".join(x.to_bytes(nbytes, "little") for x in own + opp)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little").reshape(-1, 8 * nbytes)
        cells = bits[:, self._bit_cells].reshape(-1, n, n)  # (boards, row, col): own ones, then opponent's
        planes = np.zeros((n, n, 2 * (t + 1) + 1), dtype=np.float32)
        k = len(boards)
        planes[:, :, :k] = cells[:k].transpose(1, 2, 0)
        planes[:, :, t + 1 : t + 1 + k] = cells[k:].transpose(1, 2, 0)
        if player == 1:
            planes[:, :, -1] = 1.0
        return planes

    def symmetries(self, x: np.ndarray, target: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The 8 symmetries of the square (4 turns, each with and without a mirror), the
        identity first, applied to the board planes of ``x`` and to the points of the
        target alike; the pass entry of the target (and the to-move bits) stay fixed."""
        n, n2 = self.size, self.pass_action
        target = np.asarray(target)
        grid_target, pass_entry = target[:n2].reshape(n, n), target[n2:]
        if x.ndim == 3:
            boards, tail = x, None
        else:  # flat: two boards, then the to-move bits
            boards, tail = x[: 2 * n2].reshape(2, n, n).transpose(1, 2, 0), x[2 * n2 :]
        cases = []
        for mirror in (False, True):
            b, t = (boards[:, ::-1], grid_target[:, ::-1]) if mirror else (boards, grid_target)
            for turns in range(4):
                bb = np.rot90(b, turns, axes=(0, 1))
                tt = np.concatenate([np.rot90(t, turns).reshape(n2), pass_entry])
                if tail is None:
                    xx = np.ascontiguousarray(bb)
                else:
                    xx = np.concatenate([bb.transpose(2, 0, 1).reshape(-1), tail])
                cases.append((xx, tt))
        cases[0] = (x, target)
        return cases

    # ---- people -----------------------------------------------------------------------
    def grid_cell(self, action: int) -> tuple[int, int] | None:
        """(row counted from the top, column) of a point; None for pass (SGF and boards)."""
        if action == self.pass_action:
            return None
        r, c = divmod(int(action), self.size)
        return self.size - 1 - r, c

    def grid_action(self, row_from_top: int, col: int) -> int:
        n = self.size
        if not (0 <= row_from_top < n and 0 <= col < n):
            raise IllegalMoveError(f"({row_from_top}, {col}) is off the {n}x{n} board")
        return (n - 1 - row_from_top) * n + col

    def action_to_text(self, action: int, state: GoState | None = None) -> str:
        """The GTP vertex: ``D4`` (column letters skip I, rows from 1 at the bottom) or ``pass``."""
        if action == self.pass_action:
            return "pass"
        r, c = divmod(int(action), self.size)
        return f"{COLUMN_LETTERS[c]}{r + 1}"

    def text_to_action(self, text: str) -> int:
        """The action of a vertex ``D4``/``d4``, ``pass`` or ``row col`` (no legality test);
        IllegalMoveError saying why for unreadable text or a point off the board."""
        n = self.size
        raw = text
        text = text.strip().lower()
        if text == "pass":
            return self.pass_action
        letter = re.fullmatch(r"([a-z])\s*(-?\d+)", text)
        numbers = re.fullmatch(r"(-?\d+)[\s,]+(-?\d+)", text)
        if letter:
            if letter.group(1) == "i":
                raise IllegalMoveError(f"{raw.strip()!r}: Go columns skip the letter I (H is followed by J)")
            col = COLUMN_LETTERS.lower().find(letter.group(1))
            r, c = int(letter.group(2)) - 1, col if col >= 0 else n
        elif numbers:
            r, c = int(numbers.group(1)), int(numbers.group(2))
        else:
            raise IllegalMoveError(f"cannot read {raw.strip()!r}: type {self.move_help}")
        if not (0 <= r < n and 0 <= c < n):
            raise IllegalMoveError(f"{raw.strip()!r} is off the {n}x{n} board: type {self.move_help}")
        return r * n + c

    def parse_action(self, text: str, state: GoState) -> int:
        action = self.text_to_action(text)
        self.check_legal(state, action)
        return action

    def render(self, state: GoState) -> str:
        """The board with row 1 at the bottom: X black, O white, '.' empty ('+' on the
        star points); the last stone in parentheses; column letters (skipping I) above
        and below, row numbers on both sides; then who moves, or the result."""
        n = self.size
        player, _, _, passes, moves = state[:5]
        cells = self.board(state)
        last = moves[-1] if moves and moves[-1] != self.pass_action else None
        stars = self._star_points()
        letters = "    " + "".join(f" {COLUMN_LETTERS[c]} " for c in range(n))
        rows = [letters]
        for r in range(n - 1, -1, -1):
            text = []
            for c in range(n):
                a = r * n + c
                mark = ".XO"[cells[r, c]]
                if mark == "." and a in stars:
                    mark = "+"
                text.append(f"({mark})" if a == last else f" {mark} ")
            rows.append(f"{r + 1:>3} " + "".join(text) + f" {r + 1}")
        rows.append(letters)
        b, w = self.areas(state)
        score = b - w - self.komi
        lead = f"black {b}, white {w} + komi {self.komi:g}: " + (
            f"B+{score:g}" if score > 0 else f"W+{-score:g}" if score < 0 else "a draw")
        if self.is_final(state):
            rows.append(f"game over ({self._end_reason(state)}): {lead}")
        else:
            note = f"; player {3 - player} passed" if passes else ""
            rows.append(f"player {player} ({MARKS[player]}, {COLOURS[player]}) to move, move {len(moves) + 1}"
                        f"{note}; area now {lead}")
        return "\n".join(rows)

    def _star_points(self) -> set[int]:
        n = self.size
        if n < 7:
            return set()
        k = 2 if n < 13 else 3
        lines = [k, n - 1 - k] + ([n // 2] if n % 2 else [])
        return {r * n + c for r in lines for c in lines}


@mctsfw.hookimpl
def mctsfw_register_games():
    return [Go]


@mctsfw.hookimpl
def mctsfw_board_svg(game, state, last_action, heat):
    """Go on its grid as ``render`` shows it: row 1 at the bottom, columns A to T without I,
    star points; black is player 1. A pass has no place on the board (the page offers it)."""
    if not isinstance(game, Go):
        return None
    from hexzero.mctsfw import svg

    n, cells = game.size, game.board(state)
    stones = {r * n + c: int(cells[r, c]) for r in range(n) for c in range(n) if cells[r, c]}
    last = None if last_action == game.pass_action else last_action
    return svg.grid_board(n, stones, game.grid_action, column_names=COLUMN_LETTERS[:n],
                          row_names=[str(n - i) for i in range(n)], last_action=last, heat=heat,
                          stars=game._star_points(), title=f"Go {n}x{n}")
