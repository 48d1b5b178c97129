"""Distillation (``cli.py distill``): a network learns the games earlier runs recorded.

A self-play or imitation run keeps its games in its replay buffer (moves and search
targets, ``mctsfw.replay``), committed in ``RUN_DIR/resume/*/replay.npz``. Distillation
trains any registered policy-and-value network on the games of one or more such runs
(``sources``: run directories, whose last committed buffer is read, or replay files),
from scratch or from ``init_net``, for ``epochs`` passes over every case (duplicate
positions merged with ``average_positions``, the board's symmetries added with
``augment``), at the learning rate ``learning_rates`` gives each epoch: a student net of
another architecture learns what a run's teacher searched, without a game played. Runs
of several board sizes of one game mix in one distillation when the network plays every
size (``pv_resnet`` with ``heads = "convolutional"``): each step trains on the cases of
each size it drew, one size after the other.

A share of the games (``validation_share``, drawn from the seed) is held out: after every
epoch the network's policy cross-entropy and value error on them are measured, so a
network that learns its training games by heart shows it. The run is resumable as the
other runs are (``mctsfw.runs.ResumableRun``): a step is ``step_cases`` cases of an
epoch's order (drawn from the seed and the epoch's number), the network and its
optimizer committed after each, so an interrupted run resumes at the step after the last
one committed, repeating and losing none. A checkpoint is written after each epoch
(``NET_epNNNN.keras``, number 0 the starting network); the metrics lines become
TensorBoard curves.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from hexzero.mctsfw.checkpoints import describe_settings
from hexzero.mctsfw.config import plugin_params, read_toml
from hexzero.mctsfw.game import Game, turned_at_random
from hexzero.mctsfw.hookspecs import hookimpl
from hexzero.mctsfw.plugin_manager import Registries, default_registries
from hexzero.mctsfw.replay import ReplayBuffer, source_buffer_path
from hexzero.mctsfw.roles import POLICY_VALUE, role_problem
from hexzero.mctsfw.runs import ResumableRun, RunDirError
from hexzero.mctsfw.schema import Section, SectionSettings, Setting
from hexzero.mctsfw.selfplay import init_net_problem, size_buffers, sizes_problem, starting_net


def source_buffers(source: str | Path, params: dict) -> list[tuple[Path, dict]]:
    """(replay file, game parameters) of each buffer a source holds: a run that played
    several board sizes (``selfplay.sizes``) has one for each, ``params`` its game's."""
    main = source_buffer_path(source)
    if not Path(source).is_dir():
        return [(main, params)]
    return [(main, params), *((path, {**params, "size": size}) for size, path in size_buffers(main.parent).items())]


def source_game(source: str | Path) -> dict | None:
    """The game (``game`` and its ``[games.NAME]`` table) of a source run's config.toml; None for a bare file."""
    config_path = Path(source) / "config.toml"
    if not config_path.is_file():
        return None
    saved = read_toml(config_path)
    name = saved.get("game")
    return {"game": name, "games": {name: dict(saved.get("games", {}).get(name, {}))}} if isinstance(name, str) else None


def distill_config_problems(config: dict, registries: Registries) -> list[str]:
    """The problems of a (well-formed) config's ``[distill]`` that every command checks: its net's
    role, and ``random_symmetry`` asked beside ``augment``."""
    table = config["distill"]
    name = table["net"]
    problem = role_problem(registries.nets.get(name), POLICY_VALUE, "distillation") if name in registries.nets else None
    problems = [f"distill.net = {name!r}: {problem}"] if problem else []
    if table["augment"] and table["random_symmetry"]:
        problems.append("distill.random_symmetry: augment already adds every symmetry of each case; set one of them "
                        "to false")
    return problems


