"""The Gomocup brain protocol (Piskvork's "new protocol"): our agents as Gomoku brains.

``cli.py pbrain --game gomoku --size 15 --p PLAYER`` reads the manager's commands on stdin
and answers on stdout, so Gomoku managers (Piskvork, Yixin-Board, the Gomocup tournament
manager, liskvork) can run any agent ``cli.py play`` seats but a person. Coordinates are
``x,y``, numbered from 0: ``x`` the column from the left, ``y`` the row from the top, so
``x,y`` is the action ``y * size + x`` (the Gomoku convention of docs/design.md). Black opens.

- ``START N`` (and ``RECTSTART N,N``): a new game on an N x N board, answered ``OK``, or
  ``ERROR reason`` when the player cannot play there (a network trained for another size;
  a rectangle); ``RESTART`` clears the board of the size in use.
- ``BEGIN``: the brain opens on the empty board; ``TURN x,y``: the opponent played there,
  the brain answers with its move; ``BOARD``, then lines ``x,y,field`` (1 the brain's
  stone, 2 the opponent's; Gomocup sends them in the order they were played), then
  ``DONE``: the position is set and the brain, whose turn it is, moves. Equal counts make
  the brain Black; one stone more of the opponent's makes it White.
- ``TAKEBACK x,y``: the last stone, which must be at x,y, is taken back (``OK``).
- ``INFO key value``: ``timeout_turn`` (ms a move, 0: as fast as possible),
  ``timeout_match`` (ms a game, 0: no limit) and ``time_left`` (ms left of the game) budget
  the search (``seconds_for``); ``rule`` 0 is freestyle (five or more win), 1 exactly five
  (``games.gomoku.exactly_five``), and renju (4), caro (8) and the continuous game (2) are
  answered ``ERROR`` (the rules stay); ``max_memory``, ``game_type``, ``evaluate`` and
  ``folder`` are read and not needed, other keys ignored. INFO is otherwise not answered.
- ``ABOUT``: ``name="hexzero", version="...", author="hexzero developers", ...``.
- ``END``: the brain exits at once, without an answer.

Anything malformed or illegal is answered ``ERROR reason`` on one line and changes
nothing; an unknown command ``UNKNOWN reason``. A searching agent stops at its own budget
or at the time the manager gives it, whichever comes first.

**The client** (``PbrainActor``, player spec ``pbrain:COMMAND``) runs an outside brain as
a player, as a manager does: ``START`` (and ``INFO rule 1`` for exactly five), then
``BEGIN`` for the first move of a game, ``TURN x,y`` with the opponent's last move, or
``RESTART`` and ``BOARD`` with the whole position when more than one move is new. Its
``MESSAGE``, ``DEBUG`` and ``SUGGEST`` lines are skipped; an ``ERROR``, an illegal move,
a death or silence raises ``PbrainEngineError`` with the brain killed.
"""

from __future__ import annotations

import shlex
from typing import Any, Callable, TextIO

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor, ActorError, FollowingActor, Resignation
from hexzero.mctsfw.game import Action, Game, IllegalMoveError, State
from hexzero.plugins.gtp import EngineProcess, TimeBudget, engine_version, time_budget, warm_up

#: the INFO rule bits a brain may be asked to play, and ours: 1 = exactly five
EXACTLY_FIVE, CONTINUOUS, RENJU, CARO = 1, 2, 4, 8
#: INFO keys that are read and need nothing from us
INFO_IGNORED = {"max_memory", "game_type", "evaluate", "folder"}


class PbrainError(Exception):
    """A command refused: answered ``ERROR reason``, the position unchanged."""


