"""Playing games between actors: one game (``play_game``) and a match of many (``play_match``).

``play_match`` is the one home of seats, openers and tallies: every comparison of two
agents (``cli.py compare``, self-play gating, the strength report, TOPP's series, the
OHT series) plays through it, each with its own schedule, and reads its figures from
the one ``MatchResult``. A schedule is two short cycles:

- ``seating``: A's player number in game 0, 1, ... (cycled): ``(1,)`` A is always
  player 1; ``(1, 2)`` A is player 1 in the even games and player 2 in the odd ones;
- ``openers``: who opens game 0, 1, ... (cycled), a player number (1, 2) or an actor
  ("a", "b"): ``(1,)`` player 1 opens every game; ``(1, 2)`` the opener alternates;
  ``("a", "a", "b", "b")`` A opens two games, then B two.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from hexzero.mctsfw.actors import Actor, Quit, Resignation, SwapRequest, TakeBack
from hexzero.mctsfw.game import Action, Game, State, random_opening
from hexzero.mctsfw.ratings import PRIOR_DRAWS, format_difference, two_player_rating


class Display(Protocol):
    def show(self, game: Game, state: State, last_action: Action | None = None, mover: int | None = None) -> None: ...


@dataclass
class GameRecord:
    starting_player: int
    actions: list[Action] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    winner: int | None = None
    move_seconds: list[float] = field(default_factory=list)  # thinking time of each chosen move
    movers: list[int] = field(default_factory=list)  # the player who chose each move
    #: the first ``opening`` actions were replayed from a record (``play --from``), not
    #: chosen: ``move_seconds`` and ``movers`` cover the moves after them
    opening: int = 0
    resigned: int | None = None  # the player who resigned (the game then ends, lost by them), if one did
    #: the player who quit the session (``actors.Quit``): the game is unfinished, no winner
    quit: int | None = None
    #: the first move as played, when the second player then swapped (the pie rule): the
    #: record's ``starting_player`` and ``actions`` are the game after the swap
    #: (``Game.swapped``), which replays as it is; this keeps how it came about (SGF)
    swapped_first_move: Action | None = None
    #: the score for player 1 of a game an actor counted (``play_game(judged=True)``)
    score: float | None = None


def play_game(
    game: Game,
    actors: dict[int, Actor],
    starting_player: int = 1,
    display: Display | None = None,
    opening: Sequence[Action] = (),
    judged: bool = False,
) -> GameRecord:
    """One game between ``actors[1]`` and ``actors[2]``; the display sees every actual move.

    ``judged``: the winner of a finished game is what the first actor that counts games
    says (``Actor.judge``: an outside engine's ``final_score``, kept in ``record.score``),
    as GNU Go referees Go with its judgement of dead stones; the rules' winner where none does.

    ``opening``: moves played first, as recorded (a game continued from a record); the
    actors choose the moves after them, and the display starts from the position they reach.
    An actor that raises ``Resignation`` loses there: the record's ``winner`` is the
    other player and ``resigned`` the one who resigned (the last state is not final).

    The other requests of a player (``actors.Request``) are judged here, the one home of
    the game's course: ``TakeBack`` takes back the asker's last move and all after it,
    ``SwapRequest`` takes the pie rule's swap where the game offers it
    (``Game.swap_offered``; an actor is asked ``consider_swap`` then), ``Quit`` ends the
    game unfinished (``record.quit``). A request that cannot be granted is refused to the
    asker (``Actor.tell``) with the reason, and the position stays. After a take-back or a
    swap the actors learn the position as after ``play --from`` (``reset``, then
    ``opening_played``)."""
    for actor in actors.values():
        actor.reset()
    state = game.initial_state(starting_player)
    record = GameRecord(starting_player, states=[state], opening=len(opening))
    for action in opening:
        state = game.next_state(state, action)
        record.actions.append(action)
        record.states.append(state)
    if opening:
        for actor in actors.values():
            actor.opening_played(starting_player, list(opening))
    if display:
        display.show(game, state)
    # the record as it was before each chosen move or swap, and who made it: what undo restores
    history: list[tuple[int, GameRecord]] = []
    while not game.is_final(state):
        mover = game.current_player(state)
        actor = actors[mover]
        started = time.perf_counter()
        # after a swap the game looks like any other opening: it is not offered twice
        offered = record.swapped_first_move is None and game.swap_offered(record.starting_player, record.actions)
        try:
            if offered and actor.consider_swap(record.starting_player, list(record.actions)):
                raise SwapRequest()
            action = actor.select_action(state)
        except Resignation:
            record.resigned = mover
            record.winner = 3 - mover
            return record
        except Quit:
            record.quit = mover
            return record
        except TakeBack:
            earlier = [i for i, (who, _) in enumerate(history) if who == mover]
            if not earlier:
                actor.tell("refused: nothing to undo: you have not moved yet" +
                           (" (the moves of the record you started from stay)" if opening else ""))
                continue
            record = history[earlier[-1]][1]
            del history[earlier[-1]:]
            actor.tell(f"taken back: back to move {len(record.actions) + 1}, "
                       f"player {game.current_player(record.states[-1])} to move")
            state = _position_set(game, actors, record, display)
            continue
        except SwapRequest:
            if not offered:
                actor.tell(f"refused: no swap now: {game.swap_problem(record.starting_player, record.actions)}")
                continue
            history.append((mover, _copy(record)))
            first = record.actions[0]
            record.starting_player, record.actions = game.swapped(record.starting_player, record.actions)
            record.states = [game.initial_state(record.starting_player)]
            record.states.append(game.next_state(record.states[0], record.actions[0]))
            record.movers, record.move_seconds = [mover], [time.perf_counter() - started]
            record.opening, record.swapped_first_move = 0, first
            message = (f"player {mover} swaps: the first stone, {game.action_to_text(first)}, becomes player "
                       f"{mover}'s at {game.action_to_text(record.actions[0])}; player {3 - mover} to move")
            for each in actors.values():
                each.tell(message)
            state = _position_set(game, actors, record, display)
            continue
        history.append((mover, _copy(record)))
        record.move_seconds.append(time.perf_counter() - started)
        state = game.next_state(state, action)
        record.actions.append(action)
        record.states.append(state)
        record.movers.append(mover)
        if display:
            display.show(game, state, action, mover)
    record.winner = game.winner(state)
    if judged:
        record.score = next((v for v in (actor.judge(state) for actor in actors.values()) if v is not None), None)
        if record.score is not None:
            record.winner = 1 if record.score > 0 else 2 if record.score < 0 else None
    return record


def _copy(record: GameRecord) -> GameRecord:
    """The record as it stands (its lists copied: the game goes on in the original)."""
    return replace(record, actions=list(record.actions), states=list(record.states),
                   move_seconds=list(record.move_seconds), movers=list(record.movers))


def _position_set(game: Game, actors: dict[int, Actor], record: GameRecord, display: Display | None) -> State:
    """The actors and the display learn the position of ``record`` (after a take-back or
    a swap) as a game continued from a record; its state is returned."""
    for actor in actors.values():
        actor.reset()
        if record.actions:
            actor.opening_played(record.starting_player, list(record.actions))
    state = record.states[-1]
    if display:
        display.show(game, state, record.actions[-1] if record.actions else None,
                      game.current_player(record.states[-2]) if record.actions else None)
    return state


def replay_record(game: Game, record: GameRecord, display: Display) -> None:
    """Show a played game to a display again, state by state, as ``play_game`` did."""
    display.show(game, record.states[0])
    for action, before, after in zip(record.actions, record.states, record.states[1:]):
        display.show(game, after, action, game.current_player(before))


# ---- matches ---------------------------------------------------------------------------------
@dataclass
class Tally:
    """Games, wins, losses and draws of A in some of a match's games."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0

    def _share(self, count: float) -> float:
        return count / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return self._share(self.wins)

    @property
    def loss_rate(self) -> float:
        return self._share(self.losses)

    @property
    def draw_rate(self) -> float:
        return self._share(self.draws)

    @property
    def score(self) -> float:
        """A's points per game: a win 1, a draw a half."""
        return self._share(self.wins + 0.5 * self.draws)

    def as_dict(self) -> dict[str, Any]:
        return {"wins": self.wins, "losses": self.losses, "draws": self.draws, "games": self.games,
                "win_rate": self.win_rate, "loss_rate": self.loss_rate, "draw_rate": self.draw_rate}


@dataclass
class MatchResult:
    """Every game of a match of A against B, and the figures read from them."""

    a: str  # the actors' labels
    b: str
    records: list[GameRecord] = field(default_factory=list)
    a_players: list[int] = field(default_factory=list)  # A's player number in each game
    seconds: float = 0.0  # wall time of the whole match
    openings: "Openings | None" = None  # what began each pair of games, if anything did

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def distinct_games(self) -> int:
        """How many of the games differ (their opener or their moves): two players that
        choose alike every time replay one game, and a figure counts distinct games only."""
        return len({(record.starting_player, tuple(record.actions)) for record in self.records})

    def winner(self, number: int) -> str | None:
        """Who won game ``number``: "a", "b", or None for a draw."""
        winner = self.records[number].winner
        return None if winner is None else "a" if winner == self.a_players[number] else "b"

    def a_opened(self, number: int) -> bool:
        return self.records[number].starting_player == self.a_players[number]

    def tally(self, a_player: int | None = None, a_opens: bool | None = None) -> Tally:
        """A's results in the games where A was ``a_player`` (None: any) and where A
        opened, or did not (``a_opens``; None: either)."""
        tally = Tally()
        for number in range(self.games):
            if a_player is not None and self.a_players[number] != a_player:
                continue
            if a_opens is not None and self.a_opened(number) != a_opens:
                continue
            winner = self.winner(number)
            tally.games += 1
            tally.wins += winner == "a"
            tally.losses += winner == "b"
            tally.draws += winner is None
        return tally

    @property
    def wins_a(self) -> int:
        return self.tally().wins

    @property
    def wins_b(self) -> int:
        return self.tally().losses

    @property
    def draws(self) -> int:
        return self.tally().draws

    def mean_seconds_per_move(self) -> dict[str, float]:
        """The mean thinking time per move of A and of B."""
        seconds: dict[str, list[float]] = {"a": [], "b": []}
        for record, a_player in zip(self.records, self.a_players):
            for mover, spent in zip(record.movers, record.move_seconds):
                seconds["a" if mover == a_player else "b"].append(spent)
        return {k: statistics.fmean(v) if v else 0.0 for k, v in seconds.items()}

    def summary(self) -> dict[str, Any]:
        """The figures of the match: A's results overall, per colour and per opener, the
        mean thinking time per move of each, and the game lengths."""
        lengths = {f"a_as_player_{p}": [len(r.actions) for r, a in zip(self.records, self.a_players) if a == p]
                   for p in (1, 2)}
        every = [len(r.actions) for r in self.records]
        return {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "total": self.tally().as_dict(),
            "a_as_player_1": self.tally(a_player=1).as_dict(),
            "a_as_player_2": self.tally(a_player=2).as_dict(),
            "a_moving_first": self.tally(a_opens=True).as_dict(),
            "a_moving_second": self.tally(a_opens=False).as_dict(),
            "mean_seconds_per_move": self.mean_seconds_per_move(),
            "game_lengths": {
                "mean": statistics.fmean(every) if every else 0.0,
                "min": min(every, default=0),
                "max": max(every, default=0),
                "by_colour": {k: dict(sorted(Counter(v).items())) for k, v in lengths.items()},
            },
            "distinct_games": self.distinct_games,
            "openings": self.openings.describe() if self.openings else None,
            "seconds": round(self.seconds, 3),
        }


Opener = int | str  # a player number (1, 2) or an actor ("a", "b")

#: the schedules of comparisons, in pairs of games with A once in each seat and the same
#: player opening both (what shared openings need, ``Openings``): player 1 opens every game
#: (Go's black, Gomoku's) ...
PLAYER_1_OPENS = {"seating": (1, 2), "openers": (1,)}
#: ... or each player opens half the pairs, so neither the colour nor the first move
#: favours A: A moves first in games 0 and 3 of every four
BALANCED = {"seating": (1, 2), "openers": (1, 1, 2, 2)}


def pairs_problem(seating: Sequence[int], openers: Sequence[Opener]) -> str | None:
    """None when the schedule plays games in pairs (games 2k and 2k+1: A once in each
    seat, the same player opening both), as shared openings need; else why not."""
    def start(number: int) -> tuple[int, int]:
        a_player, opener = seating[number % len(seating)], openers[number % len(openers)]
        return a_player, {"a": a_player, "b": 3 - a_player}.get(opener, opener)

    for pair in range(len(seating) * len(openers)):
        (seat, opener), (other_seat, other_opener) = start(2 * pair), start(2 * pair + 1)
        if seat == other_seat or opener != other_opener:
            return (f"shared openings need games in pairs, A once in each seat and the same player opening both "
                    f"(not seating {tuple(seating)} with openers {tuple(openers)})")
    return None


def schedule_problem(seating: Sequence[int], openers: Sequence[Opener]) -> str | None:
    """None for a usable schedule, else what is wrong with it."""
    if not seating or any(p not in (1, 2) or isinstance(p, bool) for p in seating):
        return f"seating lists A's player number (1 or 2) game by game, not {seating!r}"
    if not openers or any(o not in (1, 2, "a", "b") or isinstance(o, bool) for o in openers):
        return f"openers lists who opens game by game: 1, 2 (a player) or 'a', 'b' (an actor), not {openers!r}"
    return None


class Openings:
    """The openings of a match between players that would otherwise replay one game (two
    searches at a fixed budget, an outside engine at fixed nodes): games ``2k`` and ``2k+1``,
    the same player opening and each actor once in each seat, begin with the same moves, and
    no two pairs with the same (the one home of shared openings: ``compare``, the strength
    report, the benchmarks and TOPP all ask here). ``moves``: that many uniformly random
    legal moves a pair; None: the game's own (``Game.match_opening``: random stones for Hex
    and Go, balanced stones near the centre for Gomoku). Drawn from ``seed`` and the pair's
    number, so a match reruns with the same openings. A callable ``play_match`` takes as
    its ``opening``."""

    def __init__(self, game: Game, seed: int | None = None, moves: int | None = None):
        self.game, self.seed, self.moves = game, seed or 0, moves
        self.drawn: dict[int, tuple[int, list[Action]]] = {}  # pair -> (its opener, its moves)

    def draw(self, starter: int, rng: np.random.Generator) -> list[Action]:
        if self.moves is None:
            return list(self.game.match_opening(starter, rng))
        return random_opening(self.game, starter, self.moves, rng)

    def __call__(self, number: int, starter: int) -> list[Action]:
        """The opening of game ``number``, which player ``starter`` opens."""
        pair = number // 2
        if pair in self.drawn:
            opener, moves = self.drawn[pair]
            if opener != starter:
                raise ValueError(f"shared openings: games {2 * pair} and {2 * pair + 1} must have the same opener")
            return list(moves)
        seen = {(opener, tuple(moves)) for opener, moves in self.drawn.values()}
        for attempt in range(100):  # a pair of games not met before (tiny boards may run out)
            moves = self.draw(starter, np.random.default_rng([self.seed, pair, attempt]))
            if (starter, tuple(moves)) not in seen:
                break
        self.drawn[pair] = (starter, moves)
        return list(moves)

    def describe(self) -> str:
        """What begins each pair, for a report: "2 random legal moves"."""
        if self.moves is not None:
            return f"{self.moves} random legal move{'s' * (self.moves != 1)}"
        count = len(next(iter(self.drawn.values()))[1]) if self.drawn else self.game.match_opening_moves
        return f"{count} {self.game.match_opening_kind}"


#: what begins the pairs of games of a match (``match_openings``): "auto" the game's openings
#: when both players choose alike every time, "game" the game's openings whatever the
#: players, "none" the empty board, or a number of random legal moves
OPENINGS_CHOICES = ("auto", "game", "none")


def openings_problem(choice: Any) -> str | None:
    """None for a usable ``match_openings`` choice, else what is wrong with it."""
    if choice in OPENINGS_CHOICES or (isinstance(choice, int) and not isinstance(choice, bool) and choice >= 0):
        return None
    return f"openings are auto, game, none or a number of random moves >= 0, not {choice!r}"


def parse_openings(text: str) -> str | int:
    """A ``--openings`` flag's value: auto, game, none or a whole number."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in OPENINGS_CHOICES:
        return text
    raise ValueError(f"--openings is auto, game, none or a number of random moves, not {text!r}")


def match_openings(game: Game, actor_a: Actor, actor_b: Actor, choice: str | int = "auto",
                   seed: int | None = None) -> Openings | None:
    """The openings of a match of A against B (``Openings``), or None for games from the
    empty board: ``choice`` "auto" (the default of every comparison) gives the game's own
    openings when both actors are deterministic (``Actor.deterministic``: they would replay
    one game) and the game has openings (NIM and Connect Four have none: the empty board is
    the test); "game" gives the game's openings whatever the players; "none" none; a number
    N, N uniformly random legal moves (0: none)."""
    problem = openings_problem(choice)
    if problem:
        raise ValueError(problem)
    has_own = game.match_opening_moves > 0 or type(game).match_opening is not Game.match_opening
    if choice == "none" or choice == 0 or (choice in ("auto", "game") and not has_own):
        return None
    if choice == "auto" and not (actor_a.deterministic and actor_b.deterministic):
        return None
    return Openings(game, seed, moves=choice if isinstance(choice, int) else None)


def distinct_warning(result: "MatchResult") -> str | None:
    """A warning for a match of which fewer than half the games differ, else None."""
    if result.games and result.distinct_games * 2 < result.games:
        return (f"warning: only {result.distinct_games} of the {result.games} games differ: the players replay "
                "games; a figure counts distinct games only (give them openings: --openings game)")
    return None


def play_match(
    game: Game,
    actor_a: Actor,
    actor_b: Actor,
    games: int,
    seating: Sequence[int] = (1,),
    openers: Sequence[Opener] = (1, 2),
    display: Display | None = None,
    game_started: Callable[[int, int], None] | None = None,
    game_ended: Callable[[int, GameRecord], None] | None = None,
    opening: Sequence[Action] | Callable[[int, int], Sequence[Action]] = (),
    judged: bool = False,
) -> MatchResult:
    """``games`` games of ``actor_a`` against ``actor_b``, seated and opened as the
    ``seating`` and ``openers`` cycles say (see the module's docstring); by default A is
    player 1 and the opener alternates, player 1 first.

    ``display`` sees every move. ``game_started(number, starting_player)`` and
    ``game_ended(number, record)``, when given, are called around each game (the OHT
    series tells its clients there). Each game resets both actors, A first. Every game
    starts with the ``opening`` moves (``play_game``), from its opener (a function of the
    game's number and its opener: each game's own); ``judged``: an
    actor that counts games says who won them (``play_game``). A game a player
    quit (``record.quit``) ends the match: ``game_ended`` sees it, the result holds the
    finished games only.
    """
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ValueError(f"games must be a whole number >= 0, not {games!r}")
    problem = schedule_problem(seating, openers) or (isinstance(opening, Openings) and pairs_problem(seating, openers))
    if problem:
        raise ValueError(problem)
    result = MatchResult(actor_a.label, actor_b.label)
    if isinstance(opening, Openings):
        result.openings = opening
    started = time.perf_counter()
    for number in range(games):
        a_player = seating[number % len(seating)]
        opener = openers[number % len(openers)]
        start = {"a": a_player, "b": 3 - a_player}.get(opener, opener)
        if game_started:
            game_started(number, start)
        moves = opening(number, start) if callable(opening) else opening
        record = play_game(game, {a_player: actor_a, 3 - a_player: actor_b}, start, display, moves, judged)
        if record.quit is None:
            result.records.append(record)
            result.a_players.append(a_player)
        if game_ended:
            game_ended(number, record)
        if record.quit is not None:
            break
    result.seconds = time.perf_counter() - started
    return result


def play_pairs(game: Game, actor_a: Actor, actor_b: Actor, games: int, schedule: dict[str, Sequence] = BALANCED,
               openings: str | int = "auto", seed: int | None = None, **match: Any) -> MatchResult:
    """A comparison of A and B: ``games`` games in pairs (``schedule``: ``BALANCED`` or
    ``PLAYER_1_OPENS``, A once in each seat), each pair from its own opening as
    ``match_openings`` chooses from ``openings`` and ``seed`` (by default the game's own
    when both players would replay one game); the other arguments as ``play_match``'s.
    Every figure of strength is read from one of these: ``result.distinct_games`` says how
    many games it rests on, and ``distinct_warning`` warns when that is under half."""
    chosen = match_openings(game, actor_a, actor_b, openings, seed)
    return play_match(game, actor_a, actor_b, games, opening=chosen or (), **schedule, **match)


# ---- cli.py compare -------------------------------------------------------------------------
def compare(
    game: Game, actor_a: Actor, actor_b: Actor, games: int, starting_player: int = 1, display: Display | None = None,
    openings: str | int = "auto", seed: int | None = None,
) -> dict[str, Any]:
    """``games`` games of A against B, A taking player 1 in the even games and player 2 in
    the odd ones; player ``starting_player`` opens every game. Each pair of games (A in each
    seat) begins with the same opening as ``match_openings`` chooses from ``openings``
    (by default the game's own when both players would replay one game), drawn from
    ``seed`` and the pair's number. A finished game's winner is what the first of A and B
    that counts games says (an outside engine's ``final_score``: GNU Go named as A referees
    every game), else the rules'. The match's summary: win, loss and draw rates of A
    overall, per colour and per opener, mean thinking time per move of each, game lengths,
    how many games differ (``distinct_games``), what began the pairs (``openings``), and
    A's rating less B's with its 95% interval (``rating``)."""
    result = play_pairs(game, actor_a, actor_b, games, {"seating": (1, 2), "openers": (starting_player,)}, openings,
                        seed, display=display, judged=True)
    total = result.tally()
    rating = two_player_rating(total.wins, total.losses, total.draws) if games else None
    return {**result.summary(), "starting_player": starting_player, "rating": rating,
            "warning": distinct_warning(result)}


def compare_report(result: dict[str, Any]) -> str:
    """The comparison as a small text table."""
    openings = result.get("openings")
    lines = [f"{result['a']} (A) against {result['b']} (B): {result['games']} games ({result['distinct_games']} "
             f"different), player {result['starting_player']} opens every game"
             + (f", each pair (A in each seat) from its own opening of {openings}" if openings else
                ", from the empty board")]
    lines.append(f"{'':<16}{'games':>6}{'A wins':>9}{'B wins':>9}{'draws':>8}   mean length")
    for key, title in (("a_as_player_1", "A as player 1"), ("a_as_player_2", "A as player 2"), ("total", "all")):
        t = result[key]
        by = result["game_lengths"]["by_colour"]
        if key == "total":
            mean = result["game_lengths"]["mean"]
        else:
            counts = by[key]
            mean = sum(int(k) * v for k, v in counts.items()) / max(sum(counts.values()), 1)
        lines.append(f"{title:<16}{t['games']:>6}{t['win_rate']:>9.0%}{t['loss_rate']:>9.0%}{t['draw_rate']:>8.0%}   {mean:.1f}")
    if result.get("warning"):
        lines.append(result["warning"])
    lengths = result["game_lengths"]
    lines.append(f"game lengths: {lengths['min']} to {lengths['max']} moves; by colour of A: "
                 + "; ".join(f"{k[-8:].replace('_', ' ')}: {v}" for k, v in lengths["by_colour"].items()))
    thinking = result["mean_seconds_per_move"]
    lines.append(f"mean thinking time per move: A {thinking['a'] * 1000:.1f} ms, B {thinking['b'] * 1000:.1f} ms")
    if result.get("rating"):
        lines.append(f"rating of A less B: {format_difference(result['rating'])} (Bradley-Terry; "
                     f"{PRIOR_DRAWS:g} virtual draw added)")
    return "\n".join(lines)