def sources_problems(config: dict, registries: Registries) -> list[str]:
    """What ``cli.py distill`` refuses before it starts: no sources, a source that is not a
    run or a replay file, a run of another game, an ``init_net`` the game cannot use."""
    table = config["distill"]
    if not table["sources"]:
        return ["distill.sources: give the runs (or replay files) whose games the network learns"]
    problems = []
    game, params = config["game"], plugin_params(config, "games", config["game"])
    for source in table["sources"]:
        try:
            source_buffer_path(source)
        except RunDirError as error:
            problems.append(f"distill.sources: {error}")
            continue
        made = source_game(source)
        if made is None:
            continue
        played = made["games"][made["game"]]
        if made["game"] == game:  # a parameter the run's config lacks (declared since) at its default
            played = {**registries.games.get(game).parameters.defaults(), **played}
        if made["game"] != game or without_size(played) != without_size(params):
            problems.append(f"distill.sources: {source} played {describe_settings(made['game'], played)}, not the "
                            f"config's {describe_settings(game, params)} (runs may differ in board size alone)")
    if problems:
        return problems
    made_game = registries.games.get(game)(**params)
    if table["init_net"]:
        if problem := init_net_problem(table["init_net"], registries.nets.get(table["net"]), made_game):
            return [f"distill.init_net = {table['init_net']!r}: {problem}"]
    played = [g for source, p in source_games(table["sources"], game, params).items() for _, g in source_buffers(source, p)]
    sizes = {describe_settings(game, g): g for g in [params, *played]}
    if len(sizes) > 1:  # the network must play every size: asked of one built (or loaded) as the run will
        net = starting_net(config, registries, "distill", made_game, seed=0)
        games = [registries.games.get(game)(**params_of_size) for params_of_size in sizes.values()]
        if problem := sizes_problem(net, games, table["net"]):
            problems.append(f"distill.sources: runs of {problem}")
    return problems


def without_size(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "size"}


def source_games(sources: list[str], game: str, params: dict) -> dict[str, dict]:
    """Each source's game parameters: its run's, or the config's for a replay file alone."""
    found = {}
    for source in sources:
        made = source_game(source)
        found[source] = {**params, **made["games"][game]} if made is not None else dict(params)
    return found


DISTILL_SECTION = Section("distill", "cli.py distill: a network learns the games recorded by earlier runs", [
    Setting("run_dir", "runs/distill", "the run directory (relative to the current one); an unfinished run there is "
            "resumed", resumable=True),
    Setting("sources", [], "the games learnt: run directories (their last committed replay buffer) or replay files "
            "(replay.npz); a run's game must be the config's (the first run's is, unless the config names one)",
            items=Setting("source", "runs/selfplay", "a run directory or a replay file")),
    Setting("net", "pv_resnet", "the policy-and-value net plugin that learns (its [nets.<net>] table)", plugin="net"),
    Setting("init_net", "", "a saved network of that net to start from instead of an untrained one; \"\" = "
            "untrained", empty=True),
    Setting("epochs", 5, "passes over every case", low=1, resumable=True),
    Setting("learning_rates", [], "the learning rate of each epoch (the last one repeats); [] = the net's "
            "learning_rate throughout", items=Setting("learning_rate", 0.001, "a learning rate", low=0, above=True)),
    Setting("minibatch", 256, "cases per gradient step", low=1),
    Setting("step_cases", 65536, "cases trained between commits (a step; an interrupted run loses at most one)",
            low=1),
    Setting("average_positions", True, "merge duplicate positions, averaging their targets"),
    Setting("augment", True, "add the game's symmetric cases (every one: an epoch is as many passes as the board "
            "has symmetries, 8 on a square board)"),
    Setting("random_symmetry", False, "instead of augment: each case of a step is seen turned by one of the board's "
            "symmetries drawn at random (an epoch stays one pass; a new turn every epoch)"),
    Setting("validation_share", 0.02, "share of the games held out to measure the network on after each epoch",
            low=0, high=0.5),
    Setting("seed", 0, "random seed of the run (the held-out games, the order of the cases); -1 = a new seed every "
            "run", low=-1),
], checks=[distill_config_problems])


@hookimpl
def mctsfw_config_sections():
    return [DISTILL_SECTION]


class DistillSettings(SectionSettings):
    """The ``[distill]`` values as attributes."""

    section = DISTILL_SECTION


