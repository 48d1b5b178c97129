"""SGF game records (FF[4]): written from a game's moves, read back as moves.

SGF (https://www.red-bean.com/sgf/) is the file format of Go and Hex programs (GoGui,
Sabaki, GNU Go, KataGo, HexGui). This module knows the format, not the games: it
works through the game protocol (``mctsfw.game.Game``):

- ``game.sgf_game``: the SGF game number, ``GM`` (1 Go, 11 Hex); None: no SGF;
- ``game.grid_cell(action) -> (row_from_top, col)`` (None for a pass) and
  ``game.grid_action(row_from_top, col)``; ``game.pass_action`` (None: no pass);
- the game's parameters ``size`` (``SZ``) and, where declared, ``komi`` (``KM``).

Points are written as the SGF specification says for each game: Go (and any other
game number but 11) as two letters, the column then the row counted from the top
(``aa`` is the top-left corner), a pass as an empty value ``B[]`` (``tt`` is read as a
pass too on boards up to 19x19); Hex (GM[11]) as HexGui writes them, a column letter
and a row number (``a1`` top-left; Little Golem's two letters are read too).

Player 1 is Black (``B``), player 2 White (``W``); a game opened by player 2 carries
``PL[W]``. ``read_sgf`` takes the main line of the first game tree (the first
variation at each branch) and refuses, with ``SgfError`` naming the line and what is
wrong, broken files and what the games here cannot represent (setup stones ``AB``/
``AW``/``AE``: every position is rebuilt from moves from the empty board).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from hexzero.mctsfw.checkpoints import atomic_path
from hexzero.mctsfw.files import read_bytes
from hexzero.mctsfw.game import Action, Game, IllegalMoveError, State

#: what people call the SGF game numbers that may come up in an error message
GAME_NAMES = {1: "Go", 2: "Othello", 3: "chess", 4: "Gomoku/Renju", 5: "Nine Men's Morris", 6: "Backgammon",
              7: "Chinese chess", 8: "Shogi", 9: "Lines of Action", 10: "Ataxx", 11: "Hex"}
HEX = 11  # the one game number whose points are a letter and a number (a1)
COLOURS = {1: "B", 2: "W"}
PLAYERS = {"B": 1, "W": 2}
SETUP = ("AB", "AW", "AE")
#: Hex moves that place no stone (HexGui's names)
HEX_SWAPS = ("swap-sides", "swap-pieces", "swap")
HEX_ENDS = ("resign", "forfeit")


class SgfError(ValueError):
    """A file that is not SGF, or a record these games cannot follow; the message says why."""


# ---- writing -------------------------------------------------------------------------------------
def escape(value: Any) -> str:
    """A property value with SGF's escapes: ``\\`` before ``]`` and ``\\``."""
    return str(value).replace("\\", "\\\\").replace("]", "\\]")


def point_text(game: Game, action: Action) -> str:
    """The SGF value of a move: ``dd`` (Go), ``d4`` (Hex), empty for a pass."""
    cell = game.grid_cell(action)
    if cell is None:
        return "" if game.sgf_game != HEX else "pass"
    row, col = cell
    if game.sgf_game == HEX:
        return f"{chr(ord('a') + col)}{row + 1}"
    return chr(ord("a") + col) + chr(ord("a") + row)


def result_text(game: Game, state: State) -> str | None:
    """``RE`` for a final state: ``B+3.5`` (games with a ``score``: black's lead), ``B+``
    (a winner, no score), ``0`` (a draw); None while the game runs."""
    if not game.is_final(state):
        return None
    winner = game.winner(state)
    score = getattr(game, "score", None)
    if callable(score):
        lead = float(score(state))
        if winner is None or lead == 0:
            return "0"
        return f"{COLOURS[1] if lead > 0 else COLOURS[2]}+{abs(lead):g}"
    return "0" if winner is None else f"{COLOURS[winner]}+"


def resigned_result(resigned: int | None) -> str | None:
    """``RE`` of a game that ``resigned`` (a player) gave up: ``W+R`` when Black resigned; None
    when nobody resigned (``to_sgf`` then reads the result from the final position)."""
    return None if resigned is None else f"{COLOURS[3 - resigned]}+R"


