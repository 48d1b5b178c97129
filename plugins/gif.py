"""The ``gif`` display: records the states of actual games and saves them as an animated GIF.

Hex is drawn as its diamond of hexagons — cell (0, 0) on top, as in the terminal
picture — with the four sides in the colour of the player who joins them, the stones
of player 1 (X, red) and player 2 (O, blue), the last move ringed, and at the end the
winning chain outlined and the winner written. Connect Four is drawn
as discs in a blue board (X red, O yellow), the last stone ringed. Gomoku is drawn as
black (X) and white (O) stones on a wooden board, the last stone dotted red and the
winning line ringed in gold; Go likewise, row 1 at the bottom as GTP. Every other game is
drawn as the text of its ``render(state)``, so any game plugin can be recorded.

    gif = GifDisplay(title="mcts vs random")
    play_game(game, actors, display=gif)
    gif.save("game.gif")            # one frame per state shown
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from PIL import Image, ImageDraw, ImageFont

from hexzero import mctsfw
from hexzero.mctsfw.game import Action, Game, State

BACKGROUND = (255, 255, 255)
INK = (30, 30, 30)
EMPTY = (238, 226, 196)
GRID = (120, 110, 90)
NEUTRAL = (150, 150, 150)
PLAYER_COLOURS = {1: (214, 39, 40), 2: (31, 119, 180)}
PLAYER_MARKS = {1: "X", 2: "O"}
HIGHLIGHT = (255, 200, 0)


def _font(size: int, mono: bool = False) -> ImageFont.ImageFont:
    """DejaVu from matplotlib's data (always installed with it), else Pillow's own font."""
    name = "DejaVuSansMono.ttf" if mono else "DejaVuSans.ttf"
    try:
        import matplotlib

        return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)
    except (ImportError, OSError):
        return ImageFont.load_default(size)


def caption_lines(
    game: Game, state: State, last_action: Action | None, mover: int | None, move_number: int, marks: bool = False
) -> list[str]:
    """What happened (the move) and what is next (who moves, or who won); ``marks``: name X and O."""

    def who(player: int | None) -> str:
        return f"{PLAYER_MARKS[player]} (player {player})" if marks else f"player {player}"

    first = "start" if last_action is None else (
        f"move {move_number}: {who(mover)} plays {game.action_to_text(last_action, state)}"
    )
    if game.is_final(state):
        winner = game.winner(state)
        second = f"{who(winner)} wins" if winner else "a draw"
    else:
        second = f"{who(game.current_player(state))} to move"
    return [first, second]


# ---- Hex: the diamond of hexagons ----------------------------------------------------------
def hex_frame_size(n: int, radius: int = 22) -> tuple[int, int]:
    """Width and height in pixels of a Hex frame for an n x n board with hexagons of ``radius``."""
    board_w, board_h = _hex_board_extent(n, radius)
    header, footer, margin = _hex_bands(radius)
    return (max(int(board_w) + 2 * margin, 16 * radius), int(board_h) + 2 * margin + header + footer)


def _hex_board_extent(n: int, radius: float) -> tuple[float, float]:
    width = math.sqrt(3) * radius
    return n * width, 3 * (n - 1) * radius + 2 * radius


def _hex_bands(radius: int) -> tuple[int, int, int]:
    """Heights of the caption band above and the legend band below the board, and the margin."""
    line = max(12, int(radius * 0.7)) + 6
    return 3 * line, 2 * line, max(12, radius)


def _hex_centres(n: int, radius: int, width: int, top: int) -> dict[int, tuple[float, float]]:
    w = math.sqrt(3) * radius
    x0 = width / 2
    return {
        r * n + c: (x0 + (c - r) * w / 2, top + radius + (r + c) * 1.5 * radius)
        for r in range(n)
        for c in range(n)
    }


def _hexagon(cx: float, cy: float, radius: float) -> list[tuple[float, float]]:
    """A pointy-top hexagon: a vertex straight up and down, flat sides left and right."""
    return [(cx + radius * math.cos(math.radians(30 + 60 * k)), cy + radius * math.sin(math.radians(30 + 60 * k)))
            for k in range(6)]


# (dr, dc) of the six neighbours of (r, c), as in the Hex plugin
_DIRECTIONS = ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))


def winning_chain(n: int, cells: list[int], player: int) -> set[int]:
    """The player's stones in groups that touch both of that player's sides."""
    own = {a for a, v in enumerate(cells) if v == player}
    chain: set[int] = set()
    seen: set[int] = set()
    for start in own:
        if start in seen:
            continue
        group, frontier = {start}, [start]
        while frontier:
            r, c = divmod(frontier.pop(), n)
            for dr, dc in _DIRECTIONS:
                rr, cc = r + dr, c + dc
                a = rr * n + cc
                if 0 <= rr < n and 0 <= cc < n and a in own and a not in group:
                    group.add(a)
                    frontier.append(a)
        seen |= group
        lines = {divmod(a, n)[0 if player == 1 else 1] for a in group}
        if 0 in lines and n - 1 in lines:
            chain |= group
    return chain


def draw_hex(game: Game, state: State, last_action: Action | None, mover: int | None,
             move_number: int, title: str = "", radius: int = 22) -> Image.Image:
    """A frame of a Hex game: the diamond, its coloured sides, the stones, captions."""
    n = game.size
    flat = game.to_flat(state)
    cells = list(flat[1:])
    width, height = hex_frame_size(n, radius)
    header, footer, margin = _hex_bands(radius)
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = _font(max(12, int(radius * 0.7)))
    centres = _hex_centres(n, radius, width, header + margin)
    side_width = max(3, radius // 4)

    # the sides first, so the cells' outlines sit on top of them
    for a, (cx, cy) in centres.items():
        r, c = divmod(a, n)
        corners = _hexagon(cx, cy, radius + side_width / 2)
        for dr, dc in _DIRECTIONS:
            rr, cc = r + dr, c + dc
            if 0 <= rr < n and 0 <= cc < n:
                continue
            off_rows, off_cols = not 0 <= rr < n, not 0 <= cc < n
            colour = NEUTRAL if off_rows and off_cols else PLAYER_COLOURS[1 if off_rows else 2]
            dx, dy = (dc - dr) * math.sqrt(3) / 2, (dr + dc) * 1.5
            ends = sorted(corners, key=lambda p: -((p[0] - cx) * dx + (p[1] - cy) * dy))[:2]
            draw.line(ends, fill=colour, width=side_width)

    winner = game.winner(state) if game.is_final(state) else None
    chain = winning_chain(n, cells, winner) if winner else set()
    for a, (cx, cy) in centres.items():
        fill = PLAYER_COLOURS.get(cells[a], EMPTY)
        draw.polygon(_hexagon(cx, cy, radius), fill=fill, outline=GRID, width=1)
        if a in chain:
            draw.polygon(_hexagon(cx, cy, radius * 0.8), outline=HIGHLIGHT, width=max(2, radius // 7))
        if a == last_action:
            ring = radius * 0.38
            draw.ellipse((cx - ring, cy - ring, cx + ring, cy + ring), outline=BACKGROUND, width=max(2, radius // 8))

    # labels as in the terminal picture: column letters along row 0, row numbers along column 0
    small = _font(max(10, int(radius * 0.55)))
    w = math.sqrt(3) * radius
    for k in range(n):
        cx, cy = centres[k]  # (0, k): north-east side
        draw.text((cx + w * 0.75, cy - radius * 0.9), chr(ord("a") + k), fill=INK, font=small, anchor="mm")
        cx, cy = centres[k * n]  # (k, 0): north-west side
        draw.text((cx - w * 0.75, cy - radius * 0.9), str(k + 1), fill=INK, font=small, anchor="mm")

    line = max(12, int(radius * 0.7)) + 6
    lines = ([title] if title else []) + caption_lines(game, state, last_action, mover, move_number, marks=True)
    for k, text in enumerate(lines[-3:]):
        colour = PLAYER_COLOURS[winner] if winner and k == len(lines[-3:]) - 1 else INK
        draw.text((margin, margin // 2 + k * line), text, fill=colour, font=font)
    legend = [
        (PLAYER_COLOURS[1], f"X = player 1: joins rows 1 and {n} (NE, SW)"),
        (PLAYER_COLOURS[2], f"O = player 2: joins columns a and {chr(ord('a') + n - 1)} (NW, SE)"),
    ]
    for k, (colour, text) in enumerate(legend):
        draw.text((margin, height - footer + k * line), text, fill=colour, font=small)
    return image


# ---- Connect Four: discs in a blue board ---------------------------------------------------
CONNECT4_BOARD = (25, 80, 190)
CONNECT4_COLOURS = {1: (214, 39, 40), 2: (250, 205, 40)}  # red X, yellow O


def draw_connect4(game: Game, state: State, last_action: Action | None, mover: int | None,
                  move_number: int, title: str = "", radius: int = 20) -> Image.Image:
    """A frame of a Connect Four game: the board with row 0 at the bottom, the last stone ringed."""
    board = game.board(state)  # (rows, columns), row 0 = bottom
    rows, columns = board.shape
    cell, margin = 2 * radius + max(4, radius // 3), max(12, radius)
    font = _font(max(12, int(radius * 0.7)))
    line = max(12, int(radius * 0.7)) + 6
    header = 3 * line
    width = max(columns * cell + 2 * margin, 16 * radius)
    height = header + rows * cell + line + 2 * margin
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    left, top = (width - columns * cell) // 2, header + margin
    draw.rounded_rectangle((left - 4, top - 4, left + columns * cell + 4, top + rows * cell + 4),
                           radius=radius // 2, fill=CONNECT4_BOARD)
    # the last stone: the highest one in the column just played
    last_row = None
    if last_action is not None:
        taken = [r for r in range(rows) if board[r, last_action]]
        last_row = taken[-1] if taken else None
    for r in range(rows):
        for c in range(columns):
            cx, cy = left + c * cell + cell / 2, top + (rows - 1 - r) * cell + cell / 2
            fill = CONNECT4_COLOURS.get(int(board[r, c]), BACKGROUND)
            draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill)
            if c == last_action and r == last_row:
                ring = radius * 0.45
                draw.ellipse((cx - ring, cy - ring, cx + ring, cy + ring), outline=BACKGROUND, width=max(2, radius // 7))
    small = _font(max(10, int(radius * 0.55)))
    for c in range(columns):
        draw.text((left + c * cell + cell / 2, top + rows * cell + margin / 2 + line / 2), str(c + 1),
                  fill=INK, font=small, anchor="mm")
    winner = game.winner(state) if game.is_final(state) else None
    lines = ([title] if title else []) + caption_lines(game, state, last_action, mover, move_number, marks=True)
    for k, text in enumerate(lines[-3:]):
        colour = PLAYER_COLOURS[winner] if winner and k == len(lines[-3:]) - 1 else INK
        draw.text((margin, margin // 2 + k * line), text, fill=colour, font=font)
    return image


# ---- Gomoku: stones on the lines of a wooden board ------------------------------------------
GOMOKU_COLOURS = {
    "board": (222, 184, 122),
    "grid": (90, 60, 30),
    1: (20, 20, 20),  # black: player 1 (X)
    2: (248, 248, 242),  # white: player 2 (O)
    "last": (214, 39, 40),
    "line": (255, 200, 0),
}


def draw_gomoku(game: Game, state: State, last_action: Action | None, mover: int | None,
                move_number: int, title: str = "", radius: int = 14) -> Image.Image:
    """A frame of a Gomoku game: the stones on the intersections (row 1 at the top, as the
    terminal picture), the last stone marked with a red dot, the winning line ringed in gold
    with a gold bar through it, column letters above and row numbers on the left."""
    line = game.winning_line(state) if game.is_final(state) else []
    return draw_stones(game, state, last_action, mover, move_number, title, radius, line=line,
                       column_label=lambda c: chr(ord("a") + c), row_label=lambda r: str(r + 1))


def draw_go(game: Game, state: State, last_action: Action | None, mover: int | None,
            move_number: int, title: str = "", radius: int = 14) -> Image.Image:
    """A frame of a Go game: the stones on the intersections, row 1 at the bottom and the
    column letters skipping I (as the terminal picture and GTP), the last stone marked with
    a red dot (nothing for a pass; the caption says it)."""
    n = game.size
    return draw_stones(game, state, last_action, mover, move_number, title, radius, line=[],
                       column_label=lambda c: game.action_to_text(c)[0], row_label=lambda r: str(n - r),
                       grid_cell=game.grid_cell)


def draw_stones(game: Game, state: State, last_action: Action | None, mover: int | None, move_number: int,
                title: str, radius: int, line: list[Action], column_label: Callable[[int], str],
                row_label: Callable[[int], str],
                grid_cell: Callable[[Action], tuple[int, int] | None] | None = None) -> Image.Image:
    """Black and white stones on the lines of a wooden board (Gomoku, Go): ``board(state)``
    gives the points; ``grid_cell(action)`` their (row from the top, column) (row-major from
    the top by default); the stones of ``line`` ringed in gold with a bar through them;
    ``column_label``/``row_label`` of the column and of the row counted from the top."""
    n = game.size
    board = game.board(state).reshape(-1)
    grid_cell = grid_cell or (lambda a: divmod(a, n))
    cell = 2 * radius + max(3, radius // 4)
    margin = max(12, radius)
    font = _font(max(12, int(radius * 0.9)))
    small = _font(max(10, int(radius * 0.75)))
    line_height = max(12, int(radius * 0.9)) + 6
    header = 3 * line_height
    label = cell  # room for the coordinates
    width = max(n * cell + label + 2 * margin, 24 * radius)
    height = header + n * cell + label + 2 * margin
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    left, top = (width - n * cell + label) // 2, header + margin + label // 2
    pad = max(3, radius // 3)
    draw.rectangle((left - pad, top - pad, left + n * cell + pad, top + n * cell + pad), fill=GOMOKU_COLOURS["board"])

    def at(r: int, c: int) -> tuple[float, float]:
        return left + c * cell + cell / 2, top + r * cell + cell / 2

    def centre(a: int) -> tuple[float, float]:
        return at(*grid_cell(a))

    for k in range(n):
        draw.line((*at(0, k), *at(n - 1, k)), fill=GOMOKU_COLOURS["grid"], width=1)
        draw.line((*at(k, 0), *at(k, n - 1)), fill=GOMOKU_COLOURS["grid"], width=1)
        x, y = at(0, k)
        draw.text((x, top - label / 2), column_label(k), fill=INK, font=small, anchor="mm")
        x, y = at(k, 0)
        draw.text((left - label / 2, y), row_label(k), fill=INK, font=small, anchor="mm")
    if line:
        draw.line((*centre(line[0]), *centre(line[-1])), fill=GOMOKU_COLOURS["line"], width=max(4, radius // 2))
    for a, v in enumerate(board):
        if not v:
            continue
        cx, cy = centre(a)  # board(state) lists the points in action order
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=GOMOKU_COLOURS[int(v)],
                     outline=GOMOKU_COLOURS[1], width=1)
        if a in line:
            ring = radius + max(2, radius // 5)
            draw.ellipse((cx - ring, cy - ring, cx + ring, cy + ring), outline=GOMOKU_COLOURS["line"],
                         width=max(3, radius // 4))
        if a == last_action:
            dot = max(3, radius // 3)
            draw.ellipse((cx - dot, cy - dot, cx + dot, cy + dot), fill=GOMOKU_COLOURS["last"])
    lines = ([title] if title else []) + caption_lines(game, state, last_action, mover, move_number, marks=True)
    for k, text in enumerate(lines[-3:]):
        draw.text((margin, margin // 2 + k * line_height), text, fill=INK, font=font)
    return image


# ---- any game: its text picture --------------------------------------------------------------
def draw_text(game: Game, state: State, last_action: Action | None, mover: int | None,
              move_number: int, title: str = "", font_size: int = 15) -> Image.Image:
    """A frame of the game's ``render(state)`` text under the move caption."""
    font = _font(font_size, mono=True)
    lines = ([title] if title else []) + caption_lines(game, state, last_action, mover, move_number)[:1]
    body = "\n".join(lines) + "\n\n" + game.render(state)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = probe.multiline_textbbox((0, 0), body, font=font, spacing=4)
    pad = font_size
    image = Image.new("RGB", (right + 2 * pad, bottom + 2 * pad), BACKGROUND)
    ImageDraw.Draw(image).multiline_text((pad, pad), body, fill=INK, font=font, spacing=4)
    return image


