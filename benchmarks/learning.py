"""How strong self-play makes a network per minute of training, one curve per recipe.

    python benchmarks/learning.py [--games-list connect4,hex5,hex7,hex9,go9,go13,gomoku15,hex9-student,...]
                                  [--recipes today,gumbel,caps,both]
                                  [--minutes 20] [--parallel 2] [--points 5] [--eval-games 20]
                                  [--out runs/learning] [--target 0.5] [--search-games N]

For each game, each recipe trains a fresh network with ``cli.py selfplay`` for
``--minutes`` of wall-clock time (``--parallel`` recipes at once, each on one core: the
machine's load weighs on all of them alike), stopped by SIGTERM as a user's ``kill``
would (the run keeps every finished generation). Every recipe starts from the game's
shipped configuration (network, replay, training steps) with 20 games a generation, so
each run leaves a checkpoint every minute or two; the recipes differ in their search:

- ``today``: PUCT with Dirichlet noise, the configuration's search games for every move;
- ``gumbel``: Gumbel AlphaZero's root search (``selfplay.tree_policy = "gumbel"``) with
  32 search games a move, its improved policy the target;
- ``caps``: playout cap randomization: a quarter of the moves get the full search and
  become targets, the others 32 search games;
- ``both``: Gumbel with 64 search games for a quarter of the moves, 16 for the others;
- ``mix``: today's search, the value target half the result and half the root's value.

Then the checkpoint each recipe had at ``--points`` evenly spaced times (and its first)
plays ``--eval-games`` games, the raw network (its most probable legal move) against UCT
with random rollouts (each game's opponents, ``GAMES``), each side player 1 in half of
them and opening in half of each half. On 5x5 Hex it also plays ``--eval-games`` games
against perfect play (``benchmarks/hex_perfect.py``, the same random openings for every
checkpoint): the share of the won positions it met that its move kept won ("kept").
The script prints each recipe's score against the strongest opponent over time and the
minutes each needed to reach ``--target``, draws ``OUT/learning.png`` (one panel a game)
and logs every score to TensorBoard (``tensorboard --logdir OUT/tb``: the step is the
training second).

A recipe may be several commands one after the other (``Stage``: a command, its settings,
its share of the minutes; a later stage starts from the last network of the one before;
a stage's checkpoints are named by its run, ``run2/NET_genNNNN.keras``). 9x9 Hex
(``hex9``, ``configs/hex9-mohex.toml``'s size-general ResNet, 10 games a generation) has
three: ``scratch``, self-play from nothing; ``from7x7``, self-play on 7x7 for a third of
the minutes, then on 9x9; ``mohex``, imitation of MoHex 2.0 at 300 simulations for half
the minutes, then self-play (MoHex built: ``scripts/build_mohex.sh``). Its picture shows the
scores against UCT(1000) (``Bench.plotted``).

A student's self-play past its teacher (``hex9-student``, ``hex11-student``, ``go13-student``,
``gomoku15-student``): self-play from the shipped network that learnt the teacher's games
(``STUDENT``: Gumbel 64 simulations a move, 64 games a generation, games ended at a proof),
in the recipes ``student`` names (``gumbel64``, ``steps48``, ``caps48``, and for 9x9 Hex
``caps48-teacher``, MoHex's own games kept in training), its checkpoints playing with PUCT
against the teacher itself from the game's openings, player 1 opening every game: MoHex 2.0 at 1,000
simulations for Hex (``models/hex9-distill`` on 9x9, ``models/hex11``, its 9x9 self-play, on
11x11), GNU Go level 5 and Pachi at 5,000 playouts for 13x13 Go (``models/go13``), Rapfi at
10,000 nodes for 15x15 Gomoku (``models/gomoku15``). The picture draws the teacher's 50%
against itself as the line to cross (``Bench.teacher``). The first point is the student.
``--search-games N`` has the checkpoints of every bench that searches search N simulations
a move instead of its own budget (their scores kept apart in ``scores.json``).

Go 9x9 (``go9``) is learnt from GNU Go instead (``cli.py imitate`` with the ``[imitate]``
section of ``configs/go9.toml``: GNU Go level 10 against itself, 10 games a generation,
one pass over the replay), and its recipes are KataGo's pieces (Wu 2019), each alone:

- ``plain``: the configuration's network as it is;
- ``aux``: an ownership head (weight 1.5) and a score head (weight 0.5) as auxiliary targets;
- ``pool``: global pooling in every residual block.

Its checkpoints play with PUCT (200 simulations, leaves half value head and half light
playout) against GNU Go level 1, GNU Go's ``final_score`` the referee, Black opening every
game and the network taking each colour in half of them; the table also shows each run's
last ``move_accuracy`` (the share of GNU Go's moves in games it had not yet seen that the
network ranked first) and, since at this budget GNU Go wins nearly every game, each
recipe's last checkpoint against ``plain``'s last, ``--eval-games`` games, each side Black
in half. The fourth piece, ``random_symmetry``, changes only the search, so it is measured
on one network: ``scripts/strength_report.py --random-symmetry``.

Go 13x13 (``go13``, ``configs/go13.toml``: the seed's 11 planes and 10-block network) is
learnt from GNU Go the same way (two random opening moves, one pass over the replay, no
symmetries), and its recipes are the teacher: GNU Go at ``level1`` (the opponent itself:
many fast games), ``level5`` or ``level10`` (fewer, better games). Its checkpoints play
with PUCT (200 simulations) against GNU Go level 1 as the 9x9 ones do, and each recipe's
last against ``level1``'s last. Gomoku 15x15 (``gomoku15``, ``configs/gomoku15.toml``'s
6x64 ResNet, 10 games a generation) has two: ``scratch``, self-play from nothing, and
``rapfi``, imitation of Rapfi at 10,000 nodes a move (two random opening moves, 50 games
a generation, the 8 symmetries) for half the minutes, then self-play; its checkpoints
play with PUCT (200 simulations) against UCT(1000) (the picture: a short run moves against
it) and Rapfi at 100 nodes a move, Black opening every game and the network Black in half
(Rapfi built: ``scripts/build_rapfi.sh``).

Training runs that finished are kept (``OUT/GAME/RECIPE/done.json``) and the scores of
each checkpoint are saved as they come (``OUT/GAME/RECIPE/scores.json``), so a second run
of the command only does what is missing. A training run cut short is started afresh: its
minutes must be one stretch of wall-clock time to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.config import load_config  # noqa: E402
from hexzero.mctsfw.curves import EventFile  # noqa: E402
from hexzero.mctsfw.interrupts import exit_status, stop_on_sigterm  # noqa: E402
from hexzero.mctsfw.match import BALANCED, PLAYER_1_OPENS, distinct_warning, play_pairs  # noqa: E402
from hexzero.mctsfw.players import close_actors  # noqa: E402
from hexzero.mctsfw.runs import RunDir  # noqa: E402
from hexzero.plugins.gtp import gnugo_spec  # noqa: E402
from hexzero.plugins.mohex import find_mohex  # noqa: E402
from hexzero.plugins.pachi import find_pachi  # noqa: E402
from hexzero.plugins.rapfi import find_rapfi  # noqa: E402
from search_strength import wilson  # noqa: E402

#: what every self-play recipe changes in the game's configuration
COMMON = ["selfplay.games_per_generation=20", "selfplay.generations=100000", "selfplay.workers=1",
          "selfplay.sgf=false", "selfplay.seed=1"]
RECIPES = {
    "today": [],
    "gumbel": ['selfplay.tree_policy="gumbel"', "selfplay.search_games=32"],
    "caps": ["selfplay.full_search_share=0.25", "selfplay.fast_search_games=32"],
    "both": ['selfplay.tree_policy="gumbel"', "selfplay.search_games=64", "selfplay.full_search_share=0.25",
             "selfplay.fast_search_games=16"],
    "mix": ['selfplay.value_target="mix"', "selfplay.value_mix=0.5"],
}
#: KataGo's pieces that change what the network learns, each alone (Go: imitation of GNU Go)
KATAGO = {
    "plain": [],
    "aux": ["nets.pv_resnet.ownership_weight=1.5", "nets.pv_resnet.score_weight=0.5"],
    "pool": ["nets.pv_resnet.global_pooling=true"],
}


@dataclass(frozen=True)
class Stage:
    """One training command of a recipe: ``cli.py COMMAND`` with the bench's common settings
    for that command and ``settings``, for ``share`` of the recipe's minutes; a stage after
    the first starts from the last network the stage before it saved (``COMMAND.init_net``)."""

    command: str
    settings: tuple[str, ...] = ()
    share: float = 1.0


@dataclass(frozen=True)
class Bench:
    """How a game is learnt and measured: its configuration, the command that trains it
    (with what every recipe changes and the recipes: a recipe is a list of settings for
    that command, or a tuple of ``Stage``s run one after the other in its minutes), the
    opponents (a column name and ``make_actor``'s spec and parameters each, the strongest
    last) and the network's own parameters as a player (none: the raw network)."""

    config: str
    opponents: dict[str, tuple[str, dict]]
    command: str = "selfplay"
    common: tuple[str, ...] = tuple(COMMON)
    recipes: dict[str, list[str] | tuple[Stage, ...]] = field(default_factory=lambda: RECIPES)
    agent: dict = field(default_factory=dict)
    first_player_starts: bool = False  # Go: Black opens every game
    head_to_head: bool = False  # also each recipe's last checkpoint against the first recipe's
    plotted: str = ""  # the opponent column drawn in the picture ("": the strongest)
    teacher: str = ""  # the opponent a student's self-play must pass: its 50% is drawn as the line to cross
    scored: str = ""  # after each score's name in scores.json: the agent's search where --search-games set it

    def stages(self, recipe: str) -> tuple[Stage, ...]:
        steps = self.recipes[recipe]
        return steps if isinstance(steps, tuple) else (Stage(self.command, tuple(steps)),)

    def settings(self, stage: Stage) -> list[str]:
        """What a stage's command is given: the bench's common settings renamed to its section, then its own."""
        common = [s.replace(f"{self.command}.", f"{stage.command}.", 1) for s in self.common]
        return [*common, *stage.settings]


