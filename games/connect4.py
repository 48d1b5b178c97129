"""Connect Four: drop stones into columns; four in a row (any direction) wins.

The board has ``rows`` x ``columns`` cells (6 x 7 by default); an action is a column
``0 .. columns-1`` and the stone falls to the lowest empty cell of that column. Four in
a row horizontally, vertically or diagonally wins; a full board without a line is a
draw (final, winner None). Player 1 moves first unless ``initial_state`` says otherwise.

A state is the tuple ``(player_to_move, stones_of_1, stones_of_2, winner)`` with winner 0
while the game runs and for a draw. The stones are bitboards in the classic layout of
``rows + 1`` bits per column: cell (row r, column c) is bit ``c*(rows+1) + r`` with row 0
the BOTTOM row, and the extra bit on top of each column is always empty, so that lines
shifted by 1 (vertical), rows+1 (horizontal), rows+2 (diagonal /) and rows (diagonal \\)
never wrap from one column into the next. A column's lowest empty cell is
``(occupied + bottom) & column``, and it is full when its top cell is taken, so no
heights need storing. A win is found by the shift-and test on the mover's stones just
after their move: the position before had no line, so any line found holds that stone.
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.game import Forcing, Game, IllegalMoveError, compiled_module, stone_planes_of_encoded
from hexzero.mctsfw.schema import Parameters, Setting

MIN_SIZE, MAX_SIZE = 4, 16
LINE = 4  # stones in a row that win

Connect4State = tuple  # (player_to_move, stones_of_1, stones_of_2, winner)
MARKS = {1: "X", 2: "O"}


def has_line(stones: int, height: int) -> bool:
    """Whether the bitboard ``stones`` (``height`` = rows + 1 bits a column) holds four in a row."""
    for shift in (1, height, height + 1, height - 1):
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


class ConnectFour(Game):
    name = "connect4"
    description = "Connect Four: drop stones into columns, four in a row wins (6 rows x 7 columns by default)"

    parameters = Parameters(
        Setting("rows", 6, "board rows (standard Connect Four: 6 rows, 7 columns, four in a row wins)",
                low=MIN_SIZE, high=MAX_SIZE),
        Setting("columns", 7, "board columns", low=MIN_SIZE, high=MAX_SIZE),
    )

    def __init__(self, rows: int = parameters.default("rows"), columns: int = parameters.default("columns")):
        problems = self.param_problems({"rows": rows, "columns": columns})
        if problems:
            raise ValueError("; ".join(problems))
        self.rows, self.columns = int(rows), int(columns)
        self.num_actions = self.columns
        self.move_help = f"a column number from 1 to {self.columns}, like '4'"
        h = self.height = self.rows + 1
        self.bottom = [1 << (c * h) for c in range(self.columns)]
        self.top = [1 << (c * h + self.rows - 1) for c in range(self.columns)]
        self.column_mask = [((1 << self.rows) - 1) << (c * h) for c in range(self.columns)]
        self.full = sum(self.column_mask)
        self.top_row = sum(self.top)
        self.bottom_row = sum(self.bottom)
        # the bit of each cell in row-major order (row 0 = bottom), as encode lays the cells out
        self._cell_bits = np.array([r + c * h for r in range(self.rows) for c in range(self.columns)], dtype=np.int64)

    def params(self) -> dict[str, Any]:
        return {"rows": self.rows, "columns": self.columns}

    def kernels(self):
        """The compiled kernels of the array search (``games.connect4_kernels``; None without numba)."""
        module = compiled_module("hexzero.games.connect4_kernels")
        return None if module is None else module.ConnectFourKernels(self)

    # ---- the rules --------------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> Connect4State:
        if starting_player not in (1, 2):
            raise ValueError(f"starting_player is 1 or 2, not {starting_player!r}")
        return (starting_player, 0, 0, 0)

    def current_player(self, state: Connect4State) -> int:
        return state[0]

    def legal_actions(self, state: Connect4State) -> list[int]:
        _, ones, twos, winner = state
        if winner:
            return []
        occupied = ones | twos
        return [c for c, top in enumerate(self.top) if not occupied & top]

    def check_legal(self, state: Connect4State, action: int) -> None:
        player, ones, twos, winner = state
        if winner:
            raise IllegalMoveError(f"the game is over: player {winner} has won")
        occupied = ones | twos
        if occupied == self.full:
            raise IllegalMoveError("the game is over: the board is full (a draw)")
        if isinstance(action, bool) or not (isinstance(action, (int, np.integer)) and 0 <= action < self.columns):
            raise IllegalMoveError(f"action {action!r} is not a column: columns are 0 to {self.columns - 1}")
        if occupied & self.top[action]:
            raise IllegalMoveError(f"column {int(action) + 1} is full")

    def next_state(self, state: Connect4State, action: int) -> Connect4State:
        self.check_legal(state, action)
        player, ones, twos, _ = state
        action = int(action)
        stone = ((ones | twos) + self.bottom[action]) & self.column_mask[action]
        if player == 1:
            ones |= stone
            won = has_line(ones, self.height)
        else:
            twos |= stone
            won = has_line(twos, self.height)
        return (3 - player, ones, twos, player if won else 0)

    def is_final(self, state: Connect4State) -> bool:
        return bool(state[3]) or (state[1] | state[2]) == self.full

    def winner(self, state: Connect4State) -> int | None:
        return state[3] or None

    # ---- threats ----------------------------------------------------------------------
    def completing_cells(self, own: int, occupied: int) -> int:
        """The empty cells (playable now or not) where one more stone of ``own`` makes four
        in a row: three stones below it, or three of a line of four on either side of it."""
        h = self.height
        found = (own << 1) & (own << 2) & (own << 3)  # vertical: three below
        for d in (h, h + 1, h - 1):  # across, and the two diagonals
            pair = (own << d) & (own << 2 * d)
            found |= pair & (own << 3 * d)
            found |= pair & (own >> d)
            pair = (own >> d) & (own >> 2 * d)
            found |= pair & (own << d)
            found |= pair & (own >> 3 * d)
        return found & self.full & ~occupied

    def forcing_actions(self, state: Connect4State) -> Forcing | None:
        """The columns where the player to move makes four now; else those where the
        opponent would (each must be taken); else None."""
        player, ones, twos, _ = state
        occupied = ones | twos
        if occupied.bit_count() < 5:
            return None  # nobody has three stones yet
        own, other = (ones, twos) if player == 1 else (twos, ones)
        playable = (occupied + self.bottom_row) & self.full
        for stones, wins in ((own, True), (other, False)):
            cells = self.completing_cells(stones, occupied) & playable
            if cells:
                return Forcing(tuple(c for c, column in enumerate(self.column_mask) if cells & column), wins)
        return None

    def playout(
        self, state: Connect4State, rng: random.Random, choose: Callable[[Connect4State], int] | None = None
    ) -> int | None:
        """Random moves on bare integers (no state tuples) until a line or a full board."""
        player, ones, twos, winner = state
        if winner:
            return winner
        if choose is not None:
            while not self.is_final(state):
                state = self.next_state(state, choose(state))
            return self.winner(state)
        # shifts of the four directions: vertical 1, horizontal h, diagonals h+1 and h-1
        h = self.height
        d1, d2, d3 = h, h + 1, h - 1
        e1, e2, e3 = 2 * d1, 2 * d2, 2 * d3
        occupied = ones | twos
        top = self.top
        free = [0] * self.columns  # the lowest empty cell of each open column
        open_columns = []
        for c in range(self.columns):
            if not occupied & top[c]:
                free[c] = (occupied + self.bottom[c]) & self.column_mask[c]
                open_columns.append(c)
        top_row = self.top_row
        random_ = rng.random
        own, other = (ones, twos) if player == 1 else (twos, ones)
        while open_columns:
            k = int(random_() * len(open_columns))
            c = open_columns[k]
            stone = free[c]
            own |= stone
            if stone & top_row:  # the column is now full
                open_columns[k] = open_columns[-1]
                open_columns.pop()
            else:
                free[c] = stone << 1
            # the shift-and test, unrolled: it is most of a playout's time
            pairs = own & (own >> 1)
            if pairs & (pairs >> 2):
                return player
            pairs = own & (own >> d1)
            if pairs & (pairs >> e1):
                return player
            pairs = own & (own >> d2)
            if pairs & (pairs >> e2):
                return player
            pairs = own & (own >> d3)
            if pairs & (pairs >> e3):
                return player
            own, other = other, own
            player = 3 - player
        return None

    # ---- networks -------------------------------------------------------------------
    def board(self, state: Connect4State) -> np.ndarray:
        """The cells as an int8 array (rows, columns): 0 empty, 1 or 2; row 0 is the bottom."""
        ones = self._bits(state[1])
        twos = self._bits(state[2])
        return (ones + 2 * twos).astype(np.int8).reshape(self.rows, self.columns)

    def _bits(self, stones: int) -> np.ndarray:
        """The cells of a bitboard as 0/1 uint8 in row-major order (row 0 = bottom)."""
        nbytes = (self.columns * self.height + 7) // 8
        bits = np.unpackbits(np.frombuffer(stones.to_bytes(nbytes, "little"), dtype=np.uint8), bitorder="little")
        return bits[self._cell_bits]

    def encode(self, state: Connect4State) -> np.ndarray:
        """Player 1's stones (rows*columns), player 2's, then two bits for who moves (1, 2).

        The cells are row-major with row 0 the BOTTOM row: cell (r, c) is at ``r*columns + c``.
        """
        n = self.rows * self.columns
        out = np.zeros(2 * n + 2, dtype=np.float32)
        out[:n] = self._bits(state[1])
        out[n : 2 * n] = self._bits(state[2])
        out[2 * n + state[0] - 1] = 1.0
        return out

    def planes_of_encoded(self, x: np.ndarray) -> np.ndarray:
        """``encode_planes`` of a batch of flat encodings: planes (rows, columns, 4), player
        1's stones, player 2's, then all-ones for who moves (1, 2); row 0 is the BOTTOM row,
        as in ``encode``."""
        return stone_planes_of_encoded(x, self.rows, self.columns)

    def symmetries(self, x: np.ndarray, target: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The identity and the left-right mirror: column c becomes columns-1-c."""
        if x.ndim == 3:  # planes (row, column, channel)
            mirrored = np.ascontiguousarray(x[:, ::-1, :])
        else:
            n = self.rows * self.columns
            cells = x[: 2 * n].reshape(2, self.rows, self.columns)[:, :, ::-1].reshape(-1)
            mirrored = np.concatenate([cells, x[2 * n :]])
        return [(x, target), (mirrored, np.asarray(target)[::-1].copy())]

    # ---- people -----------------------------------------------------------------------
    def action_to_text(self, action: int, state: Connect4State | None = None) -> str:
        return f"column {int(action) + 1}"

    def parse_action(self, text: str, state: Connect4State) -> int:
        match = re.fullmatch(r"\s*(?:col(?:umn)?\s*)?(-?\d+)\s*", text.lower())
        if not match:
            raise IllegalMoveError(f"cannot read {text!r}: type {self.move_help}")
        number = int(match.group(1))
        if not 1 <= number <= self.columns:
            raise IllegalMoveError(f"there is no column {number}: columns are numbered 1 to {self.columns}")
        action = number - 1
        self.check_legal(state, action)
        return action

    def render(self, state: Connect4State) -> str:
        """The board with row 0 at the bottom, X for player 1, O for player 2, '.' empty,
        the column numbers under it, and whose move it is or how the game ended."""
        player, _, _, winner = state
        cells = self.board(state)
        width = len(str(self.columns)) + 1
        lines = ["".join(f"{'.XO'[v]:>{width}}" for v in cells[r]) for r in range(self.rows - 1, -1, -1)]
        lines.append("".join(f"{c + 1:>{width}}" for c in range(self.columns)))
        if winner:
            lines.append(f"player {winner} ({MARKS[winner]}) has won")
        elif self.is_final(state):
            lines.append("a draw: the board is full")
        else:
            lines.append(f"player {player} ({MARKS[player]}) to move")
        return "\n".join(lines)


