"""Playing actual games and series between actors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mctsfw.actors import Actor
from mctsfw.game import Action, Game, State


class Display(Protocol):
    def show(self, game: Game, state: State, last_action: Action | None = None, mover: int | None = None) -> None: ...


@dataclass
class GameRecord:
    starting_player: int
    actions: list[Action] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    winner: int | None = None


def play_game(
    game: Game,
    actors: dict[int, Actor],
    starting_player: int = 1,
    display: Display | None = None,
) -> GameRecord:
    """One game between ``actors[1]`` and ``actors[2]``; the display sees every actual move."""
    for actor in actors.values():
        actor.reset()
    state = game.initial_state(starting_player)
    record = GameRecord(starting_player, states=[state])
    if display:
        display.show(game, state)
    while not game.is_final(state):
        mover = game.current_player(state)
        action = actors[mover].select_action(state)
        state = game.next_state(state, action)
        record.actions.append(action)
        record.states.append(state)
        if display:
            display.show(game, state, action, mover)
    record.winner = game.winner(state)
    return record


def replay_record(game: Game, record: GameRecord, display: Display) -> None:
    """Show a played game to a display again, state by state, as ``play_game`` did."""
    display.show(game, record.states[0])
    for action, before, after in zip(record.actions, record.states, record.states[1:]):
        display.show(game, after, action, game.current_player(before))


@dataclass
class SeriesResult:
    games: int = 0
    wins: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0})  # by actor index (0: a, 1: b)
    draws: int = 0
    records: list[GameRecord] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"games": self.games, "wins_a": self.wins[0], "wins_b": self.wins[1], "draws": self.draws}


def play_series(
    game: Game,
    actor_a: Actor,
    actor_b: Actor,
    games: int,
    first_start: int = 1,
    alternate: bool = True,
    display: Display | None = None,
) -> SeriesResult:
    """``games`` games of ``actor_a`` (player 1) against ``actor_b`` (player 2).

    The starting player is ``first_start`` in game 0 and alternates when ``alternate``,
    so each actor opens half of the games of an even series.
    """
    result = SeriesResult()
    for i in range(games):
        start = first_start if not alternate or i % 2 == 0 else 3 - first_start
        record = play_game(game, {1: actor_a, 2: actor_b}, start, display)
        result.games += 1
        result.records.append(record)
        if record.winner is None:
            result.draws += 1
        else:
            result.wins[record.winner - 1] += 1
    return result
