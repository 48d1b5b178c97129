"""The Tournament of Progressive Policies (TOPP): a round robin of saved agents.

Every pair of agents plays a series of G games in pairs (``mctsfw.match.play_pairs``):
each agent once player 1 and once player 2 from the same start, and the starting player
alternating from pair to pair, so in a series of a multiple of 4 games each agent plays
each colour and opens in half of them. Greedy networks would replay one game, so their
pairs begin from the game's openings (random stones in Hex; ``mctsfw.match.Openings``);
sampling networks play from the empty board. The result holds the
pairwise matrix — ``matrix[i][j]`` is the number of games agent i won against agent j,
so ``matrix[i][j] + matrix[j][i]`` is G less the draws — and the wins of each agent (the
row sums), ranked, with each agent's Bradley-Terry rating on the Elo scale and its 95%
interval (``mctsfw.ratings``): random play, which ``cli.py topp`` adds to the pool
(``[topp] random_anchor``), is the anchor at 0, else the first agent is.

A long run has hundreds of checkpoints, and a round robin grows with their square:
``select_models`` keeps every Nth (``[topp] every``; the first and the last always) and
then only the last K (``[topp] last``), so a 400-generation run is still a short
tournament. ``ratings.png`` plots each checkpoint's rating against its generation or
episode, and a run's ``tb/topp/`` holds the same as TensorBoard curves.

The agents of a training run are its checkpoints (``RUN_DIR/checkpoints/*.keras``,
ordered by the episode number in the name, ``anet_ep0050.keras``); each becomes the
raw network, picking its most probable legal move (``selection="greedy"``) or sampling
from its distribution (``"sample"``)::

    game = mctsfw.make_game("hex", size=5)
    topp = TOPP.from_models(game, collect_models("runs/hex5"), games_per_series=10)
    result = topp.run()
    print(result.table()); result.save("runs/hex5/topp")   # topp.json, topp.png, ratings.png
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor
from hexzero.mctsfw.game import Game
from hexzero.mctsfw.match import BALANCED, Display, GameRecord, play_pairs, replay_record
from hexzero.mctsfw.files import read_text
from hexzero.mctsfw.ratings import RANDOM_LABEL, Ratings, fit_ratings
from hexzero.mctsfw.schema import Section, Setting

SELECTIONS = ("greedy", "sample")

#: an agent of the tournament: a unique label and the actor that plays for it
Agent = tuple[str, Actor]


# ---- the models of a run ---------------------------------------------------------------------
def episode_number(path: str | Path) -> int | None:
    """The episode of a checkpoint's file name (``anet_ep0050.keras`` -> 50), None if none."""
    from hexzero.mctsfw.runs import CHECKPOINT_PATTERN

    match = CHECKPOINT_PATTERN.match(Path(path).name)
    return int(match["episode"]) if match else None


def collect_models(source: str | Path | Iterable[str | Path]) -> list[Path]:
    """The saved models of a run, in training order, or the given files in the given order.

    ``source`` is a run directory (its ``checkpoints/*.keras``, or ``*.keras`` directly
    inside it), or a list of model files. Checkpoints (``NET_epNNNN.keras``) sort by
    episode; other ``.keras`` files follow, by name. Missing files raise
    FileNotFoundError naming them. In a list, a player spec of a registered actor kind
    (``gtp:COMMAND``, an outside engine) is kept as it is, beside the models.
    """
    from hexzero.mctsfw.actors import registered_actor_kind
    from hexzero.mctsfw.runs import list_checkpoints

    if isinstance(source, (str, Path)) and Path(source).is_dir():
        run_dir = Path(source)
        folder = run_dir / "checkpoints" if (run_dir / "checkpoints").is_dir() else run_dir
        files = [path for _, path in list_checkpoints(folder)]
        files += sorted(path for path in folder.glob("*.keras") if path not in files)
        if not files:
            raise FileNotFoundError(f"no saved models (*.keras) in {folder}")
        return files
    if isinstance(source, (str, Path)):
        source = [source]
    files = [p if registered_actor_kind(p) else Path(p) for p in source]
    missing = [str(p) for p in files if isinstance(p, Path) and not p.exists()]
    if missing:
        raise FileNotFoundError(f"model file(s) not found: {', '.join(missing)}")
    if not files:
        raise FileNotFoundError("no model files given")
    return files


