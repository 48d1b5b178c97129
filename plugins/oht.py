"""The Online Hex Tournament (OHT): a client adapter for any actor, and a local server.

``OHTClient(actor)`` speaks the tournament client protocol for any actor of a square
board game with flat states (Hex): a server calls its methods with keyword arguments
(the parameter names are the contract)::

    handle_series_start(unique_id=, series_id=, player_map=, num_games=, game_params=)
    for each game:
        handle_game_start(start_player=)
        handle_get_action(state=(player_to_move, cell_0, ..., cell_{n*n-1})) -> (row, col)
        handle_game_over(winner=, end_state=)
    handle_series_over(stats=[(unique_id, series_id, wins, losses), ...])
    handle_tournament_over(score=)

``play_oht_series`` is a local stand-in for the server: it plays two clients against
each other only through these calls, in the server's order, with flat states, so an
agent that plays a series here speaks the protocol a server expects. Its games are a
``mctsfw.match.play_match`` match: the first client is player 1 (series id 1), the
second player 2, and the starting player alternates within the series. Every answer is
checked: one that is not a free cell of the board stops the series with
``IllegalAnswerError`` naming the client and its answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from hexzero.mctsfw.actors import Actor
from hexzero.mctsfw.game import Game, IllegalMoveError, State
from hexzero.mctsfw.match import MatchResult, play_match

#: what the protocol needs of a game: a square board and flat states
FLAT_GAME_NEEDS = ("size", "from_flat", "to_flat")


class IllegalAnswerError(IllegalMoveError):
    """A client answered ``handle_get_action`` with something that is not a legal move."""


def flat_game_problem(game: Game) -> str | None:
    """None if the OHT protocol can carry ``game``, else why not."""
    missing = [need for need in FLAT_GAME_NEEDS if not hasattr(game, need)]
    if missing:
        return f"the OHT protocol needs a square board game with flat states; {game.name} has no {', '.join(missing)}"
    return None


class OHTClient:
    """The tournament client protocol around ``actor`` (playing ``game``, by default the
    actor's own). Player numbers are the series ids 1 and 2; ``series`` keeps what the
    server said about the series (ids, stats, score)."""

    def __init__(self, actor: Actor, game: Game | None = None):
        game = actor.game if game is None else game
        problem = flat_game_problem(game)
        if problem:
            raise TypeError(problem)
        self.actor = actor
        self.game = game
        self.series: dict[str, Any] = {}

    @property
    def label(self) -> str:
        return self.actor.label

    def handle_series_start(
        self, unique_id: int, series_id: int, player_map: Any, num_games: int, game_params: Sequence[int]
    ) -> None:
        """A series begins: this agent is player ``series_id``; ``game_params`` is ``[board size]``.

        ``player_map`` lists the ``(unique_id, series_id)`` pairs of both players.
        """
        if game_params and int(game_params[0]) != self.game.size:
            raise ValueError(
                f"this agent plays {self.game.name} of size {self.game.size}, the series asks for size {game_params[0]}"
            )
        self.series = {
            "unique_id": unique_id,
            "series_id": series_id,
            "player_map": player_map,
            "num_games": num_games,
            "game_params": game_params,
        }

    def handle_game_start(self, start_player: int) -> None:
        """A game of the series begins; player ``start_player`` (1 or 2) moves first."""
        if start_player not in (1, 2):
            raise ValueError(f"start_player is 1 or 2, not {start_player!r}")
        self.actor.reset()

    def handle_get_action(self, state: Sequence[int]) -> tuple[int, int]:
        """The move for the flat state ``(player_to_move, cell_0, ..., cell_{n*n-1})`` as ``(row, col)``.

        A malformed state (not a sequence, wrong length, a player other than 1 or 2, a
        cell outside 0..2) or a finished game raises ValueError saying what is wrong.
        """
        if isinstance(state, (str, bytes)) or not hasattr(state, "__len__"):
            raise ValueError(f"the state must be a flat tuple (player_to_move, cell_0, ...), not {state!r}")
        game_state = self.game.from_flat(state)
        if self.game.is_final(game_state):
            raise ValueError(f"the game in this state is over (player {self.game.winner(game_state)} has won)")
        action = self.actor.select_action(game_state)
        return divmod(int(action), self.game.size)

    def handle_game_over(self, winner: int, end_state: Sequence[int]) -> None:
        """A game ended: ``winner`` is the series id of the winner, ``end_state`` the final flat state."""
        self.actor.reset()

    def handle_series_over(self, stats: Any) -> None:
        """The series ended; ``stats`` lists ``(unique_id, series_id, wins, losses)`` per player."""
        self.series["stats"] = stats

    def handle_tournament_over(self, score: Any) -> None:
        """The tournament ended with this agent's ``score``."""
        self.series["score"] = score


@dataclass
class OHTSeriesResult:
    """What a series produced; ``stats`` is exactly what ``handle_series_over`` was given."""

    unique_ids: dict[int, int]  # series id -> unique id
    stats: list[tuple[int, int, int, int]] = field(default_factory=list)  # (unique_id, series_id, wins, losses)
    start_players: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)  # series id of each game's winner
    moves: list[list[tuple[int, int]]] = field(default_factory=list)  # each game's answers, in order
    match: MatchResult | None = None  # the games as the match runner saw them (thinking times ...)

    def wins(self, series_id: int) -> int:
        return sum(1 for w in self.winners if w == series_id)

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": len(self.winners),
            "stats": [list(s) for s in self.stats],
            "start_players": self.start_players,
            "winners": self.winners,
        }


