"""The game protocol: the only way the engine, training and tournaments talk to a game.

A game plugin subclasses :class:`Game` (one module per game, see ``games/``). States
are immutable, hashable values; the game object itself holds only the rules'
parameters (board size, piles ...), so one game object serves any number of states.
"""

from __future__ import annotations

import contextlib
import importlib
import random
import re
from typing import Any, Callable, Hashable, Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from hexzero.mctsfw.schema import Parameters

State = Hashable
Action = int


class IllegalMoveError(ValueError):
    """An action that is not legal in the given state (the state is left unchanged)."""


class Forcing(NamedTuple):
    """A forcing situation (``Game.forcing_actions``): the moves that must be considered."""

    actions: tuple[Action, ...]  # never empty
    #: True: each of ``actions`` wins at once; False: they are the moves that stop the
    #: opponent's immediate win (each cell the opponent would win on: with two or more,
    #: none stops them all, and the position is lost)
    wins: bool


#: ``compiled_module``'s answers: a module, or None where it could not be imported
_COMPILED: dict[str, Any] = {}


def compiled_module(name: str) -> Any:
    """A game's compiled kernels (a module of numba functions, ``hexzero.games.go_playout``),
    imported at first use (numba costs a command that never plays that game); None where it
    cannot be (numba missing): the game then works in Python."""
    if name not in _COMPILED:
        try:
            _COMPILED[name] = importlib.import_module(name)
        except ImportError:
            _COMPILED[name] = None
    return _COMPILED[name]


@contextlib.contextmanager
def without_compiled(name: str) -> Iterator[None]:
    """Within: ``compiled_module(name)`` is None, as without numba: the game's Python
    reference answers, for the tests that compare the two and the benchmarks that time them."""
    before = compiled_module(name)
    _COMPILED[name] = None
    try:
        yield
    finally:
        _COMPILED[name] = before


class KeptAnswers(dict):
    """A game's answers for the latest positions a search asks about, by key: emptied when
    ``limit`` are kept (no order kept, no eviction a call). A search asks a game twice
    about a leaf (the priors' mask, the moves), or about the same stones at sibling nodes
    (the threats of the player who did not move), and a game keeps the answer here."""

    def __init__(self, limit: int = 4096):
        super().__init__()
        self.limit = limit

    def keep(self, key: Hashable, answer: Any) -> Any:
        """``answer`` kept for ``key``, and returned."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = answer
        return answer

    def keep_all(self, keys: Sequence[Hashable], answers: Iterable[Any]) -> None:
        """Each of ``answers`` kept for its key (the answers for a batch of positions)."""
        if len(self) + len(keys) > self.limit:
            self.clear()
        self.update(zip(keys, answers))


class EmptyCells:
    """The empty cells of a bitboard game's positions (a set bit: a stone), for its search:
    the masks of a batch unpacked in one call, and each position's moves (its empty cells
    as actions, an intp array not to be written to) kept for the latest stone sets, as a
    search lists a leaf's moves after its evaluator masked its priors. ``bit_of_action``:
    the bit of each action where it is not the action's own number (a board with a guard
    column); the boards of Hex and Gomoku."""

    def __init__(self, full: int, num_actions: int, bit_of_action: np.ndarray | None = None):
        self.full = full  # every cell's bit
        self.num_actions = num_actions
        self.bit_of_action = bit_of_action
        self.nbytes = (full.bit_length() + 7) // 8
        self.kept = KeptAnswers()  # stones -> moves
        self.actions = self.row_starts = np.empty(0, dtype=np.intp)  # ``masks``' tables, made for the batch size

    def masks(self, stone_sets: Sequence[int]) -> np.ndarray:
        """The legal-move masks (float32, one row a set of stones: 1 at each empty cell in
        action order), unpacked at once; each row's moves kept."""
        full, nbytes, count, n = self.full, self.nbytes, len(stone_sets), self.num_actions
        empty = np.frombuffer(b"".join((full & ~s).to_bytes(nbytes, "little") for s in stone_sets), dtype=np.uint8)
        if self.bit_of_action is None:
            cells = np.unpackbits(empty.reshape(count, nbytes), axis=1, count=n, bitorder="little")
        else:
            cells = np.unpackbits(empty.reshape(count, nbytes), axis=1, bitorder="little")[:, self.bit_of_action]
        if len(self.actions) < count * n:  # the action at each place of a batch's rows, for the largest batch yet
            self.actions = np.tile(np.arange(n), count)
            self.row_starts = np.arange(0, (count + 1) * n, n)
        places = cells.view(bool).reshape(-1).nonzero()[0]  # (numpy lists a flat boolean array's fastest)
        actions = self.actions.take(places)
        ends = places.searchsorted(self.row_starts[1:count + 1]).tolist()
        self.kept.keep_all(stone_sets, [actions[a:b] for a, b in zip([0] + ends, ends)])
        return cells.astype(np.float32)

    def moves(self, stones: int) -> np.ndarray:
        """The empty cells of the board with ``stones`` as actions (intp, increasing)."""
        moves = self.kept.get(stones)
        if moves is None:
            moves = self.kept.keep(stones, self.cells(self.full & ~stones).nonzero()[0])
        return moves

    def cells(self, bitboard: int) -> np.ndarray:
        """The cells of a bitboard as 0/1 uint8 in action order."""
        bits = np.unpackbits(np.frombuffer(bitboard.to_bytes(self.nbytes, "little"), dtype=np.uint8), bitorder="little")
        return bits[: self.num_actions] if self.bit_of_action is None else bits[self.bit_of_action]