def score_text(score: float) -> str:
    """A counted result as SGF's ``RE`` and GTP's ``final_score`` write it (score for Black):
    ``B+3.5``, ``W+0.5`` or ``0``."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def to_sgf(game: Game, moves: Sequence[Action], starting_player: int = 1, result: str | None = None,
           players: dict[int, str] | None = None, swapped_first_move: Action | None = None, **props: Any) -> str:
    """The game of ``moves`` (action numbers from the empty board, ``starting_player``
    first) as SGF text ending in a newline.

    ``swapped_first_move``: the game came about by the pie rule (``Game.swapped``): its
    first move was this one, then the second player swapped; ``moves`` and
    ``starting_player`` are the game after the swap. Written as HexGui writes it (the
    first move, then ``swap-pieces``), which ``read_sgf`` turns back into these moves.

    ``result`` is the ``RE`` value (``"W+R"``); None: the final position's result
    (``result_text``), none for an unfinished game. ``players``: ``{1: name, 2: name}``
    for ``PB``/``PW``. Other root properties come as keywords (``DT="2026-11-23"``,
    ``C="a comment"``; a list gives several values). Every move is checked legal:
    IllegalMoveError otherwise; a game without SGF raises ValueError.
    """
    if game.sgf_game is None:
        raise ValueError(f"{game.name} has no SGF game number: its games cannot be saved as SGF")
    state = game.state_after(moves, starting_player)  # every move legal
    params = game.params()
    root: dict[str, Any] = {"FF": 4, "GM": game.sgf_game, "CA": "UTF-8", "AP": "hexzero"}
    if "size" in params:
        root["SZ"] = params["size"]
    if "komi" in params:
        root["KM"] = f"{float(params['komi']):g}"
    opener = starting_player if swapped_first_move is None else 3 - starting_player
    if opener != 1:
        root["PL"] = COLOURS[opener]
    for player, tag in ((1, "PB"), (2, "PW")):
        if players and players.get(player):
            root[tag] = players[player]
    result = result_text(game, state) if result is None else result
    if result:
        root["RE"] = result
    bad = [key for key in props if not re.fullmatch(r"[A-Z]+", key)]
    if bad:
        raise ValueError(f"SGF property names are capital letters, not {', '.join(map(repr, bad))}")
    root.update(props)
    head = "(;" + "".join(key + "".join(f"[{escape(v)}]" for v in (value if isinstance(value, (list, tuple)) else
                                                                  [value])) for key, value in root.items())
    nodes = [(starting_player if i % 2 == 0 else 3 - starting_player, point_text(game, action))
             for i, action in enumerate(moves)]
    if swapped_first_move is not None:
        nodes[:1] = [(opener, point_text(game, swapped_first_move)), (starting_player, "swap-pieces")]
    lines, line = [head], ""
    for player, text in nodes:
        node = f";{COLOURS[player]}[{text}]"
        if len(line) + len(node) > 72:  # short lines, as HexGui and GoGui write them
            lines.append(line)
            line = ""
        line += node
    lines.append(line + ")")
    return "\n".join(lines) + "\n"


def write_sgf(path: str | Path, text: str) -> None:
    """Write SGF ``text`` to ``path`` atomically (a reader never sees half a file)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


# ---- parsing -------------------------------------------------------------------------------------
@dataclass
class SgfNode:
    properties: dict[str, list[str]]
    line: int  # where the node starts in the text, from 1


@dataclass
class _Tree:
    nodes: list[SgfNode] = field(default_factory=list)
    children: list["_Tree"] = field(default_factory=list)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _value(text: str, pos: int) -> tuple[str, int]:
    """The value starting after the ``[`` at ``pos - 1``, escapes and soft line breaks
    resolved (other white space than line breaks becomes a space); returns it and the
    position after its ``]``."""
    out: list[str] = []
    start = pos
    end = len(text)
    while True:
        if pos >= end:
            raise SgfError(f"line {_line(text, start)}: a property value is never closed (a ']' is missing)")
        c = text[pos]
        if c == "]":
            return "".join(out), pos + 1
        if c == "\\":
            pos += 1
            if pos >= end:
                continue  # reported above on the next turn
            c = text[pos]
            if c in "\r\n":  # a soft line break: \ then \n, \r\n, \r or \n\r disappears
                pair = text[pos : pos + 2]
                pos += 2 if pair in ("\r\n", "\n\r") else 1
                continue
            out.append(" " if c in "\t\v\f" else c)
            pos += 1
            continue
        if c == "\r":  # a hard line break, however written, is "\n"
            out.append("\n")
            pos += 2 if text[pos : pos + 2] == "\r\n" else 1
            continue
        out.append(" " if c in "\t\v\f" else c)
        pos += 1