def searching(bench: Bench, search_games: int) -> Bench:
    """``bench`` with its checkpoints searching ``search_games`` simulations a move (a bench
    of the raw network as it is), their scores kept apart from its own budget's."""
    if not bench.agent or bench.agent.get("search_games") == search_games:
        return bench
    return replace(bench, agent={**bench.agent, "search_games": search_games}, scored=f" at {search_games} simulations")


def uct(*budgets: int) -> dict[str, tuple[str, dict]]:
    return {f"UCT({n})": ("mcts", {"search_games": n}) for n in budgets}


#: 9x9 Hex with the size-general network of configs/hex9-mohex.toml: from nothing, from the
#: same recipe on 7x7 for the first third of the minutes, or imitating MoHex 2.0 (300
#: simulations a move: ~4 games a minute on one core) for the first half, self-play after
HEX9_SELFPLAY = ("selfplay.games_per_generation=10",)  # a checkpoint every minute or so
HEX9 = {
    "scratch": (Stage("selfplay", HEX9_SELFPLAY),),
    "from7x7": (Stage("selfplay", (*HEX9_SELFPLAY, "games.hex.size=7", "tree_policies.puct.dirichlet_alpha=0.2"), 1 / 3),
                Stage("selfplay", HEX9_SELFPLAY, 2 / 3)),
    "mohex": (Stage("imitate", ('imitate.player1="mohex:300"', 'imitate.player2="mohex:300"',
                                "imitate.games_per_generation=10"), 1 / 2),
              Stage("selfplay", HEX9_SELFPLAY, 1 / 2)),
}