def select_models(paths: Sequence[Any], every: int = 1, last: int = 0) -> list[Any]:
    """Every ``every``-th of ``paths`` (in training order), counting from the first, and
    the last one always (the most trained network is the one a tournament is for); then,
    with ``last`` > 0, only the last ``last`` of those.

    >>> select_models(list(range(11)), every=4)
    [0, 4, 8, 10]
    >>> select_models(list(range(11)), every=4, last=2)
    [8, 10]
    """
    if every < 1 or last < 0:
        raise ValueError(f"every must be >= 1 and last >= 0, not {every} and {last}")
    paths = list(paths)
    chosen = [p for i, p in enumerate(paths) if i % every == 0 or i == len(paths) - 1]
    return chosen[-last:] if last else chosen


def checkpoint_numbers(paths: Sequence[Any]) -> tuple[list[int | None], str]:
    """The generation or episode of each model file (None for others), and which of the
    two they are ("generation" when the names say ``_genNNNN``, else "episode")."""
    numbers = [episode_number(p) if isinstance(p, (str, Path)) else None for p in paths]
    kind = "generation" if any("_gen" in Path(str(p)).name for p in paths if episode_number(p) is not None) \
        else "episode"
    return numbers, kind


def model_labels(paths: Sequence[str | Path]) -> list[str]:
    """Short unique labels for model files: the file stems, with parent folders where stems clash."""
    paths = [Path(p) for p in paths]
    labels = [p.stem for p in paths]
    depth = 1
    while len(set(labels)) < len(labels) and depth < 8:
        labels = ["/".join(p.with_suffix("").parts[-depth - 1 :]) for p in paths]
        depth += 1
    if len(set(labels)) < len(labels):  # the same file given twice
        labels = [f"{label}#{i + 1}" for i, label in enumerate(labels)]
    return labels