def _answer_action(game: Game, state: Any, answer: Any) -> int:
    """The action of a ``(row, col)`` answer; IllegalMoveError with the reason otherwise."""
    n = game.size
    try:
        row, col = answer
        if isinstance(row, bool) or isinstance(col, bool) or int(row) != row or int(col) != col:
            raise TypeError
        row, col = int(row), int(col)
    except (TypeError, ValueError):
        raise IllegalMoveError("an answer is a (row, col) pair of whole numbers") from None
    if not (0 <= row < n and 0 <= col < n):
        raise IllegalMoveError(f"({row}, {col}) is off the {n}x{n} board")
    action = row * n + col
    if action not in game.legal_actions(state):
        raise IllegalMoveError(f"cell ({row}, {col}) is already taken")
    return action


class _ServerSeat(Actor):
    """A client as the match runner sees it: its move is its answer to
    ``handle_get_action`` on the flat state, checked."""

    def __init__(self, game: Game, client: OHTClient, series_id: int, unique_id: int, num_games: int):
        super().__init__(game)
        self.client = client
        self.series_id, self.unique_id, self.num_games = series_id, unique_id, num_games
        self.game_number = 0  # set by the server before each game
        self.label = getattr(client, "label", type(client).__name__)

    def select_action(self, state: State) -> int:
        answer = self.client.handle_get_action(state=self.game.to_flat(state))
        try:
            return _answer_action(self.game, state, answer)
        except IllegalMoveError as error:
            raise IllegalAnswerError(
                f"{self.label} (player {self.series_id}, unique id {self.unique_id}) answered {answer!r} "
                f"in game {self.game_number + 1} of {self.num_games}: {error}"
            ) from None


def play_oht_series(
    game: Game,
    client_a: OHTClient | Actor,
    client_b: OHTClient | Actor,
    num_games: int,
    unique_ids: Sequence[int] = (1, 2),
    first_start: int = 1,
    display: Any = None,
    tournament_over: bool = True,
) -> OHTSeriesResult:
    """Play ``num_games`` games of ``client_a`` (series id 1) against ``client_b`` (series id 2).

    A client is an ``OHTClient`` (or anything with its methods); a plain actor is
    wrapped in one. The starting player is ``first_start`` in the first game and
    alternates. Each client is told its ``unique_id`` (from ``unique_ids``); ``display``
    (anything with ``show(game, state, last_action, mover)``) sees every move. With
    ``tournament_over`` the series ends the tournament: each client's score is its
    number of wins. Returns the series' stats and games.
    """
    problem = flat_game_problem(game)
    if problem:
        raise TypeError(problem)
    if num_games < 1:
        raise ValueError(f"num_games must be at least 1, not {num_games!r}")
    if first_start not in (1, 2):
        raise ValueError(f"first_start is 1 or 2, not {first_start!r}")
    clients = {1: client_a, 2: client_b}
    clients = {s: OHTClient(c, game) if isinstance(c, Actor) else c for s, c in clients.items()}
    ids = {1: unique_ids[0], 2: unique_ids[1]}
    player_map = [(ids[1], 1), (ids[2], 2)]
    result = OHTSeriesResult(unique_ids=dict(ids))
    seats = {s: _ServerSeat(game, client, s, ids[s], num_games) for s, client in clients.items()}

    for series_id, client in clients.items():
        client.handle_series_start(
            unique_id=ids[series_id],
            series_id=series_id,
            player_map=list(player_map),
            num_games=num_games,
            game_params=[game.size],
        )

    def game_started(number: int, start: int) -> None:
        for series_id, client in clients.items():
            seats[series_id].game_number = number
            client.handle_game_start(start_player=start)

    def game_ended(number: int, record) -> None:
        end_state = game.to_flat(record.states[-1])
        for client in clients.values():
            client.handle_game_over(winner=record.winner, end_state=end_state)

    result.match = play_match(
        game, seats[1], seats[2], num_games, seating=(1,), openers=(first_start, 3 - first_start), display=display,
        game_started=game_started, game_ended=game_ended,
    )
    for record in result.match.records:
        result.start_players.append(record.starting_player)
        result.winners.append(record.winner)
        result.moves.append([divmod(action, game.size) for action in record.actions])

    result.stats = [(ids[s], s, result.wins(s), result.wins(3 - s)) for s in (1, 2)]
    for client in clients.values():
        client.handle_series_over(stats=list(result.stats))
    if tournament_over:
        for series_id, client in clients.items():
            client.handle_tournament_over(score=result.wins(series_id))
    return result