#: what every Go recipe (imitation of GNU Go) changes in the game's configuration
GO_IMITATE = ("imitate.games_per_generation=10", "imitate.generations=100000", "imitate.workers=1",
              "imitate.epochs=1", "imitate.sgf=false", "imitate.seed=1")
#: 13x13 Go learnt from GNU Go (configs/go13.toml's network, the 11 planes, komi 7.5, and its
#: [imitate] with two random opening moves): which teacher at equal time, the opponent
#: itself (many fast games) or stronger levels (fewer, better games)
GO13 = {f"level{n}": [f'imitate.{p}="{gnugo_spec(n)}"' for p in ("player1", "player2")] for n in (1, 5, 10)}
#: 15x15 Gomoku: self-play from nothing, or Rapfi (10,000 nodes a move, two random opening
#: moves) imitated for the first half of the minutes and self-play after
GOMOKU15_SELFPLAY = ("selfplay.games_per_generation=10",)
GOMOKU15 = {
    "scratch": (Stage("selfplay", GOMOKU15_SELFPLAY),),
    "rapfi": (Stage("imitate", ('imitate.player1="rapfi:10000"', 'imitate.player2="rapfi:10000"',
                                "imitate.opening_moves=2", "imitate.games_per_generation=50", "imitate.epochs=1",
                                "imitate.augment=true"), 1 / 2),
              Stage("selfplay", GOMOKU15_SELFPLAY, 1 / 2)),
}

