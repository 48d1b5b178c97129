"""AlphaZero-style learning: self-play generations with a policy-and-value network.

Each generation: the current best network plays ``games_per_generation`` games against
itself with PUCT (priors and leaf values from the network, Dirichlet noise at the root,
moves drawn with temperature ``tau`` for the first ``temperature_moves`` moves, then
``temperature_final``); every position becomes a training case (state, visit
distribution, value target z, or the mean of z and the root's Q), with the game's
symmetries. Then the candidate network trains on the replay buffer (duplicate positions
averaged if asked), optionally plays a gating match against the best one and replaces it
only if it wins ``gating_threshold`` of the games; a checkpoint per generation.

The run is resumable as on-policy training is (``mctsfw.runs.ResumableRun``): the state
is committed after every self-play game and after every training step, so a killed run
resumes without repeating or losing a game.

Every game draws its random numbers from its own seed (the run's seed and the game's
number), so a game is the same whichever process plays it: with ``workers > 1`` the
games of a generation are played by that many processes at once, and the run is the
same as with one, only sooner. Their results are committed in game order, several at
a time when they arrive together.
"""

from __future__ import annotations

import os
import tempfile
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from mctsfw.config import plugin_params, section_settings
from mctsfw.game import Game
from mctsfw.leaf_evaluator import NetLeafEvaluator
from mctsfw.mcts import MCTS, TreePolicy, pick_action
from mctsfw.plugin_manager import Registries, default_registries
from mctsfw.replay import ReplayBuffer, game_result
from mctsfw.roles import POLICY_VALUE, require_role, role_problem
from mctsfw.runs import ResumableRun
from mctsfw.workers import WorkerPool


@dataclass
class SelfPlaySettings:
    net: str
    generations: int
    games_per_generation: int
    search_games: int
    batch_size: int
    temperature: float
    temperature_moves: int
    temperature_final: float
    value_target: str
    average_positions: bool
    augment: bool
    replay_size: int
    epochs: int
    minibatch: int
    gating: bool
    gating_games: int
    gating_threshold: float
    starting_player: str
    seed: int
    workers: int

    @classmethod
    def from_config(cls, config: dict) -> "SelfPlaySettings":
        return section_settings(cls, config, "selfplay")


Case = tuple[np.ndarray, np.ndarray, float]


def self_play_pieces(config: dict, registries: Registries) -> tuple[SelfPlaySettings, Game, type, TreePolicy]:
    """What a self-play game is built from, read from the config: the settings, the game,
    the net class and PUCT with the config's root noise."""
    s = SelfPlaySettings.from_config(config)
    game_name = config["game"]
    game = registries.games.get(game_name)(**plugin_params(config, "games", game_name))
    policy = registries.tree_policies.get("puct")(**plugin_params(config, "tree_policies", "puct"))
    return s, game, registries.nets.get(s.net), policy


def searcher(game: Game, net, policy: TreePolicy, seed: int, batch_size: int) -> MCTS:
    """PUCT search guided by ``net``: its priors and values, leaves batched under virtual loss."""
    return MCTS(game, policy, evaluator=NetLeafEvaluator(game, net), seed=seed, batch_size=batch_size)


def self_play_game(game: Game, net, policy: TreePolicy, s: SelfPlaySettings, number: int,
                   seed: int) -> tuple[dict[str, Any], list[Case]]:
    """Game ``number`` of a run with seed ``seed``: its metrics record and its training
    cases (state, visit distribution, value target), symmetries included. The game's
    random numbers come from (seed, number) alone."""
    started = time.perf_counter()
    rng = np.random.default_rng([seed, number])
    starter = (1 if number % 2 else 2) if s.starting_player == "alternate" else int(rng.choice((1, 2)))
    mcts = searcher(game, net, policy, int(rng.integers(2**31)), s.batch_size)
    state = game.initial_state(starter)
    history = []
    while not game.is_final(state):
        root = mcts.search(state, search_games=s.search_games)
        distribution = mcts.visit_distribution(root)
        history.append((net.encode_batch([state])[0], distribution, game.current_player(state), 1.0 - root.q))
        tau = s.temperature if len(history) <= s.temperature_moves else s.temperature_final
        action = pick_action(distribution, tau, rng)
        mcts.advance(action)
        state = game.next_state(state, action)
    winner = game.winner(state)
    cases = []
    for x, distribution, player, q in history:
        z = game_result(winner, player)
        target = (z + q) / 2 if s.value_target == "mean" else z
        for x_sym, d_sym in game.symmetries(x, distribution) if s.augment else [(x, distribution)]:
            cases.append((x_sym, d_sym, target))
    record = {"kind": "game", "generation": (number - 1) // s.games_per_generation + 1, "game": number,
              "starting_player": starter, "winner": winner, "moves": len(history),
              "seconds": round(time.perf_counter() - started, 3)}
    return record, cases