#: games drawn by a picture of their own, by game name; the rest are drawn as text
PAINTERS: dict[str, Callable[..., Image.Image]] = {
    "hex": draw_hex, "connect4": draw_connect4, "gomoku": draw_gomoku, "go": draw_go,
}


class GifDisplay:
    """Records every state it is shown; ``save(path)`` writes them as an animated GIF.

    A state shown without a last action starts a new game and a new recording. With
    ``path`` the recording is saved there whenever a game ends. ``delay`` is accepted for
    the displays' common constructor and ignored: ``frame_ms`` sets the GIF's pace.
    """

    name = "gif"
    description = ("records actual games as animated GIFs (Hex as a diamond of hexagons, Connect Four as discs, "
                   "Gomoku and Go as stones on a board, other games as text)")

    def __init__(
        self,
        path: str | Path | None = None,
        title: str = "",
        frame_ms: int = 700,
        last_frame_ms: int = 3000,
        delay: float = 0.0,
        **drawing: Any,
    ):
        self.path = Path(path) if path is not None else None
        self.title = title
        self.frame_ms = int(frame_ms)
        self.last_frame_ms = int(last_frame_ms)
        self.drawing = drawing  # e.g. radius= for Hex, font_size= for text
        self.game: Game | None = None
        self.shown: list[tuple[State, Action | None, int | None]] = []

    def show(self, game: Game, state: State, last_action: Action | None = None, mover: int | None = None) -> None:
        if last_action is None:
            self.shown = []
        self.game = game
        self.shown.append((state, last_action, mover))
        if self.path is not None and game.is_final(state):
            self.save(self.path)

    def clear(self) -> None:
        self.shown = []

    @property
    def num_frames(self) -> int:
        return len(self.shown)

    def frames(self) -> list[Image.Image]:
        """One RGB image per shown state, all of one size."""
        if self.game is None or not self.shown:
            return []
        painter = PAINTERS.get(self.game.name, draw_text)
        images = [
            painter(self.game, state, action, mover, k, title=self.title, **self.drawing)
            for k, (state, action, mover) in enumerate(self.shown)
        ]
        width = max(im.width for im in images)
        height = max(im.height for im in images)
        if any(im.size != (width, height) for im in images):
            padded = []
            for im in images:
                canvas = Image.new("RGB", (width, height), BACKGROUND)
                canvas.paste(im, (0, 0))
                padded.append(canvas)
            images = padded
        return images

    def save(self, path: str | Path) -> Path:
        """Write the recorded game as an animated GIF that loops; replaces the file whole."""
        from hexzero.mctsfw.checkpoints import atomic_path

        images = self.frames()
        if not images:
            raise ValueError("nothing to save: no state has been shown")
        durations = [self.frame_ms] * len(images)
        durations[-1] = max(self.frame_ms, self.last_frame_ms)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0,
                           optimize=False)
        return path


@mctsfw.hookimpl
def mctsfw_register_displays():
    return [GifDisplay]