_SPACE = re.compile(r"\s*")
_IDENT = re.compile(r"[A-Za-z]+")


def parse_sgf(text: str) -> list[SgfNode]:
    """The nodes of the main line of the first game tree in ``text``: the first variation
    at every branch. Anything after the first tree (a collection's other games) is ignored;
    SgfError says what is wrong in a broken tree."""
    text = text.lstrip("\ufeff")
    start = text.find("(")
    if start < 0 or not re.match(r"\(\s*;", text[start:]):
        raise SgfError("no SGF game tree: an SGF file holds '(;' followed by properties such as FF[4]")
    pos, stack, root = start, [], None
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos >= len(text):
            raise SgfError(f"line {_line(text, pos)}: the file ends inside a game tree (a ')' is missing)")
        c = text[pos]
        if c == "(":
            tree = _Tree()
            if stack:
                if not stack[-1].nodes:
                    raise SgfError(f"line {_line(text, pos)}: a game tree must start with a node (';') "
                                   "before a variation")
                stack[-1].children.append(tree)
            else:
                root = tree
            stack.append(tree)
            pos += 1
        elif c == ")":
            if not stack[-1].nodes:
                raise SgfError(f"line {_line(text, pos)}: an empty game tree '()'")
            stack.pop()
            pos += 1
            if not stack:
                break
        elif c == ";":
            if stack[-1].children:
                raise SgfError(f"line {_line(text, pos)}: a node (';') after a variation: variations end a game tree")
            node = SgfNode({}, _line(text, pos))
            pos += 1
            while True:
                pos = _SPACE.match(text, pos).end()
                ident = _IDENT.match(text, pos)
                if not ident:
                    break
                # FF[3]'s long names (AddBlack) keep only their capitals (AB)
                name = "".join(ch for ch in ident.group() if ch.isupper())
                if not name:
                    raise SgfError(f"line {_line(text, pos)}: property name {ident.group()!r} has no capital letter")
                pos = _SPACE.match(text, ident.end()).end()
                if pos >= len(text) or text[pos] != "[":
                    raise SgfError(f"line {_line(text, pos)}: property {ident.group()} has no value ('[...]')")
                values = node.properties.setdefault(name, [])
                while pos < len(text) and text[pos] == "[":
                    value, pos = _value(text, pos + 1)
                    values.append(value)
                    pos = _SPACE.match(text, pos).end()
            stack[-1].nodes.append(node)
        else:
            shown = c if c.isprintable() else repr(c)
            raise SgfError(f"line {_line(text, pos)}: unexpected {shown!r}: expected a property, ';', '(' or ')'")
    nodes, tree = list(root.nodes), root
    while tree.children:
        tree = tree.children[0]
        nodes.extend(tree.nodes)
    return nodes


# ---- reading -------------------------------------------------------------------------------------
@dataclass
class SgfGame:
    """A game read from SGF: the game it is played in (built from ``GM``, ``SZ``, ``KM``),
    who opened, the moves as action numbers, and the root's other information."""

    game: Game
    game_number: int  # GM
    size: int | None  # SZ
    komi: float | None  # KM
    starting_player: int  # who made the first move (or PL where there is none)
    moves: list[Action]
    result: str | None = None  # RE
    players: dict[int, str] = field(default_factory=dict)  # PB, PW
    properties: dict[str, list[str]] = field(default_factory=dict)  # the root node's, as read
    ended_by: str | None = None  # a move that ended the game without a stone: "resign", "forfeit" (Hex)

    def state(self, moves: int | None = None) -> State:
        """The position after the first ``moves`` moves (all of them by default). GTP's
        ``loadsgf FILE N`` loads the position before move N: ``state(N - 1)``."""
        count = len(self.moves) if moves is None else max(0, min(int(moves), len(self.moves)))
        return self.game.state_after(self.moves[:count], self.starting_player)