def model_agents(
    paths: Sequence[str | Path],
    game: Game,
    selection: str = "greedy",
    seed: int | None = None,
    labels: Sequence[str] | None = None,
    temperature: float = 1.0,
) -> list[Agent]:
    """One raw-network agent per model file (``mctsfw.make_actor(path, game, search_games=0)``),
    and an outside engine per ``gtp:COMMAND`` spec among them.

    A sampling agent ``i`` gets the seed ``seed + i`` (None: fresh randomness).
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection is one of {', '.join(SELECTIONS)}, not {selection!r}")
    from hexzero.mctsfw.actors import registered_actor_kind

    outside = [registered_actor_kind(p) is not None for p in paths]
    if labels is None:  # outside engines are named by themselves (gtp:GNU Go 3.8)
        labels = model_labels([p for p, o in zip(paths, outside) if not o])[::-1]
        labels = [None if o else labels.pop() for o in outside]
    agents = []
    for i, (label, path) in enumerate(zip(labels, paths)):
        actor = mctsfw.make_actor(str(path), game, search_games=0, selection=selection,
                                  seed=None if seed is None else seed + i, temperature=temperature)
        agents.append((label or actor.label, actor))
    return agents


# ---- the result ------------------------------------------------------------------------------
@dataclass
class TOPPResult:
    """What a tournament found: the pairwise matrix, wins per agent and each series' games."""

    labels: list[str]
    games_per_series: int
    selection: str
    game: str
    matrix: list[list[int]]
    #: one entry per series: the two agents, their wins, draws, and each game's opener and winner
    pairs: list[dict[str, Any]] = field(default_factory=list)
    #: each agent's generation or episode (None: not a checkpoint, e.g. random play), for ratings.png
    numbers: list[int | None] = field(default_factory=list)
    number_kind: str = "episode"

    def draws_matrix(self) -> list[list[int]]:
        """``draws[i][j]``: the games agents i and j drew (from the series)."""
        index = {label: i for i, label in enumerate(self.labels)}
        draws = [[0] * len(self.labels) for _ in self.labels]
        for pair in self.pairs:
            i, j = index[pair["a"]], index[pair["b"]]
            draws[i][j] += pair.get("draws", 0)
            draws[j][i] += pair.get("draws", 0)
        return draws

    def ratings(self) -> Ratings:
        """Bradley-Terry ratings of the agents (Elo scale, 95% intervals), anchored at random
        play when it took part, else at the first agent."""
        return fit_ratings(self.labels, self.matrix, self.draws_matrix())

    @property
    def wins(self) -> list[int]:
        return [sum(row) for row in self.matrix]

    @property
    def games_per_agent(self) -> int:
        return self.games_per_series * (len(self.labels) - 1)

    def ranking(self) -> list[int]:
        """Agent indices, most wins first; ties keep the agents' order."""
        wins = self.wins
        return sorted(range(len(self.labels)), key=lambda i: (-wins[i], i))

    def as_dict(self) -> dict[str, Any]:
        wins = self.wins
        ratings = self.ratings().as_dict()
        return {
            "game": self.game,
            "agents": list(self.labels),
            "games_per_series": self.games_per_series,
            "selection": self.selection,
            "wins": {label: wins[i] for i, label in enumerate(self.labels)},
            "ranking": [self.labels[i] for i in self.ranking()],
            "matrix": [list(row) for row in self.matrix],
            "pairs": self.pairs,
            "numbers": list(self.numbers) or [None] * len(self.labels),
            "number_kind": self.number_kind,
            "anchor": ratings["anchor"],
            "rating_method": ratings["method"],
            "ratings": ratings["ratings"],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TOPPResult":
        return cls(
            labels=list(data["agents"]),
            games_per_series=int(data["games_per_series"]),
            selection=data["selection"],
            game=data.get("game", ""),
            matrix=[list(row) for row in data["matrix"]],
            pairs=list(data.get("pairs", [])),
            numbers=list(data.get("numbers", [])),
            number_kind=data.get("number_kind", "episode"),
        )

    @classmethod
    def load(cls, path: str | Path) -> "TOPPResult":
        return cls.from_dict(json.loads(read_text(path, "json")))

    # ---- text ----------------------------------------------------------------------------
    def table(self) -> str:
        """Wins per agent, ranked, with each one's rating and its 95% interval; a line
        below names the anchor. (In a round robin the ratings rank as the points do.)"""
        wins, total = self.wins, self.games_per_agent
        ratings = self.ratings()
        width = max([5, *map(len, self.labels)])
        lines = [f"{'rank':>4}  {'agent':<{width}}  {'wins':>5}  {'of':>5}  {'win %':>6}  {'Elo':>6}  95% interval"]
        for rank, i in enumerate(self.ranking(), 1):
            share = f"{100 * wins[i] / total:5.1f}%" if total else "     -"
            low, high = ratings.interval(i)
            span = "(anchor)" if self.labels[i] == ratings.anchor else f"{low:+.0f} to {high:+.0f}"
            lines.append(f"{rank:>4}  {self.labels[i]:<{width}}  {wins[i]:>5}  {total:>5}  {share:>6}  "
                         f"{ratings.elo[i]:>+6.0f}  {span}")
        lines.append(f"Elo: Bradley-Terry ratings, {ratings.anchor} = 0"
                     + (" (random play)" if ratings.anchor == RANDOM_LABEL else " (no random player: the first agent)"))
        counted = [pair for pair in self.pairs if "distinct_games" in pair]
        if counted:
            distinct = sum(pair["distinct_games"] for pair in counted)
            played = sum(pair["wins_a"] + pair["wins_b"] + pair.get("draws", 0) for pair in counted)
            lines.append(f"{distinct} of the {played} games differ")
            if distinct * 2 < played:
                lines.append("warning: fewer than half the games differ: the agents replay games, and the ratings rest "
                             "on the distinct ones")
        return "\n".join(lines)

    def matrix_text(self) -> str:
        """The matrix: the wins of the row agent against the column agent."""
        width = max([4, *map(len, self.labels)])
        cell = max(4, len(str(self.games_per_series)) + 1)
        numbers = [f"{j + 1:>{cell}}" for j in range(len(self.labels))]
        lines = [f"{'':>{3 + width}}  {''.join(numbers)}   wins of row against column"]
        for i, label in enumerate(self.labels):
            row = "".join(f"{'-' if i == j else v:>{cell}}" for j, v in enumerate(self.matrix[i]))
            lines.append(f"{i + 1:>2} {label:<{width}}  {row}   = {self.wins[i]}")
        return "\n".join(lines)

    def report(self) -> str:
        return (
            f"TOPP on {self.game}: {len(self.labels)} agents, {self.games_per_series} games a pair, "
            f"{self.selection} selection\n\n{self.table()}\n\n{self.matrix_text()}"
        )

    # ---- files -----------------------------------------------------------------------------
    def save_json(self, path: str | Path) -> Path:
        """Write ``as_dict()`` as JSON; the file is replaced whole or not at all."""
        from hexzero.mctsfw.checkpoints import atomic_path

        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(json.dumps(self.as_dict(), indent=2) + "\n")
        return path

    def save_heatmap(self, path: str | Path) -> Path:
        """Draw the matrix as a PNG heat map (matplotlib's Agg canvas, no window)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        import numpy as np

        k = len(self.labels)
        data = np.array(self.matrix, dtype=float)
        shown = np.ma.masked_where(np.eye(k, dtype=bool), data)
        side = min(4.0 + 0.6 * k, 18.0)
        figure = Figure(figsize=(side + 1.5, side))
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        image = axes.imshow(shown, cmap="RdYlGn", vmin=0, vmax=max(self.games_per_series, 1))
        figure.colorbar(image, ax=axes, label="games won", ticks=_colour_ticks(self.games_per_series))
        axes.set_xticks(range(k), self.labels, rotation=45, ha="right")
        axes.set_yticks(range(k), [f"{label} ({w})" for label, w in zip(self.labels, self.wins)])
        axes.set_xlabel("opponent (column)")
        axes.set_ylabel("agent (row), total wins in brackets")
        axes.set_title(f"TOPP: wins of row against column, {self.games_per_series} games a pair")
        if k <= 30:
            for i in range(k):
                for j in range(k):
                    if i != j:
                        share = self.matrix[i][j] / max(self.games_per_series, 1)
                        colour = "white" if share < 0.2 or share > 0.8 else "black"  # legible on the dark ends
                        axes.text(j, i, str(self.matrix[i][j]), ha="center", va="center", fontsize=9, color=colour)
        return save_png(figure, path)

    def save_ratings_plot(self, path: str | Path) -> Path:
        """Draw each agent's rating with its 95% interval against its generation or episode
        (agents that are not checkpoints, such as outside engines, at the right, named; with
        no checkpoints at all, the agents side by side), random play, the anchor, as the
        line at 0."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        ratings = self.ratings()
        numbers = list(self.numbers) or [None] * len(self.labels)
        checkpoints = [i for i, n in enumerate(numbers) if n is not None]
        others = [i for i, n in enumerate(numbers) if n is None and self.labels[i] != RANDOM_LABEL]
        figure = Figure(figsize=(8, 4.5))
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()

        def draw(indices: list[int], xs: list[float], **style: Any) -> None:
            axes.errorbar(xs, [ratings.elo[i] for i in indices], capsize=3,
                          yerr=[[ratings.elo[i] - ratings.interval(i)[0] for i in indices],
                                [ratings.interval(i)[1] - ratings.elo[i] for i in indices]], **style)

        if checkpoints:
            draw(checkpoints, [numbers[i] for i in checkpoints], marker="o", label="checkpoints")
            axes.set_xlabel(self.number_kind)
            if others:  # at the right of the last checkpoint, named
                last = max(numbers[i] for i in checkpoints)
                step = max(last / max(len(checkpoints), 1), 1)
                xs = [last + step * (k + 1) for k in range(len(others))]
                axes.axvline(last + step / 2, color="lightgrey", linestyle=":")  # not on the training axis
                draw(others, xs, marker="s", linestyle="none", color="tab:red", label="other agents")
                for x, i in zip(xs, others):
                    axes.annotate(self.labels[i], (x, ratings.elo[i]), textcoords="offset points", xytext=(4, 4),
                                  fontsize=8)
        else:  # no checkpoints: the agents side by side, named on the axis
            draw(others, list(range(len(others))), marker="s", linestyle="none", color="tab:red", label="agents")
            axes.set_xticks(range(len(others)), [self.labels[i] for i in others], rotation=30, ha="right")
            axes.set_xlabel("agent")
        anchor = "random play" if ratings.anchor == RANDOM_LABEL else ratings.anchor
        axes.axhline(0, color="grey", linestyle="--", linewidth=1, label=f"{anchor} (anchor, 0)")
        axes.set_ylabel("Elo (Bradley-Terry), 95% interval")
        axes.set_title(f"TOPP ratings on {self.game}, {self.games_per_series} games a pair")
        axes.legend(loc="best", fontsize=8)
        return save_png(figure, path)

    def write_curves(self, directory: str | Path) -> None:
        """The checkpoints' ratings as TensorBoard curves in ``directory`` (a run's
        ``tb/topp``), against their generation or episode; the last tournament's replace
        the ones before."""
        from hexzero.mctsfw.curves import EventFile, remove_event_files

        remove_event_files(directory)
        ratings = self.ratings()
        points = []
        for i, number in enumerate(self.numbers):
            if number is not None:
                low, high = ratings.interval(i)
                points += [("topp/elo", ratings.elo[i], number), ("topp/elo_low", low, number),
                           ("topp/elo_high", high, number)]
        EventFile(directory).add(points)

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """``topp.json``, ``topp.png`` (the matrix) and ``ratings.png`` in ``out_dir`` (made if missing)."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        return {"json": self.save_json(out_dir / "topp.json"), "png": self.save_heatmap(out_dir / "topp.png"),
                "ratings": self.save_ratings_plot(out_dir / "ratings.png")}


# ---- the tournament --------------------------------------------------------------------------
class TOPP:
    """A round robin over ``agents``: every pair plays ``games_per_series`` games.

    In the series of agents i < j, agent i is player 1 in the even games and player 2 in
    the odd ones; player 1 opens games 0 and 1, player 2 games 2 and 3, and so on; each pair
    of games from its own opening where both agents would replay one game. ``display`` sees every actual move; with ``gif_dir``
    every game is also saved there as an animated GIF (through the ``gif`` display).
    ``selection`` records how the agents pick moves (it is the caller's choice when the
    actors are built; ``from_models`` builds them so).
    """

    name = "topp"
    description = "Tournament of Progressive Policies: a round robin of saved agents, G games a pair"
    #: the models of a run directory, or the given files (see ``collect_models``)
    collect_models = staticmethod(collect_models)
    #: every Nth and the last K of them (see ``select_models``)
    select_models = staticmethod(select_models)

    def __init__(
        self,
        game: Game,
        agents: Sequence[Agent],
        games_per_series: int = 10,
        selection: str = "greedy",
        display: Display | None = None,
        gif_dir: str | Path | None = None,
        stream: TextIO | None = None,
        numbers: Sequence[int | None] | None = None,
        number_kind: str = "episode",
        seed: int | None = None,
    ):
        agents = list(agents)
        if len(agents) < 2:
            raise ValueError(f"a tournament needs at least 2 agents, not {len(agents)}")
        labels = [label for label, _ in agents]
        clashes = sorted({label for label in labels if labels.count(label) > 1})
        if clashes:
            raise ValueError(f"agent labels must be unique; repeated: {', '.join(clashes)}")
        if isinstance(games_per_series, bool) or not isinstance(games_per_series, int) or games_per_series < 1:
            raise ValueError(f"games_per_series must be a whole number of at least 1, not {games_per_series!r}")
        if selection not in SELECTIONS:
            raise ValueError(f"selection is one of {', '.join(SELECTIONS)}, not {selection!r}")
        self.game = game
        self.agents = agents
        self.games_per_series = games_per_series
        self.selection = selection
        self.display = display
        self.gif_dir = Path(gif_dir) if gif_dir is not None else None
        self.stream = stream
        self.numbers = list(numbers) if numbers is not None else [None] * len(agents)
        if len(self.numbers) != len(agents):
            raise ValueError(f"numbers: one per agent ({len(agents)}), not {len(self.numbers)}")
        self.number_kind = number_kind
        self.seed = seed  # the openings'

    @classmethod
    def from_models(
        cls,
        game: Game,
        paths: Sequence[str | Path],
        games_per_series: int = 10,
        selection: str = "greedy",
        seed: int | None = None,
        random_anchor: bool = False,
        temperature: float = 1.0,
        **kwargs: Any,
    ) -> "TOPP":
        """A tournament of saved models (raw networks, greedy or sampling), and with
        ``random_anchor`` random play first (labelled "random": the ratings' anchor)."""
        agents = model_agents(paths, game, selection=selection, seed=seed, temperature=temperature)
        numbers, kind = checkpoint_numbers(paths)
        if random_anchor:
            agents.insert(0, (RANDOM_LABEL, mctsfw.make_actor("random", game,
                                                              seed=None if seed is None else seed + len(paths))))
            numbers.insert(0, None)
        return cls(game, agents, games_per_series=games_per_series, selection=selection, numbers=numbers,
                   number_kind=kind, seed=seed, **kwargs)

    @property
    def labels(self) -> list[str]:
        return [label for label, _ in self.agents]

    def pairs(self) -> list[tuple[int, int]]:
        k = len(self.agents)
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    def run(self) -> TOPPResult:
        k = len(self.agents)
        labels = self.labels
        matrix = [[0] * k for _ in range(k)]
        details = []
        for i, j in self.pairs():
            (label_a, actor_a), (label_b, actor_b) = self.agents[i], self.agents[j]
            self._say(f"{label_a} vs {label_b}: {self.games_per_series} games")
            series = play_pairs(self.game, actor_a, actor_b, self.games_per_series, BALANCED, seed=self.seed,
                                display=self.display)
            matrix[i][j] += series.wins_a
            matrix[j][i] += series.wins_b
            games = []
            for g, record in enumerate(series.records):
                winner = series.winner(g)
                games.append({"starting_player": record.starting_player,
                              "opener": labels[i] if series.a_opened(g) else labels[j],
                              "winner": None if winner is None else labels[i] if winner == "a" else labels[j],
                              "moves": len(record.actions)})
                if self.gif_dir is not None:
                    self._save_gif(record, i, j, g)
            details.append({"a": label_a, "b": label_b, "wins_a": series.wins_a, "wins_b": series.wins_b,
                            "draws": series.draws, "distinct_games": series.distinct_games, "games": games})
            self._say(f"  {label_a} {series.wins_a} - {series.wins_b} {label_b}"
                      + (f", {series.draws} drawn" if series.draws else "")
                      + f" ({series.distinct_games} different games"
                      + (f", each pair from its own opening of {series.openings.describe()})" if series.openings else ")"))
        return TOPPResult(labels, self.games_per_series, self.selection, repr(self.game), matrix, details,
                          list(self.numbers), self.number_kind)

    def _save_gif(self, record: GameRecord, i: int, j: int, g: int) -> None:
        gif_class = mctsfw.default_registries().displays.get("gif")
        title = f"X {self.labels[i]}  vs  O {self.labels[j]}"
        gif = gif_class(title=title)
        replay_record(self.game, record, gif)
        name = f"{i + 1:02d}-{j + 1:02d}_{_file_safe(self.labels[i])}_vs_{_file_safe(self.labels[j])}_g{g + 1:02d}.gif"
        self.gif_dir.mkdir(parents=True, exist_ok=True)
        gif.save(self.gif_dir / name)

    def _say(self, line: str) -> None:
        if self.stream is not None:
            print(line, file=self.stream)
            self.stream.flush()


def _colour_ticks(games: int) -> list[int]:
    step = max(1, -(-games // 10))
    return list(range(0, games + 1, step))


def _file_safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "agent"


@mctsfw.hookimpl
def mctsfw_register_evaluators():
    return [TOPP]


#: ``[topp]``: the tournament of ``cli.py topp`` (a resumed training run may change it)
TOPP_SECTION = Section("topp", "cli.py topp: the Tournament of Progressive Policies", [
    Setting("games_per_series", 20, "G: games between every pair of agents; the starting player alternates",
            low=1, resumable=True),
    Setting("selection", "sample", 'how a network picks its move: "sample" (drawn from its policy) or "greedy" (most '
            "probable). Two greedy nets replay the same game every time they meet with the same opener, so on 5x5 "
            "Hex a greedy TOPP shows mostly who opened", choices=SELECTIONS, resumable=True),
    Setting("temperature", 0.25, 'with selection = "sample": moves drawn ~ policy^(1/T); 1 the policy itself, lower '
            "sharper (nearer its best move, still varied: 0.25 ranks the default run's checkpoints in order of "
            "training, 1 nearly flat)", low=0.01, resumable=True),
    Setting("display", False, "draw the tournament's games on the display", resumable=True),
    Setting("gif", False, "save every game as an animated GIF (in OUT/gifs unless --gif DIR)", resumable=True),
    Setting("seed", 0, "seed of sampling agents (agent i gets seed + i); -1 = a new seed every run", low=-1,
            resumable=True),
    Setting("every", 1, "take every Nth checkpoint of the run (the first and the last always) ...", low=1,
            resumable=True),
    Setting("last", 0, "... and of those only the last K; 0 = all of them", low=0, resumable=True),
    Setting("random_anchor", True, "add random play to the tournament: the anchor of the Elo ratings (0); "
            "without it the first agent is", resumable=True),
])


@mctsfw.hookimpl
def mctsfw_config_sections():
    return [TOPP_SECTION]


def save_png(figure, path: str | Path) -> Path:
    """Lay out ``figure`` and write it as a PNG at ``path`` (atomically: a reader never sees half)."""
    from hexzero.mctsfw.checkpoints import atomic_path

    figure.tight_layout()
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    return path