@mctsfw.hookimpl
def mctsfw_register_games():
    return [ConnectFour]


@mctsfw.hookimpl
def mctsfw_board_svg(game, state, last_action, heat):
    """The rack of columns, bottom row at the bottom, player 1 red and player 2 yellow; a
    click anywhere in a column drops a disc there; the heat marks sit above the columns."""
    if not isinstance(game, ConnectFour):
        return None
    from hexzero.mctsfw import svg

    cells, step, margin = game.board(state), 50.0, 20.0
    top = margin + step  # one row of room above the rack for the heat marks
    width, height = 2 * margin + step * game.columns, top + step * game.rows + 30
    body = [f'<rect {svg.attrs(x=margin, y=top, width=step * game.columns, height=step * game.rows, rx=8, fill="#1f4fbf")}/>']
    colours = {0: "#ffffff", 1: "#d62728", 2: "#f2c500"}
    for c in range(game.columns):
        filled = [r for r in range(game.rows) if cells[r, c]]
        for r in range(game.rows):
            x, y = margin + (c + 0.5) * step, top + (game.rows - r - 0.5) * step
            mark = r == max(filled, default=-1) and c == last_action
            body.append(svg.stone(x, y, step * 0.4, colours[int(cells[r, c])], last=mark))
        body.append(f'<text {svg.attrs(x=f"{margin + (c + 0.5) * step:.1f}", y=f"{height - 10:.1f}", font_size=14, text_anchor="middle")}>{c + 1}</text>')
    centres = {c: (margin + (c + 0.5) * step, margin + step / 2) for c in range(game.columns)}
    body += svg.heat_layer(heat, centres, step * 0.4)
    for c in range(game.columns):
        body.append(f'<rect {svg.attrs(x=margin + c * step, y=margin, width=step, height=step * (game.rows + 1), fill="transparent", class_="cell", data_action=c)}/>')
    return svg.document(width, height, body, f"Connect Four {game.rows}x{game.columns}")
