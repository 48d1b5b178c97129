"""A local stand-in for the Online Hex Tournament (OHT) server.

``play_oht_series`` plays two actors against each other only through the calls a
tournament server makes to its clients, with keyword arguments and flat states, in the
server's order::

    handle_series_start(unique_id=, series_id=, player_map=, num_games=, game_params=)
    for each game:
        handle_game_start(start_player=)
        handle_get_action(state=(player_to_move, cell_0, ..., cell_{n*n-1})) -> (row, col)
        handle_game_over(winner=, end_state=)
    handle_series_over(stats=[(unique_id, series_id, wins, losses), ...])
    handle_tournament_over(score=)

so an agent that plays a series here speaks the protocol a server expects. Player
numbers are series ids: the first actor is player 1, the second player 2, and the
starting player alternates within the series. Every answer is checked: one that is not
a free cell of the board stops the series with ``IllegalAnswerError`` naming the actor
and its answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from mctsfw.actors import Actor
from mctsfw.game import Game, IllegalMoveError


class IllegalAnswerError(IllegalMoveError):
    """An actor answered ``handle_get_action`` with something that is not a legal move."""


@dataclass
class OHTSeriesResult:
    """What a series produced; ``stats`` is exactly what ``handle_series_over`` was given."""

    unique_ids: dict[int, int]  # series id -> unique id
    stats: list[tuple[int, int, int, int]] = field(default_factory=list)  # (unique_id, series_id, wins, losses)
    start_players: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)  # series id of each game's winner
    moves: list[list[tuple[int, int]]] = field(default_factory=list)  # each game's answers, in order

    def wins(self, series_id: int) -> int:
        return sum(1 for w in self.winners if w == series_id)

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": len(self.winners),
            "stats": [list(s) for s in self.stats],
            "start_players": self.start_players,
            "winners": self.winners,
        }


def _who(actor: Actor, series_id: int, unique_id: int) -> str:
    return f"{actor.label} (player {series_id}, unique id {unique_id})"


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


def play_oht_series(
    game: Game,
    actor_a: Actor,
    actor_b: Actor,
    num_games: int,
    unique_ids: Sequence[int] = (1, 2),
    first_start: int = 1,
    display: Any = None,
    tournament_over: bool = True,
) -> OHTSeriesResult:
    """Play ``num_games`` games of ``actor_a`` (series id 1) against ``actor_b`` (series id 2).

    The starting player is ``first_start`` in the first game and alternates. Each actor
    is told its ``unique_id`` (from ``unique_ids``); ``display`` (anything with
    ``show(game, state, last_action, mover)``) sees every move. With
    ``tournament_over`` the series ends the tournament: each actor's score is its
    number of wins. Returns the series' stats and games.
    """
    for method in ("to_flat", "from_flat"):
        if not hasattr(game, method) or not hasattr(game, "size"):
            raise TypeError(f"an OHT series needs a square board game with flat states; {game.name} has no {method}")
    if num_games < 1:
        raise ValueError(f"num_games must be at least 1, not {num_games!r}")
    if first_start not in (1, 2):
        raise ValueError(f"first_start is 1 or 2, not {first_start!r}")
    actors = {1: actor_a, 2: actor_b}
    ids = {1: unique_ids[0], 2: unique_ids[1]}
    player_map = [(ids[1], 1), (ids[2], 2)]
    result = OHTSeriesResult(unique_ids=dict(ids))

    for series_id, actor in actors.items():
        actor.handle_series_start(
            unique_id=ids[series_id],
            series_id=series_id,
            player_map=list(player_map),
            num_games=num_games,
            game_params=[game.size],
        )
    for number in range(num_games):
        start = first_start if number % 2 == 0 else 3 - first_start
        for actor in actors.values():
            actor.handle_game_start(start_player=start)
        state = game.initial_state(start)
        if display:
            display.show(game, state)
        moves = []
        while not game.is_final(state):
            mover = game.current_player(state)
            answer = actors[mover].handle_get_action(state=game.to_flat(state))
            try:
                action = _answer_action(game, state, answer)
            except IllegalMoveError as error:
                raise IllegalAnswerError(
                    f"{_who(actors[mover], mover, ids[mover])} answered {answer!r} "
                    f"in game {number + 1} of {num_games}: {error}"
                ) from None
            state = game.next_state(state, action)
            moves.append(divmod(action, game.size))
            if display:
                display.show(game, state, action, mover)
        winner = game.winner(state)
        end_state = game.to_flat(state)
        for actor in actors.values():
            actor.handle_game_over(winner=winner, end_state=end_state)
        result.start_players.append(start)
        result.winners.append(winner)
        result.moves.append(moves)

    result.stats = [(ids[s], s, result.wins(s), result.wins(3 - s)) for s in (1, 2)]
    for actor in actors.values():
        actor.handle_series_over(stats=list(result.stats))
    if tournament_over:
        for series_id, actor in actors.items():
            actor.handle_tournament_over(score=result.wins(series_id))
    return result
