"""Learning from the games of other players (``cli.py imitate``): a warm start for self-play.

A run is self-play's (``mctsfw.selfplay.SelfPlayTrainer``: generations of games, each
followed by a train step, the same run directory, replay records, checkpoints,
metrics, TensorBoard curves, resumption and ``cli.py topp`` ratings), except who plays
the games: two given players, ``player1`` and ``player2`` (an outside GTP engine such as
GNU Go, OpenSpiel's MCTS, ``mcts``, a saved model, ``random``: any player ``cli.py play``
seats but a person), built with the config's ``[mcts]`` and ``[play]`` settings.

The players swap sides every game (``player1`` opens the odd games, ``player2`` the
even ones; player 1 always opens, as the rules of Go, Hex and Connect Four have it).
Every game begins with ``opening_moves`` uniformly random legal moves (drawn from the
run's seed and the game's number, never a pass), so that deterministic engines do not
play one game over and over; those positions are not learnt. Each later position is a
training case: the policy target is the move played there (a one-hot visit count), the
value target the game's result for the player to move (1 a win, 0.5 a draw, 0 a loss).
The result is the game's rules' (``referee = "rules"``) or, with ``referee =
"engine"``, the first player that scores games (``Actor.judge``: a GTP engine's
``final_score``, as GNU Go referees Go with its dead-stone judgement); a resignation
loses either way. A game's metrics line has its moves, the opening's length, the
players and, where one was counted, the score.

Before each train step the network is asked to predict the moves of the generation's
games, which it has not learnt yet: ``move_accuracy`` in the step's metrics line (the
share of positions whose played move is the network's most probable one) shows how
close it comes to its teachers.

The openings follow from (seed, game number) alone; the players' own choices do not
where they draw random numbers (a search, an engine's): with ``workers > 1`` each worker
process seeds its players its own way, so a game depends on which worker played it.

Self-play then starts from the network: ``cli.py selfplay --init-net
RUN_DIR/checkpoints/NET_genNNNN.keras`` (``selfplay.init_net``).
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterator

import numpy as np

from hexzero.mctsfw.backends import die_if_asked, make_backend
from hexzero.mctsfw.config import plugin_params
from hexzero.mctsfw.game import Game, random_opening
from hexzero.mctsfw.hookspecs import hookimpl
from hexzero.mctsfw.match import play_game
from hexzero.mctsfw.players import close_actors
from hexzero.mctsfw.plugin_manager import Registries, default_registries
from hexzero.mctsfw.records import RecordedGame
from hexzero.mctsfw.replay import game_result
from hexzero.mctsfw.schema import Section, SectionSettings, Setting
from hexzero.mctsfw.selfplay import SELFPLAY_SECTION, SelfPlayTrainer, learning_run_problems


def _player_problem(value: Any) -> str | None:
    from hexzero.mctsfw.actors import actor_spec_problem

    if value == "human":
        return "human cannot play here: the games are played without a person (random, mcts, a model path, " \
               "gtp:COMMAND, openspiel:N)"
    return actor_spec_problem(value)


def imitate_config_problems(config: dict, registries: Registries) -> list[str]:
    problems = learning_run_problems(config, registries, "imitate", "imitation")
    table = config["imitate"]
    if table["referee"] == "engine" and not any(str(table[p]).startswith("gtp:") for p in ("player1", "player2")):
        problems.append('imitate.referee = "engine": neither player is an outside engine (gtp:COMMAND) that scores '
                        "games")
    return problems


#: the settings an imitation run shares with self-play: how the network learns from the games
SHARED = ("net", "init_net", "generations", "games_per_generation", "average_positions", "augment", "replay_size",
          "minibatch", "train_steps", "seed", "sgf", "workers", "backend", "ray_address")

IMITATE_SECTION = Section("imitate", "cli.py imitate: a network learns the moves and results of given players' "
                          "games (a warm start for self-play)", [
    Setting("run_dir", "runs/imitate", "the run directory (relative to the current one); an unfinished run there is "
            "resumed", resumable=True),
    Setting("player1", "mcts", "one player: random, mcts, a saved model (.keras), gtp:COMMAND (an outside engine), "
            "openspiel:N; built with the [mcts] and [play] settings, as in cli.py play; it is player 1 (who opens) "
            "in the odd games, player 2 in the even ones", check=_player_problem),
    Setting("player2", "mcts", "the other player: as player1", check=_player_problem),
    Setting("opening_moves", 2, "uniformly random legal moves (never a pass) that begin every game, not learnt from, "
            "so that the games differ", low=0),
    Setting("referee", "rules", '"rules": the game\'s rules say who won; "engine": the first outside engine among '
            "the players (its GTP final_score, as GNU Go scores Go); a resignation loses either way",
            choices=("rules", "engine")),
    *(SELFPLAY_SECTION.settings[name] for name in SHARED),
    Setting("epochs", 2, "passes over the (averaged) buffer per generation; 0 = the games recorded and nothing "
            "learnt (cli.py distill learns them from the run's buffer: many teacher games, no training between)",
            low=0),
], checks=[imitate_config_problems])


@hookimpl
def mctsfw_config_sections():
    return [IMITATE_SECTION]


class ImitateSettings(SectionSettings):
    """The ``[imitate]`` values as attributes."""

    section = IMITATE_SECTION


def imitation_pieces(config: dict, registries: Registries) -> tuple[ImitateSettings, Game, type, None]:
    """(settings, game, net class, no tree policy) of an imitation run."""
    s = ImitateSettings.from_config(config)
    game = registries.games.get(config["game"])(**plugin_params(config, "games", config["game"]))
    return s, game, registries.nets.get(s.net), None


def make_imitation_players(config: dict, game: Game, seed: int) -> dict:
    """The two players of the games, built as ``cli.py play`` builds them."""
    from hexzero.mctsfw.players import make_players

    table = config["imitate"]
    return make_players({1: table["player1"], 2: table["player2"]}, game, config, seed)


def imitation_game(game: Game, players: dict, s: ImitateSettings, number: int,
                   seed: int) -> tuple[dict[str, Any], RecordedGame]:
    """Game ``number`` of a run with seed ``seed`` between ``players``: (its metrics record,
    the game with its targets: the moves played after the opening, the result)."""
    started = time.perf_counter()
    rng = np.random.default_rng([seed, number])
    seats = players if number % 2 else {1: players[2], 2: players[1]}  # both players play both sides
    opening = random_opening(game, 1, s.opening_moves, rng)
    played = play_game(game, seats, 1, opening=opening, judged=s.referee == "engine")
    winner, score = played.winner, played.score
    if score is None and played.resigned is None and hasattr(game, "score"):
        score = float(game.score(played.states[-1]))
    counts, values = [], []
    for i, (state, action) in enumerate(zip(played.states, played.actions)):
        target = np.zeros(game.num_actions, dtype=np.int64)
        if i >= len(opening):
            target[action] = 1
        counts.append(target)
        values.append(game_result(winner, game.current_player(state)))
    recorded = RecordedGame.from_targets(game.num_actions, 1, played.actions, counts, values, winner)
    record = {"kind": "game", "generation": (number - 1) // s.games_per_generation + 1, "game": number,
              "starting_player": 1, "winner": winner, "moves": [int(a) for a in played.actions],
              "opening": len(opening), "players": {str(p): seats[p].label for p in (1, 2)}}
    if played.resigned is not None:
        record["resigned"] = played.resigned
    if score is not None:
        record["score"] = score
    record["seconds"] = round(time.perf_counter() - started, 3)
    return record, recorded


# ---- workers (processes or Ray tasks, mctsfw.backends): each keeps its two players -----------------
_worker: dict[str, Any] = {}


def _worker_game(config: dict, numbers: list[int], seed: int) -> list[tuple[dict[str, Any], RecordedGame]]:
    die_if_asked(numbers)
    if _worker.get("config") != config:
        close_actors(_worker.get("players", {}).values())
        settings, game, _, _ = imitation_pieces(config, default_registries())
        _worker.clear()
        _worker.update(config=config, settings=settings, game=game,
                       players=make_imitation_players(config, game, seed + os.getpid()))
    return [imitation_game(_worker["game"], _worker["players"], _worker["settings"], number, seed)
            for number in numbers]


class ImitationTrainer(SelfPlayTrainer):
    """Runs (or resumes) the imitation run in ``run_dir`` for a validated config."""

    section, what = "imitate", "imitation"
    pieces = staticmethod(imitation_pieces)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._players: dict | None = None  # the players of games played in this process
        if not self.settings.epochs:  # the games recorded, nothing learnt: distill learns them
            self.next_command = "distill"

    def game_sizes(self) -> list[int]:
        return []  # the teachers play the config's size

    def _generation_games(self) -> Iterator[tuple[tuple[dict[str, Any], RecordedGame], bool]]:
        """The rest of this generation's games, in order: ((metrics record, recorded game), commit now?)."""
        s = self.settings
        first = self.generation * s.games_per_generation + self.games_done + 1
        numbers = range(first, (self.generation + 1) * s.games_per_generation + 1)
        workers = s.workers if s.workers > 0 else os.cpu_count() or 1
        if s.backend == "processes" and workers <= 1:
            if self._players is None:
                self._players = make_imitation_players(self.config, self.game, self.seed)
            for number in numbers:
                yield imitation_game(self.game, self._players, s, number, self.seed), True
            return
        if self._backend is None:
            self._backend = make_backend(s.backend, s.workers, s.ray_address)
        for results, next_ready in self._backend.play(_worker_game, [[n] for n in numbers],
                                                      lambda group: (self.config, group, self.seed)):
            yield results[0], not next_ready

    def train_generation(self) -> dict[str, Any]:
        started = time.perf_counter()
        accuracy = self.move_accuracy() if self.settings.epochs else None
        record = self.fit()
        if accuracy is not None:
            record["move_accuracy"] = round(accuracy, 4)
        self.best = self.net
        record["seconds"] = round(time.perf_counter() - started, 3)
        return record

    def move_accuracy(self) -> float | None:
        """The share of this generation's learnt positions (not trained on yet) whose played
        move is the network's most probable legal one."""
        records = self.buffer.records[-self.settings.games_per_generation:]
        states, played = [], []
        for recorded in records:
            targeted = set(int(i) for i in recorded.targeted())
            for i, state in enumerate(recorded.states(self.game)):
                if i in targeted:
                    states.append(state)
                    played.append(int(recorded.moves[i]))
        if not states:
            return None
        hits = 0
        for start in range(0, len(states), 256):
            chunk = states[start:start + 256]
            probs = self.net.forward(self.net.encode_batch(chunk))
            masks = self.game.legal_masks(chunk)
            hits += int(np.sum(np.argmax(probs * masks, axis=1) == np.asarray(played[start:start + 256])))
        return hits / len(states)

    def sgf_players(self, record: dict[str, Any]) -> dict[int, str]:
        return {p: record["players"][str(p)] for p in (1, 2)}

    def close(self, aborted: bool) -> None:
        super().close(aborted)
        if self._players is not None:
            close_actors(self._players.values())
            self._players = None