class Game:
    """Base class of every game plugin.

    Subclasses set ``name`` and ``num_actions`` and implement the abstract methods.
    The methods with a body are defaults that a game may override for speed
    (``playout``) or for people (``parse_action``, ``action_to_text``).

    A game object serves one thread at a time: it may keep caches (Go's legal moves).
    Code that uses a game on two threads gives each its own copy (``copy.deepcopy``), as the
    browser board does while its agent thinks.
    """

    name: str = ""
    num_actions: int = 0
    #: one line for ``cli.py plugins`` and the error listing of available games
    description: str = ""
    #: how a person types a move, shown by ``cli.py play``
    move_help: str = "the action number"

    #: the constructor's parameters (the ``[games.<name>]`` table), each declared once
    parameters: Parameters = Parameters()

    #: the SGF game number (``GM``: 1 Go, 11 Hex, 4 Gomoku); None: no SGF for this game
    #: (``mctsfw.sgf`` writes and reads records of games that have one)
    sgf_game: int | None = None
    #: the action that passes (Go: ``size*size``); None: a game without passes
    pass_action: int | None = None
    #: the tree policies' parameters this game plays best with, as measured
    #: (``benchmarks/exploration.py``): ``{"uct": {"c": 0.25}}``. They stand in for the
    #: policy's own defaults; what a config file, ``--set`` or a caller gives wins.
    tree_policy_defaults: dict[str, dict[str, Any]] = {}
    #: how many uniformly random legal moves (never a pass) begin each pair of games of a
    #: match between players that would otherwise replay one game (``match_opening``); 0:
    #: none, the empty board is the test (NIM, Connect Four)
    match_opening_moves: int = 0
    #: what those openings are, for a match's report ("3 balanced stones near the centre")
    match_opening_kind: str = "random legal moves"
    #: the nets' parameters this game trains best with, as measured: ``{"anet":
    #: {"conv_layers": [16, 16, 16], ...}}``. They stand in for the net's own defaults in a
    #: config (what a config file or ``--set`` gives wins); a net built in Python keeps its own.
    net_defaults: dict[str, dict[str, Any]] = {}

    # ---- parameters -------------------------------------------------------------
    @classmethod
    def param_problems(cls, params: dict[str, Any]) -> list[str]:
        """Every problem with these constructor parameters, as 'key: reason' lines: unknown
        names and values the declared ``parameters`` refuse (override to add rules across them)."""
        return cls.parameters.problems(cls.name, params)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """Raise ValueError listing every problem with these constructor parameters."""
        problems = cls.param_problems(params)
        if problems:
            raise ValueError("; ".join(problems))

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild this game with ``make_game(name, **params)``."""
        return {}

    # ---- the rules ----------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> State:
        raise NotImplementedError

    def current_player(self, state: State) -> int:
        raise NotImplementedError

    def legal_actions(self, state: State) -> list[Action]:
        raise NotImplementedError

    def next_state(self, state: State, action: Action) -> State:
        """The state after ``action``; raises IllegalMoveError for an illegal action."""
        raise NotImplementedError

    def is_final(self, state: State) -> bool:
        raise NotImplementedError

    def winner(self, state: State) -> int | None:
        """1 or 2 for a decided game, None while it runs or for a draw."""
        raise NotImplementedError

    def search_actions(self, state: State) -> list[Action]:
        """The moves a search considers in ``state``: the legal ones, less any that no
        sensible player makes there (Go: no pass while the opponent has not passed and a
        move other than filling one's own eye remains). Players that search choose among
        these; the rules (``legal_actions``) are unchanged."""
        return self.legal_actions(state)

    def search_array(self, state: State) -> np.ndarray:
        """``search_actions`` as a 1-D array of ``np.intp``, for the search to order a new
        leaf's moves by prior with numpy. A game that makes its moves with numpy or a
        compiled kernel gives the array itself (Hex and Gomoku with numpy, Go from its kernel: no
        list made and read back)."""
        actions = self.search_actions(state)
        return np.fromiter(actions, np.intp, len(actions))

    def forcing_actions(self, state: State) -> Forcing | None:
        """The moves the position forces, for searches, tactical playouts and a raw
        network's move: the moves that win at once (``Forcing(actions, wins=True)``); failing
        that, the moves that stop the opponent's immediate win (``wins=False``); None when
        neither (no forcing situation), and always for a game that declares no threats
        (the default). A game that declares them must be exact: every winning move listed,
        and no other move able to stop the opponent's win. Call it on states that are not final."""
        return None

    def forced_win(self, state: State, thorough: bool = False) -> list[Action] | None:
        """A forced win beyond one move for the player to move, found by the game's own
        threat search where nobody can win at once (``forcing_actions`` is None there):
        the moves from ``state``, the winner's and the defender's replies in turn (where
        it has several, those of the longest defence), the last leaving the defender no
        reply that stops a win at once (Gomoku: victory by continuous fours; ``thorough``,
        also by threes). It must be sound (every line a win against every reply); it need
        not find every win. None when none is found, and always for a game that declares
        none (the default). Searches prove a node with it (``thorough`` once a move, at the
        root: it may cost more than at every node), and a raw network plays its first move."""
        return None

    def threat_defences(self, state: State) -> tuple[Action, ...] | None:
        """Where nobody can win at once and the player to move has no forced win of its
        own (``forced_win``) but the opponent threatens one (Gomoku: an open or broken
        three, an open four one move away), the moves that do not lose to that threat: those
        that stop it and those that force a reply first. Exact: every move left out loses
        by force (or, where a game says so, is no better than one kept: Hex's ``prune``);
        where every move does, those that lose last (never empty). None where there is no
        such threat, and always for a game that declares none (the default). Searches
        expand only these there, and a raw network chooses among them."""
        return None

    def encode(self, state: State) -> np.ndarray:
        """A flat float32 vector for a network, including who is to move."""
        raise NotImplementedError

    def encode_planes(self, state: State) -> np.ndarray:
        """The state as float32 planes ``(rows, cols, channels)`` for convolutional networks,
        the player to move included (games with a 2D board offer it; others need not). By
        default the planes of ``encode`` where the game offers ``planes_of_encoded``."""
        if not offers_planes_of_encoded(type(self)):
            raise NotImplementedError(f"{self.name} offers no 2D encoding (encode_planes)")
        return self.planes_of_encoded(self.encode(state)[None, :])[0]

    def planes_of_encoded(self, x: np.ndarray) -> np.ndarray:
        """``encode_planes`` of a batch of flat encodings ``(B, d)``: ``(B, rows, cols,
        channels)``. A game may offer it where its planes are a rearrangement of its flat
        encoding (each plane value one flat value), for networks that read the flat
        encoding and convolve over the board (the ANET's ``conv_layers``); see
        ``stone_planes_of_encoded``."""
        raise NotImplementedError(f"{self.name} offers no planes of its flat encoding (planes_of_encoded)")

    def render(self, state: State) -> str:
        """A text picture of the state for the terminal display."""
        raise NotImplementedError

    def render_after(self, state: State, last_action: Action | None = None) -> str:
        """The picture of ``state`` reached by ``last_action``, that move marked where the
        picture can show it (the terminal display draws games with it). By default
        ``render(state)``: games whose state knows its last move (Go, Gomoku) mark it there."""
        return self.render(state)

    def match_opening(self, starting_player: int, rng: np.random.Generator) -> list[Action]:
        """The moves that begin a pair of games of a match (each player once in each seat,
        from the same moves), so that players that choose alike every time (a search at a
        fixed budget, an outside engine at fixed nodes) still meet in many games, not in
        two (``mctsfw.match.Openings``). By default ``match_opening_moves`` uniformly random
        legal moves from ``starting_player``'s start (Hex and Go); a game may give openings
        of its own kind (Gomoku: balanced stones near the centre, as Gomocup's openings)."""
        return random_opening(self, starting_player, self.match_opening_moves, rng)

    # ---- the pie rule (swap) ---------------------------------------------------------
    # Where the rules offer it, the second player may, as their first move, take the first
    # player's opening instead of answering it, which keeps the first player from opening
    # with a move too strong to answer. A game with a pie rule overrides these three.
    def swap_problem(self, starting_player: int, moves: Sequence[Action]) -> str | None:
        """None when the rules in force offer the swap after ``moves`` (played from the
        start, ``starting_player`` first), else why not, for a person."""
        return f"{self.name} has no pie rule (swap)"

    def swap_offered(self, starting_player: int, moves: Sequence[Action]) -> bool:
        """Whether the player to move after ``moves`` may swap now (see ``swapped``). The
        game after a swap looks like any opening: the caller, who saw the swap, does not
        offer it twice."""
        return self.swap_problem(starting_player, moves) is None

    def swapped(self, starting_player: int, moves: Sequence[Action]) -> tuple[int, list[Action]]:
        """The game after the second player swaps: ``(new_starting_player, new_moves)``,
        the same people at the same player numbers, the first player to move. It checks
        the move order only, not whether the rules in force offer the swap (that is
        ``swap_offered``'s: a GTP controller applies its own rules); IllegalMoveError
        saying why when the swap cannot be made here."""
        raise IllegalMoveError(f"{self.name} has no pie rule (swap)")

    # ---- defaults a game may override ---------------------------------------------
    def playout(
        self,
        state: State,
        rng: random.Random,
        choose: Callable[[State], Action] | None = None,
    ) -> int | None:
        """Play ``state`` to the end and return the winner (None for a draw).

        ``choose`` picks each move; None means uniformly random. Games with a faster
        way to finish a game (Hex: fill the board, test once) override this.
        """
        while not self.is_final(state):
            if choose is None:
                action = rng.choice(self.legal_actions(state))
            else:
                action = choose(state)
            state = self.next_state(state, action)
        return self.winner(state)

    def playout_played(self, state: State, rng: random.Random,
                       choose: Callable[[State], Action] | None = None) -> tuple[int | None, tuple[list, list]]:
        """A playout as ``playout`` plays it, and the moves each player made in it:
        ``(winner, (player 1's actions, player 2's actions))``, for the all-moves-as-first
        statistics of RAVE. Games with a faster playout may override it (Hex: the cells
        each player holds at the end)."""
        played: tuple[list, list] = ([], [])
        while not self.is_final(state):
            action = rng.choice(self.legal_actions(state)) if choose is None else choose(state)
            played[self.current_player(state) - 1].append(action)
            state = self.next_state(state, action)
        return self.winner(state), played

    def playout_batch(self, states: Sequence[State], rng: random.Random, policy: Any = None) -> list[int | None]:
        """The winners of playouts from each of ``states`` (none of them final).

        ``policy`` is None (uniformly random moves) or a batch policy with
        ``choose_batch(x, legal_mask) -> actions`` over encoded states (the network
        rollouts of ``mctsfw.evaluators``): the playouts then run in lock-step, so the
        policy sees all of them in one call per move. Games may override this with a
        vectorised version (Hex does).
        """
        if policy is None:
            return [self.playout(state, rng) for state in states]
        states = list(states)
        active = [i for i, state in enumerate(states) if not self.is_final(state)]
        while active:
            x = np.stack([self.encode(states[i]) for i in active])
            mask = self.legal_masks([states[i] for i in active])
            for i, action in zip(active, policy.choose_batch(x, mask)):
                states[i] = self.next_state(states[i], int(action))
            active = [i for i in active if not self.is_final(states[i])]
        return [self.winner(state) for state in states]

    def ownership(self, state: State) -> np.ndarray | None:
        """Who owns each point of the finished position ``state``, in action order (no
        pass): +1 player 1, -1 player 2, 0 neither; the auxiliary target of a KataGo-style
        ownership head. None: the game has no territory (only Go has)."""
        return None

    def symmetries(self, x: np.ndarray, target: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Training cases equivalent to (encoded state ``x``, action distribution ``target``)
        under the board's symmetries, the given one first. Training adds them all.

        ``x`` is what ``encode`` gives (1D) or what ``encode_planes`` gives (3D)."""
        return [(x, target)]

    def parse_action(self, text: str, state: State) -> Action:
        """Turn what a person typed into an action; raises IllegalMoveError with the reason."""
        try:
            action = int(text.strip())
        except ValueError:
            raise IllegalMoveError(f"cannot read {text!r}: type {self.move_help}") from None
        self.check_legal(state, action)
        return action

    def action_to_text(self, action: Action, state: State | None = None) -> str:
        return str(action)

    def check_legal(self, state: State, action: Action) -> None:
        """Raise IllegalMoveError with the reason unless ``action`` is legal in ``state``."""
        if self.is_final(state):
            raise IllegalMoveError("the game is over")
        if action not in self.legal_actions(state):
            raise IllegalMoveError(f"action {action} is not legal here")

    def state_after(self, moves: Sequence[Action], starting_player: int = 1) -> State:
        """The state reached by ``moves`` from the start (a game's "ID": its move
        sequence from the empty board); an illegal move raises IllegalMoveError. Games,
        replay buffers and search rebuild positions from IDs with it."""
        state = self.initial_state(starting_player)
        for action in moves:
            state = self.next_state(state, action)
        return state

    # ---- square boards, for SGF and board pictures -----------------------------------
    def grid_cell(self, action: Action) -> tuple[int, int] | None:
        """The cell ``(row_from_top, col)`` where ``action`` puts a stone on the game's
        ``size`` x ``size`` board; None for an action that places none (a pass).

        The default serves boards numbered row by row from the top, ``a = row*size + col``
        with ``num_actions == size*size`` (Hex, Gomoku); a game numbered otherwise (Go:
        row 0 at the bottom, a pass) overrides it and ``grid_action``."""
        size = self._grid_size()
        if action == self.pass_action:
            return None
        if not 0 <= action < size * size:
            raise ValueError(f"action {action!r} is not a cell of the {size}x{size} board")
        return divmod(int(action), size)

    def grid_action(self, row: int, col: int) -> Action:
        """The action that plays on cell ``(row_from_top, col)``: ``grid_cell``'s inverse."""
        size = self._grid_size()
        if not (0 <= row < size and 0 <= col < size):
            raise ValueError(f"({row}, {col}) is not a cell of the {size}x{size} board")
        return row * size + col

    def _grid_size(self) -> int:
        size = getattr(self, "size", None)
        if not isinstance(size, int) or size * size + (self.pass_action is not None) != self.num_actions:
            raise NotImplementedError(f"{self.name} has no square board numbered row by row (grid_cell/grid_action)")
        return size

    def legal_mask(self, state: State) -> np.ndarray:
        """A float32 vector of length num_actions: 1 for legal actions, 0 otherwise."""
        mask = np.zeros(self.num_actions, dtype=np.float32)
        mask[self.legal_actions(state)] = 1.0
        return mask

    def legal_masks(self, states: Sequence[State]) -> np.ndarray:
        """``legal_mask`` of each of ``states``, stacked (float32, one row a state): what an
        evaluator masks a batch's priors with. A game may answer for the batch at once (Hex
        and Gomoku unpack all their bitboards in one call)."""
        return np.stack([self.legal_mask(state) for state in states])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


# ---- square boards as people name their cells: a column letter and a row number (``b3``),
# or ``row col`` counted from 0; row 1 is the first row of ``a = row*size + col``
def letter_cell_name(action: Action, size: int) -> str:
    """``b3`` for the cell in row 2, column 1 of a square board (``action = row*size + col``)."""
    r, c = divmod(int(action), size)
    return f"{chr(ord('a') + c)}{r + 1}"


def parse_letter_cell(text: str, size: int, move_help: str) -> Action:
    """The cell a person typed as ``b3`` or ``2 1`` on a ``size`` x ``size`` board;
    IllegalMoveError saying why for text that is unreadable or off the board."""
    text = text.strip().lower()
    letter = re.fullmatch(r"([a-z])\s*(-?\d+)", text)
    numbers = re.fullmatch(r"(-?\d+)[\s,]+(-?\d+)", text)
    if letter:
        r, c = int(letter.group(2)) - 1, ord(letter.group(1)) - ord("a")
    elif numbers:
        r, c = int(numbers.group(1)), int(numbers.group(2))
    else:
        raise IllegalMoveError(f"cannot read {text!r}: type {move_help}")
    if not (0 <= r < size and 0 <= c < size):
        raise IllegalMoveError(f"{text!r} is off the {size}x{size} board: type {move_help}")
    return r * size + c


def offers_planes_of_encoded(game_class: type) -> bool:
    """Whether a game class lays its flat encoding out as planes (``planes_of_encoded``)."""
    return game_class.planes_of_encoded is not Game.planes_of_encoded


def stone_planes_of_encoded(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``planes_of_encoded`` for the common flat encoding of a board ``rows`` x ``cols``
    (row-major): player 1's stones, player 2's, then two bits for who moves (1, 2). The
    planes ``(B, rows, cols, 4)``: each player's stones, then each to-move bit over the
    whole board."""
    x = np.asarray(x, dtype=np.float32)
    b, n = len(x), rows * cols
    planes = np.empty((b, rows, cols, 4), dtype=np.float32)
    planes[..., 0] = x[:, :n].reshape(b, rows, cols)
    planes[..., 1] = x[:, n : 2 * n].reshape(b, rows, cols)
    planes[..., 2] = x[:, -2, None, None]
    planes[..., 3] = x[:, -1, None, None]
    return planes


def random_opening(game: Game, starter: int, count: int, rng: np.random.Generator) -> list[Action]:
    """Up to ``count`` uniformly random legal moves from the start (never a pass; fewer if the game ends)."""
    state, moves = game.initial_state(starter), []
    for _ in range(count):
        if game.is_final(state):
            break
        legal = [a for a in game.legal_actions(state) if a != game.pass_action]
        if not legal:
            break
        action = int(legal[int(rng.integers(len(legal)))])
        moves.append(action)
        state = game.next_state(state, action)
    return moves


def opponent(player: int) -> int:
    return 3 - player


def turned_at_random(game: Game, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each encoded position of ``x`` turned by one of the board's symmetries
    (``game.symmetries``) drawn from ``rng``: (the turned positions, a new array, and
    ``moved``, whose row i says where each action entry of position i came from:
    ``target[moved[i]]`` is a target turned with it; ``put_along_axis`` turns it back)."""
    index = np.arange(game.num_actions)
    turned = np.empty_like(x)
    moved = np.empty((len(x), game.num_actions), dtype=np.int64)
    for i in range(len(x)):
        turns = game.symmetries(x[i], index)
        turned[i], moved[i] = turns[int(rng.integers(len(turns)))]
    return turned, moved