#: self-play from a shipped student (a network that learnt an outside program's games),
#: measured against that teacher: Gumbel 64 simulations a move, 64 games a generation, games
#: ended at a proof, the result as the value target, a fifth of the first learning rate so the
#: teacher's lessons stay
STUDENT = ('selfplay.tree_policy="gumbel"', "selfplay.search_games=64", "selfplay.batch_size=8",
           "selfplay.lockstep=16", "selfplay.games_per_generation=64", "selfplay.end_at_proof=true",
           'selfplay.value_target="z"', "selfplay.replay_size=40000", "selfplay.minibatch=256",
           "selfplay.temperature_moves=10", "nets.pv_resnet.learning_rate=0.0002")


def student(config: str, net: str, opponents: dict[str, tuple[str, dict]], search_games: int,
            *settings: str, teacher_games: tuple[str, ...] = ()) -> Bench:
    """The bench of a student's self-play from the shipped network ``net`` (``settings`` after
    ``STUDENT``): ``gumbel64`` trains on the whole buffer each generation, ``steps48`` takes
    48 minibatches of it (more games in the same minutes), ``caps48`` adds playout cap
    randomization (a quarter of the moves searched in full and learnt, the others 16
    simulations) and plays 128 games a generation (more games' outcomes for the value in
    about steps48's time a generation); with ``teacher_games`` (replay files of the teacher's
    games), ``caps48-teacher`` is caps48 with a quarter of each generation's training cases
    drawn from them (``selfplay.teacher_games``); their checkpoints play PUCT
    (``search_games``) against ``opponents``, the teacher first, player 1 opening every game."""
    recipe = [f'selfplay.init_net="{net}"', *STUDENT, *settings]
    steps48 = [*recipe, "selfplay.train_steps=48"]
    recipes = {"gumbel64": recipe, "steps48": steps48,
               "caps48": [*steps48, "selfplay.full_search_share=0.25", "selfplay.fast_search_games=16",
                          "selfplay.games_per_generation=128"]}
    if teacher_games:
        files = ", ".join(f'"{path}"' for path in teacher_games)
        recipes["caps48-teacher"] = [*recipes["caps48"], f"selfplay.teacher_games=[{files}]",
                                     "selfplay.teacher_share=0.25"]
    return Bench(config, opponents, recipes=recipes, agent={"search_games": search_games}, first_player_starts=True,
                 teacher=next(iter(opponents)))


#: the 9x9 Hex student: MoHex 2.0's games distilled (its heads play every size)
HEX_STUDENT = "models/hex9-distill/pv_resnet_ep0003.keras"
#: the shipped 11x11 Hex network (the student after 27 generations of 9x9 self-play), where 11x11 self-play starts
HEX11 = "models/hex11/pv_resnet_gen0027.keras"
#: MoHex 2.0's 9x9 games the student learnt (475), which caps48-teacher keeps learning
MOHEX9_GAMES = ("models/hex9/mohex-games.npz", "models/hex9/mohex-games-2.npz")
#: MoHex 2.0 at 1,000 simulations a move, the Hex students' teacher
MOHEX = {"MoHex(1000)": ("mohex:1000", {})}

GAMES = {
    "connect4": Bench("models/connect4/config.toml", uct(200, 1000)),
    "hex5": Bench("models/hex5-az/config.toml", uct(200, 1000)),
    "hex7": Bench("configs/hex7.toml", uct(200, 1000)),
    "hex9": Bench("configs/hex9-mohex.toml", uct(200, 1000, 10000), recipes=HEX9, plotted="UCT(1000)"),
    "hex9-student": student("configs/hex9-mohex.toml", HEX_STUDENT, MOHEX, 400, teacher_games=MOHEX9_GAMES),
    "hex11-student": student("configs/hex11.toml", HEX11, MOHEX, 400),
    "go9": Bench("configs/go9.toml", {"GNU Go 1": (gnugo_spec(1), {})}, command="imitate", common=GO_IMITATE,
                 recipes=KATAGO, agent={"search_games": 200, "policy_params": {"value_weight": 0.5}},
                 first_player_starts=True, head_to_head=True),
    "go13": Bench("configs/go13.toml", {"GNU Go 1": (gnugo_spec(1), {})}, command="imitate",
                  common=(*GO_IMITATE, "imitate.augment=false", "imitate.opening_moves=2"),
                  recipes=GO13, agent={"search_games": 200}, first_player_starts=True, head_to_head=True),
    "gomoku15": Bench("configs/gomoku15.toml", {**uct(1000), "Rapfi(100)": ("rapfi:100", {})}, recipes=GOMOKU15,
                      agent={"search_games": 200}, first_player_starts=True, plotted="UCT(1000)"),
    "go13-student": student("configs/go13.toml", "models/go13/pv_resnet_gnugo_ep0009.keras",
                            {"GNU Go 5": (gnugo_spec(5), {}), "Pachi(5000)": ("pachi:5000", {})}, 200,
                            "selfplay.temperature_moves=20"),  # (the file's Adam at STUDENT's rate)
    "gomoku15-student": student("configs/gomoku15.toml", "models/gomoku15/pv_resnet_rapfi_ep0002.keras",
                                {"Rapfi(10000)": ("rapfi:10000", {})}, 400),
}
#: the outside programs a recipe or an opponent may name (``mohex:N``, ``rapfi:N``): how each is found and built
OUTSIDE = {"mohex": (find_mohex, "scripts/build_mohex.sh (or set $HEXZERO_MOHEX)"),
           "rapfi": (find_rapfi, "scripts/build_rapfi.sh (or set $HEXZERO_RAPFI)"),
           "pachi": (find_pachi, "scripts/build_pachi.sh (or set $HEXZERO_PACHI)")}
