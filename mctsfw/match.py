"""Playing actual games and series between actors."""

from __future__ import annotations

import statistics
import time
from collections import Counter
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
    move_seconds: list[float] = field(default_factory=list)  # thinking time of each move


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
        started = time.perf_counter()
        action = actors[mover].select_action(state)
        record.move_seconds.append(time.perf_counter() - started)
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


def compare(
    game: Game, actor_a: Actor, actor_b: Actor, games: int, starting_player: int = 1, display: Display | None = None
) -> dict[str, Any]:
    """``games`` games of A against B, A taking player 1 in the even games and player 2 in
    the odd ones; player ``starting_player`` opens every game. Win, loss and draw rates of
    A overall and per colour, mean thinking time per move of each, and game lengths."""
    seats = {"a_as_player_1": {"wins": 0, "losses": 0, "draws": 0, "games": 0},
             "a_as_player_2": {"wins": 0, "losses": 0, "draws": 0, "games": 0}}
    thinking = {"a": [], "b": []}
    lengths: dict[str, list[int]] = {"a_as_player_1": [], "a_as_player_2": []}
    for i in range(games):
        a_player = 1 if i % 2 == 0 else 2
        key = f"a_as_player_{a_player}"
        record = play_game(game, {a_player: actor_a, 3 - a_player: actor_b}, starting_player, display)
        tally = seats[key]
        tally["games"] += 1
        if record.winner is None:
            tally["draws"] += 1
        elif record.winner == a_player:
            tally["wins"] += 1
        else:
            tally["losses"] += 1
        lengths[key].append(len(record.actions))
        mover = starting_player
        for seconds in record.move_seconds:
            thinking["a" if mover == a_player else "b"].append(seconds)
            mover = 3 - mover
    total = {k: sum(seat[k] for seat in seats.values()) for k in ("wins", "losses", "draws", "games")}
    for tally in [*seats.values(), total]:
        for k in ("wins", "losses", "draws"):
            tally[f"{k[:-1] if k != 'losses' else 'loss'}_rate"] = tally[k] / tally["games"] if tally["games"] else 0.0
    all_lengths = lengths["a_as_player_1"] + lengths["a_as_player_2"]
    return {
        "a": actor_a.label,
        "b": actor_b.label,
        "games": games,
        "starting_player": starting_player,
        "total": total,
        **seats,
        "mean_seconds_per_move": {k: statistics.fmean(v) if v else 0.0 for k, v in thinking.items()},
        "game_lengths": {
            "mean": statistics.fmean(all_lengths) if all_lengths else 0.0,
            "min": min(all_lengths, default=0),
            "max": max(all_lengths, default=0),
            "by_colour": {k: dict(sorted(Counter(v).items())) for k, v in lengths.items()},
        },
    }


def compare_report(result: dict[str, Any]) -> str:
    """The comparison as a small text table."""
    lines = [f"{result['a']} (A) against {result['b']} (B): {result['games']} games, player "
             f"{result['starting_player']} opens every game"]
    lines.append(f"{'':<16}{'games':>6}{'A wins':>9}{'B wins':>9}{'draws':>8}   mean length")
    for key, title in (("a_as_player_1", "A as player 1"), ("a_as_player_2", "A as player 2"), ("total", "all")):
        t = result[key]
        by = result["game_lengths"]["by_colour"]
        if key == "total":
            mean = result["game_lengths"]["mean"]
        else:
            counts = by[key]
            mean = sum(k * v for k, v in counts.items()) / max(sum(counts.values()), 1)
        lines.append(f"{title:<16}{t['games']:>6}{t['win_rate']:>9.0%}{t['loss_rate']:>9.0%}{t['draw_rate']:>8.0%}   {mean:.1f}")
    lengths = result["game_lengths"]
    lines.append(f"game lengths: {lengths['min']} to {lengths['max']} moves; by colour of A: "
                 + "; ".join(f"{k[-8:].replace('_', ' ')}: {v}" for k, v in lengths["by_colour"].items()))
    thinking = result["mean_seconds_per_move"]
    lines.append(f"mean thinking time per move: A {thinking['a'] * 1000:.1f} ms, B {thinking['b'] * 1000:.1f} ms")
    return "\n".join(lines)
