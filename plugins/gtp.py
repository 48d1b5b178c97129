"""GTP, the Go Text Protocol (version 2): our agents as an engine, outside engines as agents.

**The engine** (``GtpEngine``, ``cli.py gtp``) is a thin layer over any actor that
``cli.py play`` accepts (random, mcts, a saved network, even ``gtp:...``): it keeps the
game's position and its moves, asks the actor for ``genmove`` and answers on stdout.
Moves are written as the game writes them (``action_to_text`` / ``parse_action``): GTP
vertices for Go (``D4``, ``pass``), HexGui's cells for Hex (``a1`` = action 0, column
letter then row number). Black is player 1, white player 2. The only per-game code is
the dialect table below: commands offered only where the game has what they need.

- ``play COLOUR MOVE`` / ``genmove COLOUR`` out of turn: in a game with a pass (Go) the
  other colour's pass is implied, played first (``undo`` takes both back); in a game
  without one (Hex) the first move of a game may be either colour's (the game then
  starts with that player), later moves out of turn are refused. ``play w swap-pieces``
  (Hex, HexGui's pie rule) mirrors Black's first stone into White's.
- ``genmove`` answers ``resign`` when the actor resigns (``mctsfw.Resignation``) or when
  a searching actor's chosen move is worth less than ``resign_threshold``; the position stays.
- ``time_settings`` / ``time_left`` budget the search (``TimeBudget``): a searching
  actor stops at its own search games or at the budget, whichever comes first.
- ``final_score`` (games with ``score``: Go): the area score of the position as it stands
  (Tromp-Taylor; no dead stones are guessed), ``B+3.5``, ``W+0.5`` or ``0``.
- ``gogui-analyze_commands`` (and HexGui's ``hexgui-analyze_commands``) offers
  ``hexzero-visits`` (GoGui ``gfx``: a heat map and the visit count of each root move of
  a search from the current position) for searching actors and ``hexzero-policy`` (the
  network's move probabilities) for raw networks.
- ``loadsgf FILE [N]``: the game recorded in FILE up to move N (``mctsfw.sgf``).
- Anything illegal or malformed is answered ``? reason`` and changes nothing.

**The client** (``GtpActor``, player spec ``gtp:COMMAND``) starts an outside engine
(``gtp:"gnugo --mode gtp --level 1"``; ``/usr/games`` is searched too), tells it the board
(``boardsize``, ``clear_board``, ``komi``), plays the moves it has not seen and asks
``genmove``; ``resign`` raises ``mctsfw.Resignation``. A game continued from a record
(``play --from``) reaches it through ``Actor.opening_played``. The engine process is killed when
the actor is closed, when it answers nonsense, when our process exits (atexit) and, on
Linux, when our process dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import math
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor, ActorError, FollowingActor, Resignation
from hexzero.mctsfw.game import Action, Game, IllegalMoveError, State, random_opening
from hexzero.mctsfw.sgf import score_text

PROTOCOL_VERSION = "2"
ENGINE_NAME = "hexzero"
COLOURS = {"b": 1, "black": 1, "w": 2, "white": 2}
COLOUR_NAMES = {1: "black", 2: "white"}
#: the dialect table: games whose ``play`` takes HexGui's ``swap-pieces`` (the pie rule)
SWAP_PIECES_GAMES = {"hex"}


class GtpError(Exception):
    """A command the engine refuses: answered ``? message``, the state unchanged."""


def engine_version() -> str:
    try:
        import importlib.metadata

        return importlib.metadata.version("hexzero")
    except Exception:  # a checkout that is not installed
        return "0.1.0"


def pass_action(game: Game) -> Action | None:
    """The game's pass, if it has one (Go's ``size*size``)."""
    action = getattr(game, "pass_action", None)
    return action if isinstance(action, int) else None


def parse_colour(text: str) -> int:
    try:
        return COLOURS[text.lower()]
    except KeyError:
        raise GtpError(f"invalid color {text!r}: b, w, black or white") from None


# ---- time --------------------------------------------------------------------------------
@dataclass
class TimeBudget:
    """GTP's Canadian byo-yomi clock, turned into seconds for one move.

    ``time_settings main byo_time byo_stones``: ``main`` seconds, then ``byo_stones``
    moves in every ``byo_time`` seconds; byo_time > 0 with byo_stones 0 means no limit
    (GTP). ``time_left colour seconds stones``: stones > 0 means in byo-yomi with that
    many moves left in the period. A move gets, in byo-yomi, the period's time shared
    over its stones; before, the main time shared over the moves that may be left (half
    the empty board, at least ``MIN_MOVES_LEFT``) plus a byo-yomi move's share; of that,
    ``SAFETY`` is used, less ``LAG`` seconds for the controller's own delays.
    """

    main: float = 0.0
    byo_time: float = 0.0
    byo_stones: int = 0
    left: dict[int, tuple[float, int]] = field(default_factory=dict)  # colour -> (seconds, stones)
    set: bool = False

    MIN_MOVES_LEFT = 20
    SAFETY = 0.8
    LAG = 0.1
    SHORTEST = 0.05

    def unlimited(self) -> bool:
        return not self.set or (self.main == 0 and self.byo_time == 0) or (self.byo_time > 0 and self.byo_stones == 0 and self.main == 0)

    def seconds_for(self, player: int, moves_left: int) -> float | None:
        """The seconds ``player`` may think on this move; None when there is no limit."""
        if self.unlimited():
            return None
        seconds, stones = self.left.get(player, (self.main, 0))
        if stones > 0:
            share = seconds / stones
        else:
            byo = self.byo_time / self.byo_stones if self.byo_stones else 0.0
            share = seconds / max(moves_left, self.MIN_MOVES_LEFT) + byo
        return max(self.SHORTEST, share * self.SAFETY - self.LAG)


# ---- the engine --------------------------------------------------------------------------
class GtpEngine:
    """Our actor behind GTP: ``handle(line)`` gives the response text (or None for an
    empty line), ``run(stdin, stdout)`` serves until ``quit`` or the end of input.

    ``make_player(game)`` builds the actor for a game (again after ``boardsize`` or
    ``komi``, which build a new game from ``game_name`` and ``params``). A searching
    actor resigns (``genmove`` answers ``resign``) when the value of its chosen move after
    its search (1 a win, 0.5 a draw, 0 a loss) is below ``resign_threshold`` (0: never)."""

    def __init__(self, game_name: str, params: dict[str, Any], make_player: Callable[[Game], Actor],
                 resign_threshold: float = 0.0):
        self.game_name = game_name
        self.resign_threshold = resign_threshold
        self.params = dict(params)
        self.make_player = make_player
        self.actor: Actor | None = None
        self.time = TimeBudget()
        self.finished = False
        game = mctsfw.make_game(game_name, **self.params)
        self._install_game(game, make_player(game))
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: PROTOCOL_VERSION,
            "name": lambda args: ENGINE_NAME,
            "version": lambda args: engine_version(),
            "known_command": self.cmd_known_command,
            "list_commands": lambda args: "\n".join(self.commands),
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "undo": self.cmd_undo,
            "showboard": self.cmd_showboard,
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            "gogui-analyze_commands": self.cmd_analyze_commands,
            "hexgui-analyze_commands": self.cmd_analyze_commands,  # HexGui asks its own name for the same list
            "hexzero-visits": self.cmd_visits,
            "hexzero-policy": self.cmd_policy,
        }
        # the dialect table: what only some games have
        if "komi" in self.params or any(s.name == "komi" for s in type(self.game).parameters):
            self.commands["komi"] = self.cmd_komi
        if callable(getattr(self.game, "score", None)):
            self.commands["final_score"] = self.cmd_final_score
        if sgf_module() is not None:
            self.commands["loadsgf"] = self.cmd_loadsgf

    # ---- position -------------------------------------------------------------------
    # The position is its ID: who opened and the moves since (``state_after``); each
    # play/genmove pushes the position before it, for ``undo``.
    def _install_game(self, game: Game, actor: Actor) -> None:
        """The game the controller plays (``controller_game``: no move cut-off) and
        ``actor``, made for it (searching ``game``, the cut-off kept), warmed up; the actor
        before it is let go."""
        if self.actor is not None:
            self.actor.close()
        self.game = controller_game(game)
        self.actor = actor
        warm_up(self.actor, game)
        self.clear()

    def past_cutoff(self, state: State) -> bool:
        """Whether ``state`` is past the move cut-off the actor searches with (Go's
        ``max_moves``) while the controller plays on: the engine then passes."""
        return self.actor.game.is_final(state) and not self.game.is_final(state)

    def clear(self) -> None:
        self.starting_player, self.moves = 1, []
        self.state = self.game.initial_state(1)
        self.undo_stack: list[tuple[int, list[Action]]] = []
        self.swap: tuple[int, list[Action]] | None = None  # the position a swap-pieces made, in this game
        self.actor.reset()

    def _rebuild(self, changes: dict[str, Any], moves: list[Action] = (), starting: int = 1,
                 undo_stack: list[tuple[int, list[Action]]] | None = None) -> None:
        """The game rebuilt with changed parameters, ``moves`` replayed from the start
        (``starting`` opening), and a new actor for it; refused with the reason, and then
        nothing has changed. ``undo`` then takes the moves back one by one, or as
        ``undo_stack`` says."""
        params = {**self.params, **changes}
        try:
            game = mctsfw.make_game(self.game_name, **params)
            state = game.state_after(moves, starting)
            actor = self.make_player(game)  # a network made for another board is refused here
        except (ValueError, IllegalMoveError) as error:
            raise GtpError(str(error)) from None
        self.params = params
        self._install_game(game, actor)
        self.starting_player, self.moves, self.state = starting, list(moves), state
        self.undo_stack = [(starting, list(moves[:i])) for i in range(len(moves))] if undo_stack is None else undo_stack

    def _turn_for(self, player: int) -> tuple[int, list[Action], State]:
        """The position where ``player`` moves now, as (starting player, moves, state): the
        present one, or with an implied pass of the other colour (games with a pass), or a
        new start with ``player`` opening (before the first move of a game without one).
        Refused when ``player`` cannot move now."""
        state, moves, starting = self.state, list(self.moves), self.starting_player
        if self.game.is_final(state):
            raise GtpError("the game is over")
        if self.game.current_player(state) != player:
            passing = pass_action(self.game)
            other = COLOUR_NAMES[3 - player]
            if passing is not None:
                try:
                    state = self.game.next_state(state, passing)
                except IllegalMoveError as error:
                    raise GtpError(f"it is {other}'s turn, and its pass cannot be implied: {error}") from None
                moves.append(passing)
                if self.game.is_final(state):
                    raise GtpError(f"it is {other}'s turn; an implied pass would end the game")
            elif not moves:
                starting, state = player, self.game.initial_state(player)
            else:
                raise GtpError(f"it is {other}'s turn ({self.game.name} has no pass)")
        return starting, moves, state

    def _move_to(self, starting: int, moves: list[Action], state: State) -> None:
        self.undo_stack.append((self.starting_player, self.moves))
        if starting != self.starting_player:
            self.actor.reset()
        self.starting_player, self.moves, self.state = starting, moves, state

    def _swap_pieces(self, player: int) -> tuple[int, list[Action], State]:
        """Hex's pie rule as HexGui plays it (``play w swap-pieces``, White's first move):
        ``Game.swapped``, whatever ``games.hex.swap`` says (the controller keeps the rules)."""
        if player == self.starting_player or self.game.is_final(self.state):
            raise GtpError("swap-pieces is the second player's first move")
        if self.swap is not None and self.starting_player == self.swap[0] and self.moves[:1] == self.swap[1]:
            raise GtpError("swap-pieces was played already in this game: the swap is the second player's first move")
        try:
            starting, moves = self.game.swapped(self.starting_player, self.moves)
        except IllegalMoveError:
            raise GtpError("swap-pieces is the second player's first move") from None
        return starting, moves, self.game.state_after(moves, starting)

    # ---- commands ---------------------------------------------------------------------
    def cmd_known_command(self, args: list[str]) -> str:
        return "true" if args and args[0] in self.commands else "false"

    def cmd_quit(self, args: list[str]) -> str:
        self.finished = True
        return ""

    def cmd_boardsize(self, args: list[str]) -> str:
        # HexGui and Benzene also send "boardsize N N" (width height)
        if not args or len(args) > 2 or not all(a.isdigit() for a in args):
            raise GtpError("boardsize takes a size: boardsize N")
        if len(args) == 2 and args[0] != args[1]:
            raise GtpError("unacceptable size: only square boards")
        if "size" not in self.params and not any(s.name == "size" for s in type(self.game).parameters):
            raise GtpError(f"unacceptable size: {self.game_name} has no board size")
        try:
            self._rebuild({"size": int(args[0])})
        except GtpError as error:  # GTP v2: "unacceptable size", the reason after it
            raise GtpError(f"unacceptable size: {error}") from None
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self.clear()
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        try:
            komi = float(args[0]) if len(args) == 1 else math.nan
        except ValueError:
            komi = math.nan
        if not math.isfinite(komi):
            raise GtpError("komi takes a number: komi 7.5")
        self._rebuild({"komi": komi}, self.moves, self.starting_player, self.undo_stack)  # the game goes on
        return ""

    def cmd_play(self, args: list[str]) -> str:
        if len(args) < 2:
            raise GtpError("play takes a color and a move: play b D4")
        player = parse_colour(args[0])
        move = " ".join(args[1:])  # a game may write a move in words: Connect Four's "column 4"
        text = move.lower()
        if text == "swap-pieces" and self.game_name in SWAP_PIECES_GAMES:
            starting, moves, state = self._swap_pieces(player)
            self._move_to(starting, moves, state)
            self.swap = (starting, list(moves))
            return ""
        if text == "resign":
            raise GtpError("resign is not a move; start a new game with clear_board")
        try:  # an unreadable or off-board vertex is that, whoever's turn it is
            self.game.parse_action(move, self.game.initial_state(player))
        except IllegalMoveError as error:
            raise GtpError(f"illegal move: {error}") from None
        starting, moves, state = self._turn_for(player)
        try:
            action = self.game.parse_action(move, state)
            after = self.game.next_state(state, action)
        except IllegalMoveError as error:
            raise GtpError(f"illegal move: {error}") from None
        self._move_to(starting, moves + [action], after)
        return ""

    def cmd_genmove(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GtpError("genmove takes a color: genmove b")
        player = parse_colour(args[0])
        if self.game.is_final(self.state) and pass_action(self.game) is not None:
            return "pass"  # after two passes: the controller ends the game, and a move or a pass is expected
        starting, moves, state = self._turn_for(player)
        if starting != self.starting_player:
            self.actor.reset()
        if self.past_cutoff(state):  # the controller decides when the game ends
            action = pass_action(self.game)
            self._move_to(starting, moves + [action], self.game.next_state(state, action))
            return self.game.action_to_text(action, state)
        budget = self.time.seconds_for(player, len(self.game.legal_actions(state)) // 2)
        try:
            with time_budget(self.actor, budget):
                action = self.actor.select_action(state)
        except Resignation:
            return "resign"
        if self.resign_threshold > 0:
            value = self.move_value(action)
            if value is not None and value < self.resign_threshold:
                return "resign"
        self._move_to(starting, moves + [action], self.game.next_state(state, action))
        return self.game.action_to_text(action, state)

    def move_value(self, action: Action) -> float | None:
        """What the actor's last search made of ``action``, the move it chose: the mean
        result for the mover (1 win, 0 loss), or None when it did not search."""
        mcts = getattr(self.actor, "mcts", None)  # the search keeps the chosen move's subtree as its root
        return None if mcts is None else mcts.kept_value(action)

    def cmd_undo(self, args: list[str]) -> str:
        if not self.undo_stack:
            raise GtpError("cannot undo: no move to take back")
        self.starting_player, self.moves = self.undo_stack.pop()
        self.state = self.game.state_after(self.moves, self.starting_player)
        self.actor.reset()
        return ""

    def cmd_showboard(self, args: list[str]) -> str:
        lines = [line.rstrip() for line in self.game.render(self.state).splitlines()]
        return "\n" + "\n".join(line or "." for line in lines)  # no empty line inside a response

    def cmd_final_score(self, args: list[str]) -> str:
        return score_text(self.game.score(self.state))

    def cmd_time_settings(self, args: list[str]) -> str:
        try:
            main, byo_time, byo_stones = float(args[0]), float(args[1]), int(args[2])
            if len(args) != 3 or min(main, byo_time, byo_stones) < 0 or not math.isfinite(main + byo_time):
                raise ValueError
        except (ValueError, IndexError):
            raise GtpError("time_settings takes main_time byo_yomi_time byo_yomi_stones (numbers >= 0)") from None
        self.time = TimeBudget(main, byo_time, byo_stones, set=True)
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        try:
            if len(args) != 3:
                raise ValueError
            player, seconds, stones = parse_colour(args[0]), float(args[1]), int(args[2])
            if seconds < 0 or stones < 0 or not math.isfinite(seconds):
                raise ValueError
        except ValueError:
            raise GtpError("time_left takes a color, seconds and stones: time_left b 300 0") from None
        self.time.left[player] = (seconds, stones)
        return ""

    def cmd_analyze_commands(self, args: list[str]) -> str:
        offered = []
        if getattr(self.actor, "mcts", None) is not None:
            offered.append("gfx/Visits/hexzero-visits")
        if callable(getattr(self.actor, "policy", None)):
            offered.append("gfx/Policy/hexzero-policy")
        return "\n".join(offered)

    def cmd_visits(self, args: list[str]) -> str:
        """A search from the current position (the actor's own budget, its tree kept):
        each root move's share of the visits as GoGui INFLUENCE (the most visited 1) and
        its visit count as a LABEL."""
        mcts = getattr(self.actor, "mcts", None)
        if mcts is None:
            raise GtpError(f"the player {self.actor.label} does not search")
        if self.game.is_final(self.state) or self.past_cutoff(self.state):
            raise GtpError("the game is over" if self.game.is_final(self.state) else "past the search's move cut-off: "
                           "the engine passes")
        mcts.search(self.state, getattr(self.actor, "search_games", None), getattr(self.actor, "time_limit", None))
        progress = mcts.progress(mcts.last_search_games, 0.0)
        counts, verdict = progress.visits, progress.verdict()
        return self._gfx(counts, str, f"{sum(counts.values())} visits; {'proven: ' + verdict + '; ' if verdict else ''}"
                                      f"best {self._vertex(progress.best_action)}")

    def cmd_policy(self, args: list[str]) -> str:
        """The raw network's probabilities of the legal moves (percent labels)."""
        policy = getattr(self.actor, "policy", None)
        if not callable(policy):
            raise GtpError(f"the player {self.actor.label} has no policy to show")
        if self.game.is_final(self.state):
            raise GtpError("the game is over")
        probs = policy(self.state)
        shares = {a: float(p) for a, p in enumerate(probs) if p > 0}
        return self._gfx(shares, lambda p: f"{100 * p:.0f}", "network policy")

    def _vertex(self, action: Action) -> str:
        return self.game.action_to_text(action, self.state)

    def _gfx(self, values: dict[Action, float], label: Callable[[float], str], text: str) -> str:
        top = max(values.values(), default=0) or 1
        passing = pass_action(self.game)
        board = {a: v for a, v in values.items() if a != passing}
        lines = []
        if board:
            lines.append("INFLUENCE " + " ".join(f"{self._vertex(a)} {v / top:.3f}" for a, v in board.items()))
            lines.append("LABEL " + " ".join(f"{self._vertex(a)} {label(v)}" for a, v in board.items()))
        if passing is not None and passing in values:
            text += f"; pass {label(values[passing])}"
        lines.append(f"TEXT {text}")
        return "\n".join(lines)

    def cmd_loadsgf(self, args: list[str]) -> str:
        """``loadsgf FILE [N]``: the recorded game before its move N (all of it without N),
        on the file's board size and komi; answers the colour to move."""
        sgf = sgf_module()
        if not args or len(args) > 2 or (len(args) == 2 and not args[1].isdigit()):
            raise GtpError("loadsgf takes a file and optionally a move number: loadsgf game.sgf 20")
        try:
            record = sgf.read_sgf_file(args[0], params=self.params)
        except ValueError as error:  # SgfError: unreadable, broken, another game, illegal moves
            raise GtpError(f"cannot load file: {error}") from None
        if record.game.name != self.game_name:
            raise GtpError(f"cannot load file: it is a game of {record.game.name}, not {self.game_name}")
        moves = record.moves if len(args) == 1 else record.moves[: max(int(args[1]) - 1, 0)]
        changes = {k: v for k, v in record.game.params().items() if self.params.get(k) != v}
        try:
            self._rebuild(changes, moves, record.starting_player)
        except GtpError as error:
            raise GtpError(f"cannot load file: {error}") from None
        return "" if self.game.is_final(self.state) else COLOUR_NAMES[self.game.current_player(self.state)]

    # ---- the protocol ---------------------------------------------------------------
    def handle(self, line: str) -> str | None:
        """The full response to one command line (``=id text`` or ``?id reason``, then an
        empty line), or None for a line without a command."""
        line = "".join(ch for ch in line.split("#", 1)[0] if ch in "\t\n" or ord(ch) >= 32 and ord(ch) != 127)
        words = line.replace("\t", " ").split()
        if not words:
            return None
        number = ""
        if words[0].isdigit():
            number, words = words[0], words[1:]
            if not words:
                return f"?{number} no command after the id\n\n"
        name, args = words[0], words[1:]
        command = self.commands.get(name)
        if command is None:
            return f"?{number} unknown command\n\n"
        try:
            text = command(args)
        except GtpError as error:
            return f"?{number} {error}\n\n"
        except (ValueError, IllegalMoveError) as error:  # the actor's or the game's refusal
            return f"?{number} {error}\n\n"
        return f"={number} {text}\n\n"

    def run(self, stdin: TextIO, stdout: TextIO) -> None:
        try:
            for line in stdin:
                response = self.handle(line)
                if response is None:
                    continue
                stdout.write(response)
                stdout.flush()
                if self.finished:
                    break
        finally:
            self.actor.close()


def score_of_text(text: str) -> float | None:
    """The score for Black (player 1) in GTP's result ``B+3.5``, ``W+0.5`` or ``0``; None
    for a result without a number (``B+R``: a resignation) or one that is not a result."""
    text = text.strip().upper()
    if text in ("0", "DRAW", "JIGO"):
        return 0.0
    colour, plus, number = text.partition("+")
    if colour not in ("B", "W") or not plus:
        return None
    try:
        value = float(number)
    except ValueError:
        return None
    return value if colour == "B" else -value


def sgf_module():
    """``mctsfw.sgf`` if this checkout has it (``loadsgf``), else None."""
    try:
        from hexzero.mctsfw import sgf
    except ImportError:
        return None
    return sgf if callable(getattr(sgf, "read_sgf", None)) else None


#: Go's cut-off as a controller plays: none that a game reaches (the controller ends the game)
CONTROLLER_MAX_MOVES = 1_000_000
#: seconds of the search an engine throws away before its first genmove (``warm_up``)
WARM_UP_SECONDS = 0.2
#: random moves into the game of the warm-up's second position
WARM_UP_MOVES = 12


def controller_game(game: Game) -> Game:
    """``game`` as a controller plays it: a game with a move cut-off (a ``max_moves``
    parameter: Go) without one in reach, so that the controller, not the cut-off, ends
    the game; the actor searches the game itself, its cut-off kept (past it, it passes)."""
    params = game.params()
    if "max_moves" not in params:
        return game
    return mctsfw.make_game(game.name, **{**params, "max_moves": CONTROLLER_MAX_MOVES})


def warm_up(actor: Actor, game: Game) -> None:
    """A searching actor's moves under a short clock, then forgotten: from the first
    position, and from one ``WARM_UP_MOVES`` random moves in (what a game asks only once
    stones are on the board: Gomoku's compiled threat search); so what it compiles or
    builds on first use (Go's compiled playouts, the network's batched call) is ready
    before the controller's clock runs on a genmove."""
    if getattr(actor, "mcts", None) is None or not hasattr(actor, "time_limit"):
        return
    later = game.state_after(random_opening(game, 1, WARM_UP_MOVES, np.random.default_rng(0)), 1)
    with time_budget(actor, WARM_UP_SECONDS):
        for state in (game.initial_state(), later):
            if not game.is_final(state):
                actor.select_action(state)
    actor.reset()


class time_budget:
    """Within it, a searching actor stops at ``seconds`` too (the smaller of its own
    time limit and this); without a limit, or for an actor that does not search, nothing changes."""

    def __init__(self, actor: Actor, seconds: float | None):
        self.actor, self.seconds = actor, seconds

    def __enter__(self):
        self.saved = getattr(self.actor, "time_limit", None)
        if self.seconds is not None and hasattr(self.actor, "time_limit") and hasattr(self.actor, "mcts"):
            self.actor.time_limit = self.seconds if self.saved is None else min(self.saved, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        if hasattr(self.actor, "time_limit") and hasattr(self.actor, "mcts"):
            self.actor.time_limit = self.saved


def serve(engine: GtpEngine, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
    """Speak GTP on stdin/stdout; anything else the program prints goes to stderr, so
    the controller reads nothing but responses."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        engine.run(stdin, stdout)
    finally:
        sys.stdout = saved


# ---- the client: an outside engine as an actor -----------------------------------------------
class GtpEngineError(ActorError):
    """An outside GTP engine that failed: it died, refused a command we had to send, or
    answered with something that is not a legal move. The engine is killed first."""


#: engines started by this process, killed at exit whatever happened
_LIVE: "weakref.WeakSet[EngineProcess]" = weakref.WeakSet()


def _kill_live_engines() -> None:
    for process in list(_LIVE):
        process.kill()


atexit.register(_kill_live_engines)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:
        pass


def find_program(name: str) -> str | None:
    """``name`` on PATH, else in /usr/games (where Debian puts gnugo)."""
    return shutil.which(name) or shutil.which(name, path="/usr/games:/usr/local/games")


def find_built_program(variable: str, name: str) -> str | None:
    """An outside program built from source (MoHex, Rapfi): the path the environment
    variable ``variable`` names, if it does (None when that is not an executable), else
    ``name`` on PATH; None if neither."""
    named = os.environ.get(variable)
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which(name)


def check_game(spec: str, title: str, game: Game, plays: str) -> None:
    """``ActorError`` where the outside engine of player ``spec`` (``title``) does not play ``game``."""
    if game.name != plays:
        raise ActorError(f"{spec}: {title} plays {plays.capitalize()}, not {game.name}")


def built_program(spec: str, title: str, variable: str, name: str, script: str) -> str:
    """The program of player ``spec``, an outside engine built from source by ``script``
    (``find_built_program``), or ``ActorError`` saying how to get it."""
    program = find_built_program(variable, name)
    if program is None:
        raise ActorError(f"{spec}: {title} not found: build it with {script} and put it on PATH or name it in "
                         f"${variable}")
    return program


def budget_of_spec(kind: str, argument: str, what: str, example: int) -> int:
    """The whole number >= 1 of a spec ``KIND:N`` (an outside engine's budget a move), or
    ``ActorError`` saying what N is."""
    if not argument.strip().isdigit() or int(argument) < 1:
        raise ActorError(f"{kind}:{argument}: give the {what} a move, a whole number >= 1 ({kind}:{example})")
    return int(argument)


def gnugo_spec(level: int, program: str = "gnugo") -> str:
    """The player spec of GNU Go as this project's Go opponent and referee: area (Chinese)
    rules, dead stones captured before it passes (so its games end with the board as it
    counts it) and positional superko, as the Go rules here."""
    return f"gtp:{program} --mode gtp --level {level} --chinese-rules --capture-all-dead --positional-superko"


class EngineProcess:
    """An outside program spoken to in lines on its stdin and stdout (a GTP engine, a
    Gomocup brain): ``write(line)``, ``next_line(command)``; a death or silence beyond
    ``timeout`` raises the protocol's ``error`` (the process killed first). Its stderr is
    kept for the message; it dies with us (``_LIVE``, ``PR_SET_PDEATHSIG``)."""

    title = "engine"  # how messages name it
    error: type[ActorError] = ActorError
    quit_command = "quit"

    def __init__(self, argv: list[str], timeout: float = 600.0, spec: str = "gtp", example: str = "",
                 cwd: str | None = None):
        if not argv:
            raise ActorError(f"{spec}: give the engine's command, e.g. {spec}:{example}")
        program = find_program(argv[0]) if os.sep not in argv[0] else argv[0]
        if program is None or not os.access(program, os.X_OK):
            raise ActorError(f"{spec}: cannot find the engine program {argv[0]!r} (on PATH or in /usr/games)")
        self.argv = [program, *argv[1:]]
        self.timeout = timeout
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            cwd=cwd, preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        _LIVE.add(self)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.errors: collections.deque[str] = collections.deque(maxlen=20)
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.errors.append), daemon=True).start()

    @staticmethod
    def _read(stream, put) -> None:
        try:
            for line in stream:
                put(line)
        except (OSError, ValueError):
            pass
        put(None)

    def _failure(self, what: str) -> ActorError:
        self.kill()
        tail = "".join(line for line in self.errors if line).strip().splitlines()[-3:]
        return self.error(f"{self.title} {shlex.join(self.argv)}: {what}" + (f" (its stderr: {' | '.join(tail)})" if tail else ""))

    def write(self, command: str) -> None:
        if self.process.poll() is not None:
            raise self._failure(f"it has exited (status {self.process.returncode}) before {command!r}")
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._failure(f"it stopped reading before {command!r}") from None

    def next_line(self, command: str) -> str:
        """The next line of its answer to ``command``, without the line's end."""
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._failure(f"no answer to {command!r} in {self.timeout:g} s") from None
        if line is None:
            raise self._failure(f"it exited while answering {command!r}")
        return line.rstrip("\r\n")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except Exception:
                pass
        _LIVE.discard(self)

    def close(self) -> None:
        """``quit`` (the protocol's goodbye), a moment to leave, then the process is killed if still there."""
        if self.process.poll() is None:
            try:
                self.process.stdin.write(self.quit_command + "\n")
                self.process.stdin.flush()
                self.process.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()


class GtpProcess(EngineProcess):
    """An outside GTP engine process: ``send(command) -> response text``, raising
    GtpEngineError for a failure (``? reason``), a death or silence beyond ``timeout``."""

    title = "GTP engine"
    error = GtpEngineError

    def __init__(self, argv: list[str], timeout: float = 600.0):
        super().__init__(argv, timeout, "gtp", '"gnugo --mode gtp --level 1"')

    def send(self, command: str) -> str:
        self.write(command)
        lines: list[str] = []
        while True:
            line = self.next_line(command)
            if not lines and not line.strip():
                continue  # blank lines before a response
            if lines and not line.strip():
                break
            lines.append(line)
        head = re.match(r"([=?])\d*\s?(.*)", lines[0])
        if head is None:
            raise self._failure(f"answered {lines[0]!r} to {command!r}, not a GTP response")
        text = "\n".join([head.group(2), *lines[1:]]).strip()
        if head.group(1) == "?":
            raise GtpCommandRefused(command, text)
        return text


class GtpCommandRefused(GtpEngineError):
    """The engine answered ``? reason`` to a command."""

    def __init__(self, command: str, reason: str):
        super().__init__(f"the GTP engine refused {command!r}: {reason}")
        self.command, self.reason = command, reason

    def __reduce__(self):  # raised in a worker process, it travels back to the trainer
        return type(self), (self.command, self.reason)


class GtpActor(FollowingActor):
    """An outside GTP engine as a player (spec ``gtp:COMMAND``). It sends the moves the
    engine has not seen (``play``) before each ``genmove``. ``resign`` raises
    ``Resignation``. With ``seed`` given, an engine that knows ``set_random_seed`` (GNU Go's
    extension) is seeded with it once, when it starts: GNU Go otherwise draws its seed from
    the clock, and its games against a seeded player would not replay."""

    kind = "gtp"
    name = "gtp"
    description = 'an outside GTP engine: gtp:"gnugo --mode gtp --level 1"'

    @classmethod
    def from_spec(cls, argument: str, game: Game, **params: Any) -> "GtpActor":
        """``make_actor("gtp:COMMAND", game, seed=S)``: search settings are the engine's own business and ignored."""
        return cls(game, argument, seed=params.get("seed"))

    def __init__(self, game: Game, command: str | list[str], timeout: float = 600.0, seed: int | None = None):
        super().__init__(game)
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.command = shlex.join(argv)
        self.engine = GtpProcess(argv, timeout)
        try:
            version = self.engine.send("protocol_version")
            if version.strip() != PROTOCOL_VERSION:
                raise self.engine._failure(f"speaks GTP version {version!r}, not 2")
            known = set(self.engine.send("list_commands").split())
            missing = {"boardsize", "clear_board", "play", "genmove"} - known
            if missing:
                raise self.engine._failure(f"lacks the commands {', '.join(sorted(missing))}")
            self.known = known
            if seed is not None and "set_random_seed" in known:
                self.engine.send(f"set_random_seed {seed % 2**31}")
            name = self.engine.send("name") if "name" in known else argv[0]
            engine_version_text = self.engine.send("version") if "version" in known else ""
        except GtpEngineError:
            self.engine.kill()
            raise
        self.engine_name = f"{name} {engine_version_text}".strip()
        try:
            self.reset()
        except GtpEngineError:
            self.engine.kill()
            raise

    def default_label(self) -> str:
        return f"gtp:{self.engine_name}"

    def new_game(self) -> None:
        """The board's size, an empty board, the komi."""
        params = self.game.params()
        if "size" in params:
            self.engine.send(f"boardsize {params['size']}")
        self.engine.send("clear_board")
        if "komi" in params and "komi" in self.known:
            self.engine.send(f"komi {params['komi']:g}")

    def play_moves(self, moves: list[tuple[State, Action]]) -> None:
        """The engine is told each move (``play``)."""
        game = self.game
        try:
            for before, action in moves:
                self.engine.send(f"play {COLOUR_NAMES[game.current_player(before)]} {game.action_to_text(action, before)}")
        except GtpEngineError:
            self.engine.kill()
            raise

    def select_action(self, state: State) -> Action:
        game = self.game
        self.sync(state)
        try:
            answer = self.genmove(COLOUR_NAMES[game.current_player(state)]).strip()
        except GtpEngineError:
            self.engine.kill()
            raise
        if answer.lower() == "resign":
            raise Resignation(f"{self.label} resigns")
        try:
            action = game.parse_action(answer, state)
            after = game.next_state(state, action)
        except IllegalMoveError as error:
            raise self.engine._failure(f"answered genmove with {answer!r}: {error}") from None
        self.state = after
        return action

    def genmove(self, colour: str) -> str:
        """The engine's answer to ``genmove COLOUR`` (an engine's quirks are handled here by a subclass)."""
        return self.engine.send(f"genmove {colour}")

    def send(self, command: str) -> str:
        """Any other command to the engine (``final_score``...): its answer, or GtpEngineError."""
        return self.engine.send(command)

    def judge(self, state: State) -> float | None:
        """The engine's ``final_score`` of the finished position ``state`` (told the moves
        it has not seen first), for player 1 (Black); None when the engine has no
        ``final_score`` or answers without a number."""
        if "final_score" not in self.known:
            return None
        self.sync(state)
        try:
            return score_of_text(self.engine.send("final_score"))
        except GtpCommandRefused:  # the engine cannot score this position
            return None

    def close(self) -> None:
        self.engine.close()


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [GtpActor]