#: games with perfect results: the share of won positions kept against perfect play is measured too
PERFECT = {"hex5"}
#: one core each: TensorFlow's and the BLAS's thread pools
ONE_CORE = {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1", "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}


# ---- training ---------------------------------------------------------------------------------------
def stage_dir(directory: Path, index: int) -> Path:
    """The run directory of a recipe's ``index``-th stage: ``run``, then ``run2``, ``run3``..."""
    return directory / ("run" if index == 0 else f"run{index + 1}")


def start_stage(key: str, recipe: str, directory: Path, index: int) -> subprocess.Popen:
    """Start the ``index``-th stage of a recipe, from the last network of the stage before it."""
    bench = GAMES[key]
    stage = bench.stages(recipe)[index]
    settings = bench.settings(stage)
    if index:
        before = RunDir(stage_dir(directory, index - 1)).checkpoints()
        if not before:
            raise SystemExit(f"{stage_dir(directory, index - 1)}: the stage saved no network; see its train.log")
        settings.append(f'{stage.command}.init_net="{before[-1][1].resolve()}"')
    args = [sys.executable, str(ROOT / "cli.py"), stage.command, "--no-progress", "--config", str(ROOT / bench.config),
            "--run-dir", str(stage_dir(directory, index)), *sum((["--set", s] for s in settings), [])]
    with open(directory / "train.log", "a") as log:
        log.write(f"$ {' '.join(args)}\n")
        log.flush()
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **ONE_CORE}, cwd=ROOT)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, as a user's ``kill``: the run commits its finished generations and stops."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def train(runs: list[tuple[str, str, Path]], minutes: float, parallel: int) -> None:
    """Train each (game, recipe, directory) without a done.json for ``minutes``, ``parallel``
    at once; a recipe of several stages moves to the next at the end of each one's share."""
    waiting = [run for run in runs if not (run[2] / "done.json").exists()]
    running: list[dict] = []
    try:
        while waiting or running:
            while waiting and len(running) < parallel:
                key, recipe, directory = waiting.pop(0)
                if directory.exists():  # cut short earlier: its minutes would not be one stretch
                    shutil.rmtree(directory)
                directory.mkdir(parents=True)
                started = time.time()
                (directory / "started.json").write_text(json.dumps({"time": started}))
                process = start_stage(key, recipe, directory, 0)
                print(f"training {key} {recipe} for {minutes} min (pid {process.pid})", flush=True)
                running.append({"key": key, "recipe": recipe, "directory": directory, "started": started,
                                "stage": 0, "process": process})
            time.sleep(1.0)
            for run in list(running):
                stages = GAMES[run["key"]].stages(run["recipe"])
                elapsed = time.time() - run["started"]
                ends = minutes * 60 * sum(stage.share for stage in stages[:run["stage"] + 1])
                if run["process"].poll() is None and elapsed < ends:
                    continue
                stop(run["process"])
                if elapsed < ends - 5:
                    raise SystemExit(f"{run['directory']}: a training stage ended after {elapsed:.0f} s; "
                                     f"see its train.log")
                if run["stage"] + 1 < len(stages):
                    run["stage"] += 1
                    run["process"] = start_stage(run["key"], run["recipe"], run["directory"], run["stage"])
                    print(f"  {run['key']} {run['recipe']}: stage {run['stage'] + 1} after {elapsed / 60:.1f} min",
                          flush=True)
                    continue
                running.remove(run)
                (run["directory"] / "done.json").write_text(json.dumps({"minutes": minutes,
                                                                        "seconds": round(elapsed, 1)}))
    finally:
        for run in running:  # interrupted: nothing we started outlives us (nor what each started)
            stop(run["process"])