# ---- self-play worker processes --------------------------------------------------------------
_worker: dict[str, Any] = {}


def _worker_start(config: dict) -> None:
    """Build the game, the noisy PUCT policy and the net class once per worker process."""
    settings, game, net_class, policy = self_play_pieces(config, default_registries())
    _worker.update(settings=settings, game=game, net_class=net_class, policy=policy, net_file=None)


def _worker_game(net_file: str, generation: int, number: int, seed: int) -> tuple[dict[str, Any], list[Case]]:
    if _worker["net_file"] != (net_file, generation):  # a new generation's network
        _worker["net"] = _worker["net_class"].load(net_file, _worker["game"])
        _worker["net_file"] = (net_file, generation)
    return self_play_game(_worker["game"], _worker["net"], _worker["policy"], _worker["settings"], number, seed)


def selfplay_config_problems(config: dict, registries: Registries) -> list[str]:
    """The problems of a (well-formed) config for ``selfplay``, found before anything is written."""
    name = config["selfplay"]["net"]
    problem = role_problem(registries.nets.get(name), POLICY_VALUE, "self-play")
    return [f"selfplay.net = {name!r}: {problem}"] if problem else []


class SelfPlayTrainer(ResumableRun):
    """Runs (or resumes) the self-play run in ``run_dir`` for a validated config."""

    counter = "step"
    checkpoint_tag = "gen"
    length_key = "generations"
    unit = "step"

    def __init__(self, config: dict, run_dir: str | Path, registries: Registries | None = None, progress: bool = True):
        super().__init__(config, run_dir, progress)
        self.registries = registries or default_registries()
        self.settings, self.game, self.net_class, self.tree_policy = self_play_pieces(config, self.registries)
        self.net_name = self.settings.net
        require_role(self.net_class, POLICY_VALUE, f"selfplay.net = {self.net_name!r}: self-play")
        self.play_policy = self.registries.tree_policies.get("puct")(
            **{**plugin_params(config, "tree_policies", "puct"), "dirichlet_epsilon": 0.0}
        )
        self._pool: WorkerPool | None = None
        self.generation, self.games_done = 0, 0

    # ---- the run's state ----------------------------------------------------------------------------
    def new_state(self) -> None:
        s = self.settings
        params = plugin_params(self.config, "nets", s.net)
        params.setdefault("seed", self.seed)
        self.net = self.net_class(self.game, **params)
        self.best = self._clone(self.net)
        shape = self.net.encode_batch([self.game.initial_state()]).shape[1:]
        self.buffer = ReplayBuffer(s.replay_size, shape, self.game.num_actions, with_values=True)
        self.generation, self.games_done = 0, 0

    def load_state(self, directory: Path, progress: dict[str, Any]) -> None:
        self.generation, self.games_done = progress["generation"], progress["games_done"]
        self.net = self.net_class.load(directory / "net.keras", self.game)
        self.best = self.net_class.load(directory / "best.keras", self.game)
        self.buffer = ReplayBuffer.load(directory / "replay.npz")

    def save_state(self, directory: Path) -> None:
        self.net.save(directory / "net.keras")
        self.best.save(directory / "best.keras")
        self.buffer.save(directory / "replay.npz")

    def progress_state(self) -> dict[str, Any]:
        return {"generation": self.generation, "games_done": self.games_done}

    def _clone(self, net):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "clone.keras"
            net.save(path)
            return self.net_class.load(path, self.game)

    # ---- the loop --------------------------------------------------------------------------------
    def steps(self) -> Iterator[tuple[dict[str, Any], bool]]:
        """Each self-play game is a step, and each generation's training; games that arrive
        from the workers together are committed together."""
        s = self.settings
        while self.generation < s.generations:
            if self.games_done < s.games_per_generation:
                for (record, cases), commit in self._generation_games():
                    for x, distribution, target in cases:
                        self.buffer.add(x, distribution, target)
                    self.games_done += 1
                    yield {**record, "buffer_size": len(self.buffer)}, commit
            else:
                record = self.train_generation()
                self.generation += 1
                self.games_done = 0
                self.save_checkpoint(self.generation)
                yield record, True

    def bar_counts(self) -> tuple[int, int]:
        s = self.settings
        return self.generation * (s.games_per_generation + 1) + self.games_done, s.generations * (s.games_per_generation + 1)

    def bar_postfix(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"generation": self.generation, "buffer": len(self.buffer)}

    def completed(self) -> int:
        return self.generation

    def close(self, aborted: bool) -> None:
        if self._pool is not None:
            self._pool.close(abort=aborted)
            self._pool = None

    def _generation_games(self):
        """The rest of this generation's games, in order: ((record, cases), commit now?)."""
        s = self.settings
        first = self.generation * s.games_per_generation + self.games_done + 1
        numbers = range(first, (self.generation + 1) * s.games_per_generation + 1)
        workers = s.workers if s.workers > 0 else os.cpu_count() or 1
        if workers <= 1:
            for number in numbers:
                yield self_play_game(self.game, self.best, self.tree_policy, s, number, self.seed), True
            return
        if self._pool is None:
            self._pool = WorkerPool(workers, initializer=_worker_start, initargs=(self.config,))
        net_file = self.run.path / "workers_net.keras"  # the network the workers play with
        self.best.save(net_file)
        try:
            futures: list[Future] = [self._pool.submit(_worker_game, str(net_file), self.generation, n, self.seed)
                                     for n in numbers]
            for i, future in enumerate(futures):
                result = future.result()
                yield result, i + 1 == len(futures) or not futures[i + 1].done()
        finally:
            net_file.unlink(missing_ok=True)

    def train_generation(self) -> dict[str, Any]:
        s = self.settings
        started = time.perf_counter()
        x, pi, z = self.buffer.cases(average_positions=s.average_positions)
        stats = self.net.fit(x, pi, z, batch_size=s.minibatch, epochs=s.epochs)
        record: dict[str, Any] = {
            "kind": "generation", "generation": self.generation + 1, "cases": int(len(x)),
            "loss": float(stats["loss"]), "policy_loss": float(stats["policy_loss"]), "value_loss": float(stats["value_loss"]),
        }
        if s.gating:
            score = self.match(self.net, self.best, s.gating_games)
            record["gating_score"] = score
            record["promoted"] = score >= s.gating_threshold
            if record["promoted"]:
                self.best = self._clone(self.net)
        else:
            self.best = self._clone(self.net)
        record["seconds"] = round(time.perf_counter() - started, 3)
        return record

    def match(self, candidate, best, games: int) -> float:
        """The candidate's score against ``best`` (draws count half), colours and openers
        alternating; the first ``temperature_moves`` moves are drawn with temperature so
        that the games differ."""
        s, game = self.settings, self.game
        points = 0.0
        for i in range(games):
            seat = 1 if i % 2 == 0 else 2
            start = 1 if (i // 2) % 2 == 0 else 2
            searchers = {
                seat: searcher(game, candidate, self.play_policy, self.rng.randrange(2**31), s.batch_size),
                3 - seat: searcher(game, best, self.play_policy, self.rng.randrange(2**31), s.batch_size),
            }
            state, moves = game.initial_state(start), 0
            while not game.is_final(state):
                mcts = searchers[game.current_player(state)]
                root = mcts.search(state, search_games=s.search_games)
                tau = s.temperature if moves < s.temperature_moves else 0.0
                state = game.next_state(state, pick_action(mcts.visit_distribution(root), tau, self.np_rng))
                moves += 1
            points += game_result(game.winner(state), seat)
        return points / games