def seconds_for(timeout_turn: int | None, timeout_match: int | None, time_left: int | None,
                moves_left: int) -> float | None:
    """The seconds a brain may think on this move, from the manager's INFO (milliseconds);
    None when it gave no limit. A move gets the turn's limit and no more than the game's
    time left shared over the moves that may be left (half the empty points, at least
    ``TimeBudget.MIN_MOVES_LEFT``), of that ``TimeBudget.SAFETY``, less ``TimeBudget.LAG``."""
    limits = []
    if timeout_turn is not None:
        limits.append(timeout_turn / 1000)
    if timeout_match and time_left is not None:
        limits.append(time_left / 1000 / max(moves_left, TimeBudget.MIN_MOVES_LEFT))
    if not limits:
        return None
    return max(TimeBudget.SHORTEST, min(limits) * TimeBudget.SAFETY - TimeBudget.LAG)


def point_text(action: Action, size: int) -> str:
    """The protocol's ``x,y`` of an action: the column from the left, the row from the top."""
    return f"{action % size},{action // size}"


def parse_point(text: str, size: int) -> Action:
    """The action at ``x,y`` on a ``size`` board; IllegalMoveError saying why otherwise."""
    parts = text.replace(" ", "").split(",")
    if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
        raise IllegalMoveError(f"expected coordinates x,y, not {text.strip()!r}")
    x, y = map(int, parts)
    if not (0 <= x < size and 0 <= y < size):
        raise IllegalMoveError(f"{x},{y} is off the {size}x{size} board")
    return y * size + x