def checkpoints_in_time(directory: Path) -> list[tuple[float, int, Path]]:
    """(seconds after the run started, generation, file) of each checkpoint of a run, every stage's in turn."""
    started = json.loads((directory / "started.json").read_text())["time"]
    found, index = [], 0
    while stage_dir(directory, index).exists():
        found += [(max(path.stat().st_mtime - started, 0.0), generation, path)
                  for generation, path in RunDir(stage_dir(directory, index)).checkpoints()]
        index += 1
    return found


def last_checkpoint(directory: Path) -> Path:
    return checkpoints_in_time(directory)[-1][2]


def checkpoint_name(directory: Path, path: Path) -> str:
    """A checkpoint's name in scores.json: its file name, after its stage's directory past the first."""
    return path.name if path.parent.parent == directory / "run" else f"{path.parent.parent.name}/{path.name}"


def chosen(checkpoints: list[tuple[float, int, Path]], minutes: float, points: int) -> list[tuple[float, int, Path]]:
    """The checkpoint the run had at each of ``points`` evenly spaced times (and its first)."""
    picked = [checkpoints[0]]
    for j in range(1, points + 1):
        at = minutes * 60 * j / points
        before = [c for c in checkpoints if c[0] <= at + 1.0]
        if before and before[-1] not in picked:
            picked.append(before[-1])
    return picked


# ---- evaluation ------------------------------------------------------------------------------------
def bench_game(bench: Bench):
    """The game of a benchmark's configuration."""
    config = load_config(ROOT / "hexzero.toml", ROOT / bench.config)
    return mctsfw.make_config_game(config)


def match_score(game, bench: Bench, a, b, games: int) -> tuple[float, int]:
    """A's score (draws half) against B, both colours as the benchmark seats them, and how
    many of the games differ; an outside engine that counts games (GNU Go) referees them.
    Both are closed after."""
    try:
        match = play_pairs(game, a, b, games, PLAYER_1_OPENS if bench.first_player_starts else BALANCED, judged=True)
        tally, warning = match.tally(), distinct_warning(match)
        if warning:  # a score of replayed games: said beside the table
            print(f"  {a.label} against {b.label}: {warning}", flush=True)
    finally:
        close_actors([a, b])
    return (tally.wins + 0.5 * tally.draws) / max(games, 1), match.distinct_games


def distinct_name(name: str) -> str:
    """The name in scores.json of how many distinct games the score ``name`` rests on."""
    return f"{name} distinct games"


def keep_score(scores: dict, name: str, measured: tuple[float, int]) -> None:
    """A score under its name in scores.json, and beside it how many distinct games it rests on."""
    scores[name], scores[distinct_name(name)] = measured


def distinct(scores: dict, name: str) -> str:
    """How many distinct games a kept score rests on, in words (scores kept before they were counted: unknown)."""
    found = scores.get(distinct_name(name))
    return "distinct games not counted" if found is None else f"{found} distinct games"


def score(game, bench: Bench, model: Path, opponent: tuple[str, dict], games: int, seed: int) -> tuple[float, int]:
    """The network's score against the opponent and its distinct games (``match_score``)."""
    spec, params = opponent
    return match_score(game, bench, mctsfw.make_actor(model, game, seed=seed, **bench.agent),
                       mctsfw.make_actor(spec, game, seed=seed, **params), games)


def head_to_head(key: str, recipe: str, base: str, out: Path, games: int) -> float:
    """The score of ``recipe``'s last checkpoint against ``base``'s, both playing as the
    game's networks do (``Bench.agent``), each side player 1 in half the games; kept in
    ``OUT/GAME/RECIPE/scores.json``."""
    bench = GAMES[key]
    saved = out / key / recipe / "scores.json"
    scores = json.loads(saved.read_text()) if saved.exists() else {}
    name = f"last vs {base}'s last/{games}{bench.scored}"
    if name not in scores:
        game = bench_game(bench)
        mine, theirs = (last_checkpoint(out / key / r) for r in (recipe, base))
        keep_score(scores, name, match_score(game, bench, mctsfw.make_actor(mine, game, seed=1, **bench.agent),
                                             mctsfw.make_actor(theirs, game, seed=2, **bench.agent), games))
        saved.write_text(json.dumps(scores, indent=1))
    return scores[name], distinct(scores, name)