def held_out(count: int, share: float, seed: int) -> np.ndarray:
    """Which of ``count`` games are held out for validation (a boolean mask drawn from ``seed``)."""
    mask = np.zeros(count, dtype=bool)
    if share > 0 and count > 1:
        chosen = np.random.default_rng([seed, 1]).choice(count, size=max(1, round(share * count)), replace=False)
        mask[chosen] = True
    return mask


class DistillTrainer(ResumableRun):
    """Runs (or resumes) the distillation run in ``run_dir`` for a validated config."""

    counter = "step"
    checkpoint_tag = "ep"
    length_key = "epochs"
    unit = "step"

    def __init__(self, config: dict, run_dir: str | Path, registries: Registries | None = None, progress: bool = True):
        super().__init__(config, run_dir, progress)
        registries = registries or default_registries()
        self.settings = DistillSettings.from_config(config)
        self.game: Game = registries.games.get(config["game"])(**plugin_params(config, "games", config["game"]))
        self.net_class = registries.nets.get(self.settings.net)
        self.net_name = self.settings.net
        self.parts: list = []  # (the size's game, the network's view of it, its cases)

    @classmethod
    def config_problems(cls, config: dict) -> list[str]:
        return sources_problems(config, default_registries())

    # ---- the cases -------------------------------------------------------------------------------
    def _load_cases(self) -> None:
        """Every source's games, split into training and held-out games, rebuilt into cases,
        one part per board size (the network's view of that size, its cases)."""
        s = self.settings
        registries = default_registries()
        params_of = source_games(s.sources, self.config["game"], plugin_params(self.config, "games", self.config["game"]))
        records: dict[str, list] = {}
        games: dict[str, Game] = {}
        for path, params in (pair for source in s.sources for pair in source_buffers(source, params_of[source])):
            key = describe_settings(self.config["game"], params)
            if key not in games:
                games[key] = registries.games.get(self.config["game"])(**params)
            encode = games[key].encode  # the records alone are wanted here: any encoding of the size does
            records.setdefault(key, []).extend(ReplayBuffer.load(
                path, games[key], lambda states, encode=encode: np.stack([encode(x) for x in states])).records)
        heads = getattr(self.net, "aux_heads", ())
        self.parts = []
        for key in sorted(records, key=lambda k: games[k].num_actions):
            game = games[key]
            view = self.net if game.params() == self.game.params() else self.net.for_game(game)
            validation = held_out(len(records[key]), s.validation_share, self.seed)
            data = {}
            for name, keep in (("train", ~validation), ("validation", validation)):
                chosen = [record for record, kept in zip(records[key], keep) if kept]
                buffer = ReplayBuffer(max(1, sum(len(r.targeted()) for r in chosen)) * 8 + 1, game, view.encode_batch,
                                      augment=s.augment and name == "train")
                for record in chosen:
                    buffer.add(record)
                data[name] = buffer.cases(average_positions=s.average_positions, aux=bool(heads)) if chosen else ()
            self.parts.append((game, view, data))
        self.offsets = np.cumsum([0] + [len(data["train"][0]) if data["train"] else 0 for _, _, data in self.parts])
        if not self.offsets[-1]:
            raise RunDirError(f"distill.sources: no positions to learn in {', '.join(map(str, s.sources))}")

    @property
    def cases(self) -> int:
        """Training cases of every size."""
        return int(self.offsets[-1])

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(self.cases / self.settings.step_cases)

    def learning_rate(self, epoch: int) -> float:
        """The learning rate of epoch ``epoch`` (from 0)."""
        rates = self.settings.learning_rates
        return float(rates[min(epoch, len(rates) - 1)]) if rates else self.base_rate

    # ---- the run's state -------------------------------------------------------------------------
    def new_state(self) -> None:
        self.net = starting_net(self.config, default_registries(), "distill", self.game, self.seed)
        self._load_cases()

    def load_state(self, directory: Path, progress: dict[str, Any]) -> None:
        self.net = self.net_class.load(directory / "net.keras", self.game)
        self._load_cases()

    def save_state(self, directory: Path) -> None:
        self.net.save(directory / "net.keras")

    @property
    def base_rate(self) -> float:
        """The learning rate of ``[nets.<net>]`` (a run keeps it from its start); a net that
        declares none keeps its own."""
        return float(plugin_params(self.config, "nets", self.settings.net).get("learning_rate", self.net.learning_rate))

    # ---- the loop ----------------------------------------------------------------------------------
    def steps(self) -> Iterator[tuple[dict[str, Any], bool]]:
        s = self.settings
        heads = getattr(self.net, "aux_heads", ())
        while self.step < s.epochs * self.steps_per_epoch:
            started = time.perf_counter()
            epoch, part = divmod(self.step, self.steps_per_epoch)
            order = np.random.default_rng([self.seed, 2, epoch]).permutation(self.cases)
            chosen = np.sort(order[part * s.step_cases:(part + 1) * s.step_cases])
            rate = self.learning_rate(epoch)
            self.net.set_learning_rate(rate)
            self.net.rng = np.random.default_rng([self.seed, 3, self.step])  # the step's shuffle, resumed or not
            totals: dict[str, float] = {}
            turns = np.random.default_rng([self.seed, 4, self.step])  # the step's symmetries, resumed or not
            for index, (game, view, data) in enumerate(self.parts):  # each size's cases of the step, one size at a time
                mine = chosen[(chosen >= self.offsets[index]) & (chosen < self.offsets[index + 1])] - self.offsets[index]
                if not len(mine):
                    continue
                x, pi, z, *aux = (part[mine] for part in data["train"])
                if s.random_symmetry:  # the points of the move and ownership targets turned with the board
                    x, moved = turned_at_random(game, x, turns)
                    pi, aux = np.take_along_axis(pi, moved, axis=1), [np.take_along_axis(a, moved, axis=1)
                                                                       if a.ndim == 2 else a for a in aux]
                view.rng = self.net.rng
                extra = {"aux": {h: a for h, a in zip(("ownership", "score"), aux)}} if heads else {}
                stats = view.fit(x, pi, z, batch_size=s.minibatch, epochs=1, **extra)
                for key in ("loss", "policy_loss", "value_loss", *(f"{head}_loss" for head in heads)):
                    totals[key] = totals.get(key, 0.0) + stats[key] * len(mine)
            record: dict[str, Any] = {"epoch": epoch + 1, "cases": int(len(chosen)),
                                      **{key: value / len(chosen) for key, value in totals.items()},
                                      "learning_rate": rate}
            if len(self.parts) > 1:
                self.net.refresh()  # its numpy pass, after training through the other sizes' views
            if part + 1 == self.steps_per_epoch:  # the epoch's end: measured on the held-out games, and saved
                record.update(self.validation())
                self.save_checkpoint(epoch + 1)
            record["seconds"] = round(time.perf_counter() - started, 3)
            yield record, True

    def validation(self) -> dict[str, Any]:
        """The network on the held-out games of every size: its policy's cross-entropy
        against their targets, its value's mean squared error (on the [0, 1] scale), and how
        often its most probable move is the one the targets favour most."""
        cross, error, agree, count = 0.0, 0.0, 0, 0
        for _, view, data in self.parts:
            if not data["validation"]:
                continue
            view.refresh()
            x, pi, z = data["validation"][:3]
            for start in range(0, len(x), 1024):
                probs, values = view.evaluate(x[start:start + 1024])
                target = pi[start:start + 1024]
                cross += float(-(target * np.log(np.maximum(probs, 1e-12))).sum())
                error += float(((values - z[start:start + 1024]) ** 2).sum())
                agree += int((probs.argmax(axis=1) == target.argmax(axis=1)).sum())
            count += len(x)
        if not count:
            return {}
        return {"validation_policy_loss": round(cross / count, 5), "validation_value_mse": round(error / count, 5),
                "validation_move_agreement": round(agree / count, 4), "validation_cases": count}

    def bar_counts(self) -> tuple[int, int]:
        return self.step, self.settings.epochs * self.steps_per_epoch

    def bar_postfix(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"epoch": record["epoch"], "loss": f"{record['loss']:.3f}"}

    def completed(self) -> int:
        return self.step // self.steps_per_epoch