class PbrainEngine:
    """Our actor behind the brain protocol: ``handle(line)`` gives the answer lines (none
    for INFO, END and the lines of a BOARD), ``run(stdin, stdout)`` serves until ``END``
    or the end of input. ``make_player(game)`` builds the actor for a game (again after
    ``START`` with another size or an INFO rule that changes the game)."""

    def __init__(self, game_name: str, params: dict[str, Any], make_player: Callable[[Game], Actor]):
        self.game_name = game_name
        self.params = dict(params)
        self.make_player = make_player
        self.actor: Actor | None = None
        self.timeout_turn: int | None = None
        self.timeout_match: int | None = None
        self.time_left: int | None = None
        self.board_lines: list[tuple[int, int]] | None = None  # between BOARD and DONE: (action, field)
        self.finished = False
        self.game = mctsfw.make_game(game_name, **self.params)
        self.actor = make_player(self.game)
        warm_up(self.actor, self.game)  # before the manager's clock runs
        self.clear()
        self.commands: dict[str, Callable[[str], list[str]]] = {
            "START": self.cmd_start, "RECTSTART": self.cmd_rectstart, "RESTART": self.cmd_restart,
            "BEGIN": self.cmd_begin, "TURN": self.cmd_turn, "BOARD": self.cmd_board, "TAKEBACK": self.cmd_takeback,
            "INFO": self.cmd_info, "ABOUT": self.cmd_about, "END": self.cmd_end,
        }

    # ---- the game ---------------------------------------------------------------------
    def _rebuild(self, changes: dict[str, Any]) -> None:
        """The game with changed parameters and a new actor for it, its board empty;
        refused with the reason, and then nothing has changed."""
        params = {**self.params, **changes}
        if params == self.params:
            return self.clear()
        try:
            game = mctsfw.make_game(self.game_name, **params)
        except ValueError as error:
            raise PbrainError(str(error)) from None
        try:
            actor = self.make_player(game)
        except ValueError as error:  # a network trained for another board
            raise PbrainError(str(error)) from None
        self.actor.close()
        self.actor, self.game, self.params = actor, game, params
        warm_up(self.actor, self.game)
        self.clear()

    def clear(self) -> None:
        self.moves: list[Action] = []
        self.state: State = self.game.initial_state(1)
        self.actor.reset()

    def point(self, text: str) -> Action:
        try:
            return parse_point(text, self.game.size)
        except IllegalMoveError as error:
            raise PbrainError(str(error)) from None

    def text(self, action: Action) -> str:
        return point_text(action, self.game.size)

    def _after(self, state: State, action: Action) -> State:
        if self.game.is_final(state):
            raise PbrainError("the game is over")
        if not self.game.legal_mask(state)[action]:  # said in the protocol's x,y, not the game's h8
            raise PbrainError(f"illegal move {self.text(action)}: that point is taken")
        return self.game.next_state(state, action)

    def _reply(self) -> list[str]:
        """The brain's move in the present position, played."""
        if self.game.is_final(self.state):
            raise PbrainError("the game is over")
        empty = len(self.game.legal_actions(self.state))
        budget = seconds_for(self.timeout_turn, self.timeout_match, self.time_left, (empty + 1) // 2)
        try:
            with time_budget(self.actor, budget):
                action = self.actor.select_action(self.state)
        except Resignation:  # the protocol has no resignation: the brain plays on
            action = self.game.legal_actions(self.state)[0]
        self.state = self._after(self.state, action)
        self.moves.append(action)
        return [self.text(action)]

    # ---- commands ---------------------------------------------------------------------
    def cmd_start(self, args: str) -> list[str]:
        if not args.strip().isdigit():
            raise PbrainError("START takes the board size: START 15" + (f", not START {args.strip()}" if args.strip() else ""))
        self._rebuild({"size": int(args)})
        return ["OK"]

    def cmd_rectstart(self, args: str) -> list[str]:
        parts = args.replace(" ", "").split(",")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise PbrainError("RECTSTART takes width,height: RECTSTART 15,15")
        if parts[0] != parts[1]:
            raise PbrainError(f"only square boards: {parts[0]}x{parts[1]}")
        return self.cmd_start(parts[0])

    def cmd_restart(self, args: str) -> list[str]:
        self.clear()
        return ["OK"]

    def cmd_begin(self, args: str) -> list[str]:
        if self.moves:
            raise PbrainError("BEGIN opens an empty board: send RESTART first")
        return self._reply()

    def cmd_turn(self, args: str) -> list[str]:
        action = self.point(args)
        after = self._after(self.state, action)
        if self.game.is_final(after):
            raise PbrainError(f"{self.text(action)} ends the game: nothing to answer")
        before = (self.moves, self.state)
        self.moves, self.state = self.moves + [action], after
        try:
            return self._reply()
        except BaseException:  # the opponent's move stands only with our answer
            self.moves, self.state = before
            raise

    def cmd_board(self, args: str) -> list[str]:
        self.board_lines = []
        return []

    def _board_line(self, line: str) -> list[str]:
        """A line between BOARD and DONE; DONE sets the position and asks for a move."""
        if line.strip().upper() != "DONE":
            parts = line.replace(" ", "").split(",")
            if len(parts) != 3 or parts[2] not in ("1", "2", "3"):
                self.board_lines = None
                raise PbrainError(f"a BOARD line is x,y,field (field 1 own, 2 opponent's), not {line.strip()!r}")
            if parts[2] == "3":
                self.board_lines = None
                raise PbrainError("field 3: the continuous game is not supported")
            try:
                action = self.point(",".join(parts[:2]))
            except PbrainError:
                self.board_lines = None
                raise
            self.board_lines.append((action, int(parts[2])))
            return []
        lines, self.board_lines = self.board_lines, None
        own = [a for a, f in lines if f == 1]
        theirs = [a for a, f in lines if f == 2]
        if len(own) == len(theirs):
            black, white = own, theirs
        elif len(theirs) == len(own) + 1:
            black, white = theirs, own
        else:
            raise PbrainError(f"the brain cannot be to move with {len(own)} stones of its own and "
                              f"{len(theirs)} of the opponent's")
        moves = [m for pair in zip(black, white + [None]) for m in pair if m is not None]
        try:
            state = self.game.state_after(moves, 1)
        except (IllegalMoveError, ValueError) as error:
            raise PbrainError(f"not a position of this game: {error}") from None
        if self.game.is_final(state):
            raise PbrainError("the game is over")
        before = (self.moves, self.state)
        self.actor.reset()
        self.moves, self.state = moves, state
        try:
            return self._reply()
        except BaseException:
            self.moves, self.state = before
            raise

    def cmd_takeback(self, args: str) -> list[str]:
        action = self.point(args)
        if not self.moves or self.moves[-1] != action:
            raise PbrainError(f"TAKEBACK {args.strip()}: the last stone is "
                              + (self.text(self.moves[-1]) if self.moves else "none: the board is empty"))
        self.moves = self.moves[:-1]
        self.state = self.game.state_after(self.moves, 1)
        self.actor.reset()
        return ["OK"]

    def cmd_info(self, args: str) -> list[str]:
        key, _, value = args.strip().partition(" ")
        key, value = key.lower(), value.strip()
        if key in INFO_IGNORED:
            return []
        if key not in ("timeout_turn", "timeout_match", "time_left", "rule"):
            return []  # the protocol: a brain ignores the INFO it does not know
        if not value.lstrip("-").isdigit() or int(value) < 0:
            raise PbrainError(f"INFO {key} takes a whole number >= 0, not {value!r}")
        number = int(value)
        if key == "rule":
            unsupported = [name for bit, name in ((CONTINUOUS, "the continuous game"), (RENJU, "renju"), (CARO, "caro"))
                           if number & bit]
            if unsupported:
                raise PbrainError(f"rule {number}: {', '.join(unsupported)} is not supported; the rules stay "
                                  + ("exactly five" if self.game.exactly_five else "freestyle"))
            exactly = bool(number & EXACTLY_FIVE)
            if exactly != self.game.exactly_five:
                if self.moves:
                    raise PbrainError("the rule cannot change during a game")
                self._rebuild({"exactly_five": exactly})
            return []
        setattr(self, key, number)
        return []

    def cmd_about(self, args: str) -> list[str]:
        return [f'name="hexzero", version="{engine_version()}", author="hexzero developers", '
                f'country="", www="", email=""']

    def cmd_end(self, args: str) -> list[str]:
        self.finished = True
        return []

    # ---- the protocol -----------------------------------------------------------------
    def handle(self, line: str) -> list[str]:
        """The answer lines to one line from the manager."""
        line = "".join(ch for ch in line if ord(ch) >= 32 and ord(ch) != 127 or ch == "\t").strip()
        if not line:
            return []
        try:
            if self.board_lines is not None:
                return self._board_line(line)
            name, _, args = line.partition(" ")
            command = self.commands.get(name.upper())
            if command is None:
                return [f"UNKNOWN {name} is not a command of this brain"]
            return command(args)
        except (PbrainError, ValueError, IllegalMoveError) as error:  # ours, the actor's or the game's refusal
            return ["ERROR " + " ".join(str(error).split())]  # one line, whatever the reason's text

    def run(self, stdin: TextIO, stdout: TextIO) -> None:
        try:
            for line in stdin:
                for answer in self.handle(line):
                    stdout.write(answer + "\n")
                stdout.flush()
                if self.finished:
                    break
        finally:
            self.actor.close()


# ---- the client: an outside brain as an actor ------------------------------------------------
class PbrainEngineError(ActorError):
    """An outside Gomocup brain that failed: it died, answered ERROR to a command we had
    to send, or answered with something that is not a legal move. It is killed first."""


class PbrainProcess(EngineProcess):
    """An outside brain process: ``send(command, answer=True) -> its answer line``."""

    title = "Gomocup brain"
    error = PbrainEngineError
    quit_command = "END"

    def __init__(self, argv: list[str], timeout: float = 600.0, cwd: str | None = None):
        super().__init__(argv, timeout, "pbrain", '"pbrain-embryo"', cwd)

    def send(self, command: str, answer: bool = True) -> str | None:
        """Send a command (and its further lines); the first line of the answer that is not
        a MESSAGE, DEBUG or SUGGEST, or None when the protocol has none (``answer=False``)."""
        self.write(command)
        if not answer:
            return None
        while True:
            line = self.next_line(command.splitlines()[0]).strip()
            word = line.split(" ", 1)[0].upper()
            if not line or word in ("MESSAGE", "DEBUG", "SUGGEST"):
                continue
            if word in ("ERROR", "UNKNOWN"):
                raise self._failure(f"answered {line!r} to {command.splitlines()[0]!r}")
            return line


class PbrainActor(FollowingActor):
    """An outside Gomocup brain as a player (spec ``pbrain:COMMAND``), Gomoku only."""

    kind = "pbrain"
    name = "pbrain"
    description = 'an outside Gomocup brain: pbrain:"COMMAND" (Gomoku)'

    @classmethod
    def from_spec(cls, argument: str, game: Game, **params: Any) -> "PbrainActor":
        """``make_actor("pbrain:COMMAND", game, ...)``: a ``time_limit`` becomes the brain's
        ``timeout_turn``; other search settings are the brain's own business."""
        return cls(game, argument, time_limit=params.get("time_limit"))

    def __init__(self, game: Game, command: str | list[str], time_limit: float | None = None,
                 timeout: float = 600.0, cwd: str | None = None):
        if game.name != "gomoku":
            raise ActorError(f"pbrain: a Gomocup brain plays Gomoku, not {game.name}")
        super().__init__(game)
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.command = shlex.join(argv)
        self.time_limit = time_limit
        self.brain = PbrainProcess(argv, timeout, cwd)  # cwd: where the brain starts (None: here)
        self.history: list[Action] = []  # the moves the brain has seen, from the empty board
        try:
            about = self.brain.send("ABOUT")
            self.reset()
        except PbrainEngineError:
            self.brain.kill()
            raise
        fields = dict(part.strip().split("=", 1) for part in about.split(",") if "=" in part)
        self.brain_name = " ".join(fields.get(k, "").strip('"') for k in ("name", "version")).strip() or argv[0]

    def default_label(self) -> str:
        return f"pbrain:{self.brain_name}"

    def new_game(self) -> None:
        """A new game: START with the board's size, the rule and the time a move."""
        self.history = []
        self.brain.send(f"START {self.game.size}")
        self.brain.send(f"INFO rule {int(bool(self.game.exactly_five))}", answer=False)
        if self.time_limit:
            self.brain.send(f"INFO timeout_turn {max(int(self.time_limit * 1000), 1)}", answer=False)
        self.told = False  # whether the brain has had a command of this game that places stones

    def play_moves(self, moves: list[tuple[State, Action]]) -> None:
        """Moves are told with the next request for a move (TURN or BOARD): kept until then."""
        self.history.extend(action for _, action in moves)

    def select_action(self, state: State) -> Action:
        game = self.game
        new = self.moves_to(state)
        self.history.extend(action for _, action in new)
        try:
            if not self.history:
                answer = self.brain.send("BEGIN")
            elif len(new) == 1 and self.told:
                answer = self.brain.send(f"TURN {point_text(new[0][1], self.game.size)}")
            else:  # the whole position: its stones in the order played, 1 the brain's, 2 the opponent's
                last = len(self.history) - 1  # the opponent's stone, the ones before alternating
                lines = [f"{point_text(a, self.game.size)},{2 if (last - i) % 2 == 0 else 1}"
                         for i, a in enumerate(self.history)]
                if self.told:
                    self.brain.send("RESTART")
                answer = self.brain.send("\n".join(["BOARD", *lines, "DONE"]))
        except PbrainEngineError:
            self.brain.kill()
            raise
        self.told = True
        try:
            action = parse_point(answer, game.size)
        except IllegalMoveError as error:
            raise self.brain._failure(f"answered {answer!r}, not x,y or off the board: {error}") from None
        try:
            after = game.next_state(state, action)
        except IllegalMoveError as error:
            raise self.brain._failure(f"answered {answer!r}: {error}") from None
        self.history.append(action)
        self.state = after
        return action

    def close(self) -> None:
        self.brain.close()


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [PbrainActor]