def move_accuracy(directory: Path) -> tuple[int, float] | None:
    """(generation, move_accuracy) of an imitation run's last measured network: generation
    N's checkpoint met the games of generation N + 1 before it learnt them."""
    measured = [(line["generation"] - 1, line["move_accuracy"]) for line in RunDir(directory / "run").read_metrics()
                if line.get("kind") == "generation" and "move_accuracy" in line]
    return measured[-1] if measured else None


def kept(game, model: Path, games: int, solver) -> float:
    """The share of won positions the raw network's moves keep won against perfect play
    (``hex_perfect.kept_share``: random openings of up to 6 moves, the same every time)."""
    from hex_perfect import kept_share, totals

    won, kept_won = totals(kept_share(mctsfw.make_actor(model, game), game, solver, games, opening=6, seed=0)["counts"])
    return kept_won / max(won, 1)


def evaluate(key: str, recipe: str, directory: Path, minutes: float, points: int, eval_games: int,
             events: EventFile) -> list[dict]:
    """The scores of the chosen checkpoints against each opponent (computed once, kept in scores.json)."""
    bench = GAMES[key]
    game = bench_game(bench)
    saved = directory / "scores.json"
    scores = json.loads(saved.read_text()) if saved.exists() else {}
    rows, solver = [], None
    for seconds, generation, path in chosen(checkpoints_in_time(directory), minutes, points):
        row = {"seconds": round(seconds, 1), "generation": generation, "stage": path.parent.parent.name}
        for column, opponent in bench.opponents.items():
            name = f"{checkpoint_name(directory, path)} vs {column}/{eval_games}{bench.scored}"
            if name not in scores:
                keep_score(scores, name, score(game, bench, path, opponent, eval_games, seed=generation))
                saved.write_text(json.dumps(scores, indent=1))
                tag = column.lower().replace("(", "").replace(")", "").replace(" ", "")
                events.add([(f"{key}/{recipe}/vs_{tag}", scores[name], int(seconds))])
            row[column], row.setdefault("distinct", {})[column] = scores[name], distinct(scores, name)
        if key in PERFECT:
            name = f"{checkpoint_name(directory, path)} kept against perfect play/{eval_games}"
            if name not in scores:
                if solver is None:
                    from hexzero.games.hex_solver import HexSolver

                    solver = HexSolver(game)  # one table for every checkpoint: they meet the same openings
                scores[name] = kept(game, path, eval_games, solver)
                saved.write_text(json.dumps(scores, indent=1))
                events.add([(f"{key}/{recipe}/won_positions_kept", scores[name], int(seconds))])
            row["kept"] = scores[name]
        rows.append(row)
    return rows


def stage_mark(row: dict) -> str:
    """"run2 " for a checkpoint of a recipe's second stage, nothing for the first's."""
    return "" if row["stage"] == "run" else f"{row['stage']} "


def minutes_to(rows: list[dict], column: str, target: float) -> float | None:
    for row in rows:
        if row[column] >= target:
            return row["seconds"] / 60
    return None