def _simple(values: list[str]) -> str:
    """A SimpleText value: its white space as single spaces."""
    return " ".join(values[0].split()) if values else ""


def _size(value: str, number: int) -> int:
    parts = value.strip().split(":")
    try:
        sizes = [int(p) for p in parts]
    except ValueError:
        raise SgfError(f"SZ[{value}] is not a board size (a whole number, or columns:rows)") from None
    if len(sizes) > 2 or (len(sizes) == 2 and sizes[0] != sizes[1]):
        raise SgfError(f"SZ[{value}]: only square boards are played here")
    return sizes[0]


def sgf_game_classes(registries=None) -> dict[int, type]:
    """The registered game classes that have SGF, by their game number."""
    if registries is None:
        from hexzero.mctsfw.plugin_manager import default_registries

        registries = default_registries()
    games = registries.games
    classes = [games.get(name) for name in games.names()]
    return {cls.sgf_game: cls for cls in classes if getattr(cls, "sgf_game", None)}


def _build_game(number: int, size: int | None, komi: float | None, params: dict | None, registries) -> Game:
    classes = sgf_game_classes(registries)
    if number not in classes:
        known = ", ".join(f"{cls.name} (GM[{n}])" for n, cls in sorted(classes.items()))
        what = GAME_NAMES.get(number, "a game")
        raise SgfError(f"GM[{number}] is {what}: not a game played here with SGF; these are: {known}")
    cls = classes[number]
    params = dict(params or {})
    if size is not None and "size" in cls.parameters:
        params["size"] = size
    if komi is not None and "komi" in cls.parameters:
        params["komi"] = komi
    problems = cls.param_problems(params)
    if problems:
        raise SgfError(f"{cls.name}: " + "; ".join(problems))
    return cls(**params)


def _point(value: str, number: int, size: int, game: Game, move: str) -> Action | None:
    """The action of point ``value`` (None for a pass); SgfError for a point off the board."""
    text = value.strip().lower()
    if text == "" or text == "pass" or (text == "tt" and size <= 19 and number != HEX):
        if game.pass_action is None:
            raise SgfError(f"{move}: a pass, and {game.name} has no pass")
        return game.pass_action
    cell = None
    if number == HEX and (m := re.fullmatch(r"([a-z])(\d+)", text)):
        cell = (int(m.group(2)) - 1, ord(m.group(1)) - ord("a"))
    elif re.fullmatch(r"[a-z]{2}", text):  # column, then row from the top
        cell = (ord(text[1]) - ord("a"), ord(text[0]) - ord("a"))
    if cell is None:
        raise SgfError(f"{move}: {value!r} is not a point")
    row, col = cell
    if not (0 <= row < size and 0 <= col < size):
        raise SgfError(f"{move}: {value!r} is off the {size}x{size} board")
    return game.grid_action(row, col)