def draw(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hexzero.plugins.topp import save_png

    figure, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (key, by_recipe) in zip(axes[0], results.items()):
        strongest = GAMES[key].plotted or list(GAMES[key].opponents)[-1]
        for recipe, rows in by_recipe.items():
            line, = ax.plot([r["seconds"] / 60 for r in rows], [r[strongest] for r in rows], marker="o", label=recipe)
            if key in PERFECT:  # dashed, the same colour: won positions kept against perfect play
                ax.plot([r["seconds"] / 60 for r in rows], [r["kept"] for r in rows], linestyle="--",
                        color=line.get_color(), alpha=0.7)
        if GAMES[key].teacher:  # the teacher scores half against itself: the line a student's self-play must cross
            ax.axhline(0.5, linestyle=":", color="grey", label=f"{GAMES[key].teacher} against itself")
        kept_line = "\n(dashed: won positions kept, against perfect play)" if key in PERFECT else ""
        who = "PUCT" if GAMES[key].agent else "raw network"
        ax.set_title(f"{key}: {who} against {strongest}{kept_line}", fontsize=10)
        ax.set_xlabel("training minutes (one core)")
        ax.set_ylabel("score")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend()
    save_png(figure, path)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games-list", default="connect4,hex5,hex7",
                        help=f"some of {', '.join(GAMES)} (default: connect4,hex5,hex7)")
    parser.add_argument("--recipes", default="", help="some of each game's recipes (default: all of them): "
                        + "; ".join(f"{k}: {', '.join(b.recipes)}" for k, b in GAMES.items()))
    parser.add_argument("--minutes", type=float, default=20.0, help="training minutes of each recipe")
    parser.add_argument("--parallel", type=int, default=2, help="recipes trained at once (one core each)")
    parser.add_argument("--points", type=int, default=5, help="times at which the checkpoints are measured")
    parser.add_argument("--eval-games", type=int, default=20, help="games a checkpoint plays each opponent")
    parser.add_argument("--target", type=float, default=0.5, help="the score against the strongest opponent to reach")
    parser.add_argument("--out", default="runs/learning", help="where the runs, scores and picture go")
    parser.add_argument("--search-games", type=int, default=0, help="the checkpoints' PUCT simulations a move "
                        "where they search (default: each game's own, GAMES)")
    args = parser.parse_args()
    keys, asked = args.games_list.split(","), [r for r in args.recipes.split(",") if r]
    unknown = [k for k in keys if k not in GAMES]
    unknown += [r for r in asked if not any(r in GAMES[k].recipes for k in keys if k in GAMES)]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}")
    if args.search_games < 0:
        parser.error(f"--search-games {args.search_games}: at least 1 (0: each game's own)")
    if args.search_games:
        for key in keys:
            GAMES[key] = searching(GAMES[key], args.search_games)
    recipes = {k: [r for r in GAMES[k].recipes if not asked or r in asked] for k in keys}
    for program, (found, build) in OUTSIDE.items():
        named = [f"{k} {r}" for k in keys for r in recipes[k]
                 if any(f"{program}:" in setting for stage in GAMES[k].stages(r) for setting in stage.settings)
                 or any(spec.startswith(f"{program}:") for spec, _ in GAMES[k].opponents.values())]
        if named and not found():
            parser.error(f"{', '.join(named)} need {program}, which is not found: build it with {build}, "
                         "or leave those out with --games-list and --recipes")
    out = Path(args.out).resolve()  # the training commands run in the repository
    print(f"{args.minutes} training minutes a recipe, {args.parallel} at once; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    train([(k, r, out / k / r) for k in keys for r in recipes[k]], args.minutes, args.parallel)
    events = EventFile(out / "tb")
    results: dict = {}
    for key in keys:
        bench = GAMES[key]
        strongest = list(bench.opponents)[-1]
        who = "PUCT's" if bench.agent else "the raw network's"
        print(f"\n{key}: {who} score (of {args.eval_games} games) by training minute")
        results[key] = {}
        for recipe in recipes[key]:
            rows = evaluate(key, recipe, out / key / recipe, args.minutes, args.points, args.eval_games, events)
            results[key][recipe] = rows
            line = "  ".join(f"{r['seconds'] / 60:4.1f} min {stage_mark(r)}gen {r['generation']:3d}: "
                             + " ".join(f"{c} {r[c]:.0%}" + (f" ({r['distinct'][c]})" if c in r.get("distinct", {}) else "")
                                        for c in r if c in bench.opponents or c == "kept")
                             for r in rows)
            reached = minutes_to(rows, strongest, args.target)
            low, high = (max(0.0, x) for x in wilson(rows[-1][strongest], args.eval_games))
            accuracy = move_accuracy(out / key / recipe) if bench.stages(recipe)[0].command == "imitate" else None
            print(f"  {recipe:<7} {line}")
            print(f"          last: {rows[-1][strongest]:.0%} ({low:.0%}-{high:.0%}) against {strongest} "
                  f"({rows[-1]['distinct'][strongest]}); "
                  f"{args.target:.0%} reached " + (f"after {reached:.1f} min" if reached is not None else "not yet")
                  + (f"; move accuracy {accuracy[1]:.1%} (generation {accuracy[0]})" if accuracy else ""))
            base = recipes[key][0]
            if bench.head_to_head and recipe != base:
                score, differ = head_to_head(key, recipe, base, out, args.eval_games)
                low, high = (max(0.0, x) for x in wilson(score, args.eval_games))
                print(f"          its last checkpoint against {base}'s last: {score:.0%} ({low:.0%}-{high:.0%}) "
                      f"of {args.eval_games} games ({differ})")
    draw(results, out / "learning.png")
    print(f"\npicture: {out / 'learning.png'}; curves: tensorboard --logdir {out / 'tb'}")


if __name__ == "__main__":
    try:
        with stop_on_sigterm():  # a kill stops the training runs it started, as a Ctrl-C does
            main()
    except KeyboardInterrupt as stopped:
        print("stopped: the finished runs and scores are kept; the same command goes on from them", file=sys.stderr)
        sys.exit(exit_status(stopped))