def read_sgf(text: str, game: Game | None = None, params: dict | None = None, registries=None) -> SgfGame:
    """The main line of the first game in SGF ``text``, its moves as action numbers.

    Without ``game``, the game is the registered one with the file's ``GM`` (1 when
    absent, as SGF says), built with ``params`` (its other parameters, e.g. from the
    config) and the file's ``SZ`` and ``KM`` where it declares ``size`` and ``komi``.
    With ``game`` (a GTP engine's board), the file must be of that game and board size.
    Every move is checked legal in turn. SgfError says what is wrong: broken syntax,
    another game, points off the board, two moves of one colour in a row, illegal
    moves, setup stones.
    """
    nodes = parse_sgf(text)
    root = nodes[0].properties
    try:
        number = int(_simple(root.get("GM", ["1"])))
    except ValueError:
        raise SgfError(f"GM[{root['GM'][0]}] is not a game number") from None
    if game is not None and game.sgf_game != number:
        raise SgfError(f"the file is a game of {GAME_NAMES.get(number, f'GM[{number}]')}, not of {game.name}")
    size = _size(root["SZ"][0], number) if "SZ" in root else None
    komi = None
    if "KM" in root and _simple(root["KM"]):
        try:
            komi = float(_simple(root["KM"]))
        except ValueError:
            raise SgfError(f"KM[{root['KM'][0]}] is not a number (the komi)") from None
        if not math.isfinite(komi):
            raise SgfError(f"KM[{root['KM'][0]}] is not a finite number (the komi)")
    if game is None:
        if size is None:  # SGF's defaults: 19 for Go, 11 for Hex
            size = 11 if number == HEX else 19
        game = _build_game(number, size, komi, params, registries)
    board = game.params().get("size")
    if size is not None and board is not None and size != board:
        raise SgfError(f"the file's board is {size}x{size}, this {game.name} board is {board}x{board}")
    size = board if board is not None else size
    if size is None:
        raise SgfError(f"{game.name} has no board size: SGF points cannot name its moves")

    for node in nodes:
        setup = [key for key in SETUP if key in node.properties]
        if setup:
            raise SgfError(f"line {node.line}: setup stones ({'/'.join(setup)}[...]) are not supported: {game.name} "
                           "positions are rebuilt from moves from the empty board")
    starting = PLAYERS.get(_simple(root.get("PL", ["B"])).upper()[:1])
    if starting is None:
        raise SgfError(f"PL[{root['PL'][0]}]: the player to move is B or W")
    moves: list[Action] = []
    state = None
    ended_by = None
    swapped = False  # the move after a swap: programs write either colour for it
    for node in nodes:
        colours = [c for c in ("B", "W") if c in node.properties]
        if not colours:
            continue
        if len(colours) == 2 or len(node.properties[colours[0]]) != 1:
            raise SgfError(f"line {node.line}: a node holds one move, this one holds several")
        if ended_by:
            raise SgfError(f"line {node.line}: a move after {ended_by}")
        colour = colours[0]
        value = node.properties[colour][0]
        move = f"line {node.line}: move {len(moves) + 1} {colour}[{value}]"
        if state is None:  # the first move says who opened
            starting = PLAYERS[colour]
            state = game.initial_state(starting)
        special = value.strip().lower()
        if number == HEX and special in HEX_SWAPS + HEX_ENDS:
            if special in HEX_ENDS:
                ended_by = special
                continue
            # swap-sides (and old HexGui's swap-pieces, and "swap"): the second player takes
            # the first player's side: the board stays as it is, and the next move is White's
            # again, by the other person. Exact swap-pieces (the stone mirrored and recoloured)
            # is the same game with the mirrored stone played by White first.
            if len(moves) != 1 or PLAYERS[colour] == starting:
                raise SgfError(f"{move}: a swap is the second player's first move")
            if special == "swap-pieces" and not _old_hexgui(root):
                starting, moves = game.swapped(starting, moves)
                state = game.state_after(moves, starting)
            swapped = True
            continue
        action = _point(value, number, size, game, move)
        if game.current_player(state) != PLAYERS[colour] and not swapped:
            raise SgfError(f"{move}: {COLOURS[game.current_player(state)]} is to move here ({game.name} alternates)")
        try:
            game.check_legal(state, action)  # the reason as people are told it
            state = game.next_state(state, action)
        except IllegalMoveError as error:
            raise SgfError(f"{move} is illegal: {error}") from None
        moves.append(action)
        swapped = False
    players = {p: _simple(root[tag]) for p, tag in ((1, "PB"), (2, "PW")) if tag in root}
    result = _simple(root["RE"]) if "RE" in root else None
    return SgfGame(game, number, size, komi, starting, moves, result or None, players, root, ended_by)


def _old_hexgui(root: dict[str, list[str]]) -> bool:
    """HexGui 0.9 and earlier wrote ``swap-pieces`` for what SGF calls swap-sides."""
    return bool(re.fullmatch(r"HexGui:0\.[0-9](\D.*)?", _simple(root.get("AP", [""]))))


def read_sgf_file(path: str | Path, game: Game | None = None, params: dict | None = None, registries=None) -> SgfGame:
    """``read_sgf`` of a file (UTF-8, else Latin-1); SgfError names the file and the reason."""
    path = Path(path)
    try:
        raw = read_bytes(path, "sgf")
    except OSError as error:  # missing, not a regular file (FileRefused), too large
        raise SgfError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    try:
        return read_sgf(text, game, params, registries)
    except SgfError as error:
        raise SgfError(f"{path}: {error}") from None
