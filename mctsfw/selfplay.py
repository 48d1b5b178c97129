"""AlphaZero-style learning: self-play generations with a policy-and-value network.

Each generation: the current best network plays ``games_per_generation`` games against
itself with PUCT (priors and leaf values from the network, Dirichlet noise at the root,
moves drawn with temperature ``tau`` for the first ``temperature_moves`` moves, then
``temperature_final``); each game goes into the replay buffer as its moves with, for
every position, the search's visit distribution and a value target (z, or the mean of z
and the root's Q), and comes out as training cases with the game's symmetries
(``mctsfw.replay``). Then the candidate network trains on the replay buffer (duplicate positions
averaged if asked), optionally plays a gating match against the best one and replaces it
only if it wins ``gating_threshold`` of the games; a checkpoint per generation. A
generation's metrics line has its losses and learning rate, the mean length of its games
and the positions per second they were played at, and with gating the score and the
candidate's Bradley-Terry rating less the best one's (``gating_elo``, ``mctsfw.ratings``);
every line also becomes TensorBoard curves (``mctsfw.curves``).

The run is resumable as on-policy training is (``mctsfw.runs.ResumableRun``): the state
is committed after every self-play game and after every training step, so a killed run
resumes without repeating or losing a game.

**Resignation** (as in AlphaGo Zero): a player resigns when, after its search, both the
root's value and the value of its most visited move are below ``resign_threshold`` (on
the search's scale: the expected result for the player to move, 1 a win, 0.5 a draw, 0 a
loss; AlphaGo Zero's v_resign = -0.9 on [-1, 1] is 0.05 here; 0, the default, never
resigns), once ``resign_min_moves`` moves have been played. The resigner loses: the game's
positions train with that result as usual. A share ``no_resign_share`` of the games is
played to the end with resignation off; each of them notes who would have resigned first
and when, and whether that player went on not to lose (a false positive: a win or a draw
thrown away). Each generation's metrics line counts the resigned games, the no-resign
games, those in which someone would have resigned, and the false positives among them
(``false_positive_rate``), so that the threshold can be set to keep the rate low
(AlphaGo Zero kept it below 5%).

Every game draws its random numbers from its own seed (the run's seed and the game's
number), so a game is the same whichever process plays it: with ``workers > 1`` the
games of a generation are played by that many processes at once, and the run is the
same as with one, only sooner. A worker sends back the game's record (moves and sparse
targets), not encoded cases; the results are committed in game order, several at a time
when they arrive together.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from hexzero.mctsfw.actors import Actor
from hexzero.mctsfw.backends import die_if_asked, make_backend, ray_problem
from hexzero.mctsfw.checkpoints import describe_settings
from hexzero.mctsfw.config import plugin_params
from hexzero.mctsfw.game import Game, opponent
from hexzero.mctsfw.evaluators import NetValue, value_evaluator
from hexzero.mctsfw.hookspecs import hookimpl
from hexzero.mctsfw.search import MCTS, Node, TreePolicy, paused_gc, search_together
from hexzero.mctsfw.search.array_search import ArrayMCTS, make_search, share_tree
from hexzero.mctsfw.match import BALANCED, Tally, play_match
from hexzero.mctsfw.netserver import NetServer, ServedNet, server_problem
from hexzero.mctsfw.plugin_manager import Registries, default_registries
from hexzero.mctsfw.ratings import two_player_rating
from hexzero.mctsfw.records import RecordedGame, shares
from hexzero.mctsfw.replay import ReplayBuffer, draw_cases, game_result, replay_file_summary, source_buffer_path
from hexzero.mctsfw.roles import POLICY_VALUE, require_role, role_problem
from hexzero.mctsfw.runs import ResumableRun, RunDirError
from hexzero.mctsfw.sampling import sample_action, temperature_problem
from hexzero.mctsfw.sgf import resigned_result, to_sgf, write_sgf
from hexzero.mctsfw.schema import Section, SectionSettings, Setting


def learning_run_problems(config: dict, registries: Registries, section: str, command: str) -> list[str]:
    """The problems of the ``[section]`` of a learning run that trains a policy-and-value
    network on games (self-play, imitation): its net's role, its SGF records, its backend,
    the network it starts from."""
    table = config[section]
    name = table["net"]
    problem = role_problem(registries.nets.get(name), POLICY_VALUE, command)
    problems = [f"{section}.net = {name!r}: {problem}"] if problem else []
    game = config["game"]
    if table["sgf"] and game in registries.games and registries.games.get(game).sgf_game is None:
        problems.append(f"{section}.sgf = true: {game} has no SGF (Go and Hex have)")
    if table["backend"] == "ray" and (problem := ray_problem()):
        problems.append(f'{section}.backend = "ray": {problem}')
    if game not in registries.games:
        return problems
    params = config.get("nets", {}).get(name, {})
    aux = params.get("ownership_weight", 0) > 0 or params.get("score_weight", 0) > 0
    made = registries.games.get(game)(**plugin_params(config, "games", game)) if aux or table["init_net"] else None
    if aux and made.ownership(made.initial_state()) is None:
        problems.append(f"nets.{name}: the ownership and score heads learn who owns the board at the end; "
                        f"{game} has no territory (Go has): set ownership_weight and score_weight to 0")
    if table["init_net"] and name in registries.nets and (
            problem := init_net_problem(table["init_net"], registries.nets.get(name), made)):
        problems.append(f"{section}.init_net = {table['init_net']!r}: {problem}")
    return problems


def init_net_problem(path: str, net_class: type, game: Game) -> str | None:
    """Why the model file ``path`` cannot start a run of ``net_class`` networks on ``game``, or None."""
    from hexzero.mctsfw.checkpoints import ModelFileError, load_net, net_class_for

    try:
        found = net_class_for(path)
        if found is not net_class:
            return f"a {getattr(found, 'name', found.__name__)} network, not the run's net ({net_class.name})"
        load_net(path, game)
    except ModelFileError as error:
        return str(error).removeprefix(f"{path}: ")
    return None


def starting_net(config: dict, registries: Registries, section: str, game: Game, seed: int):
    """The network a run of ``[section]`` starts from: the file ``init_net`` names (its
    weights and optimizer state; the run's ``[nets.<net>] learning_rate`` applies where the
    net can be told one), or a new one of ``[nets.<net>]``."""
    table = config[section]
    net_class = registries.nets.get(table["net"])
    params = plugin_params(config, "nets", table["net"])
    if table["init_net"]:  # checked with the config (init_net_problem); a broken file raises ModelFileError
        net = net_class.load(Path(table["init_net"]), game)
        if hasattr(net, "set_learning_rate"):  # optional (mctsfw.roles): without it, the file's rate
            net.set_learning_rate(params["learning_rate"])
        return net
    params.setdefault("seed", seed)
    return net_class(game, **params)


def sizes_problem(net, games: list[Game], net_name: str) -> str | None:
    """Why ``net`` cannot play every one of ``games`` (one game at several board sizes), or None."""
    view = getattr(net, "for_game", None)
    for game in games:
        try:
            if view is None:
                raise ValueError(f"the {net_name} net plays one board size")
            view(game)
        except ValueError as error:
            return (f"several board sizes need a network that plays every one (pv_resnet with heads = "
                    f"\"convolutional\"); for {describe_settings(game.name, game.params())}: {error}")
    return None


def sized_games(config: dict, registries: Registries, sizes: list[int]) -> dict[int, Game]:
    """The config's game at each of ``sizes`` (its other settings the config's)."""
    name = config["game"]
    params = plugin_params(config, "games", name)
    return {size: registries.games.get(name)(**{**params, "size": size}) for size in sizes}


#: the replay file of a board size other than the game's own, in a committed state (``replay.npz``: the game's own)
SIZE_BUFFER = "replay-size{}.npz"


def size_buffers(directory: Path) -> dict[int, Path]:
    """The replay files of the other board sizes in a committed state ``directory``, by size."""
    found = {}
    for path in directory.glob(SIZE_BUFFER.format("*")):
        size = path.name.removeprefix("replay-size").removesuffix(".npz")
        if size.isdigit():
            found[int(size)] = path
    return dict(sorted(found.items()))


def sizes_problems(config: dict, registries: Registries) -> list[str]:
    """The problems of ``selfplay.sizes``: a game with a board size, the config's among them,
    each a size the game takes, a network that plays every one."""
    table, name = config["selfplay"], config["game"]
    params = plugin_params(config, "games", name)
    if "size" not in params:
        return [f"selfplay.sizes: {name} has no board size (Hex, Go and Gomoku have)"]
    if params["size"] not in table["sizes"]:
        return [f"selfplay.sizes = {table['sizes']}: give games.{name}.size = {params['size']} too (the run's "
                f"checkpoints are recorded as networks for that size)"]
    try:
        games = list(sized_games(config, registries, table["sizes"]).values())
    except ValueError as error:
        return [f"selfplay.sizes: {error}"]
    main = registries.games.get(name)(**params)
    if problem := sizes_problem(starting_net(config, registries, "selfplay", main, seed=0), games, table["net"]):
        return [f"selfplay.sizes: {problem}"]
    return []


def teacher_games_problems(config: dict, registries: Registries) -> list[str]:
    """A ``selfplay.teacher_games`` source that is not a replay file (or a run holding one)
    of the config's game at its own size."""
    params = plugin_params(config, "games", config["game"])
    game = registries.games.get(config["game"])(**params)
    problems = []
    for source in config["selfplay"]["teacher_games"]:
        try:
            actions, positions = replay_file_summary(source_buffer_path(source))
        except RunDirError as error:
            problems.append(f"selfplay.teacher_games: {error}")
            continue
        if actions != game.num_actions:
            problems.append(f"selfplay.teacher_games: {source} holds games of {actions} actions, not "
                            f"{describe_settings(config['game'], params)}'s {game.num_actions} (teacher games are "
                            "of the run's own board size)")
        elif not positions:
            problems.append(f"selfplay.teacher_games: {source} holds no positions to learn")
    return problems


#: ``[selfplay]``: AlphaZero-style generations (``cli.py selfplay``)
def selfplay_config_problems(config: dict, registries: Registries) -> list[str]:
    """The problems of a (well-formed) config for ``selfplay``, found before anything is written."""
    problems = learning_run_problems(config, registries, "selfplay", "self-play")
    if config["selfplay"]["sizes"] and not problems:
        problems += sizes_problems(config, registries)
    section = config["selfplay"]
    if section["net_server"] == "on" and section["net"] in registries.nets:
        problem = server_problem(registries.nets.get(section["net"]))
        if problem:
            problems.append(f'selfplay.net_server = "on": {problem}')
    if section["teacher_games"] and not problems:
        problems += teacher_games_problems(config, registries)
    policy = config["selfplay"]["tree_policy"]
    if policy in registries.tree_policies and not registries.tree_policies.get(policy).uses_priors:
        problems.append(f"selfplay.tree_policy = {policy!r}: self-play searches with the network's priors; "
                        f"the {policy} tree policy reads none (puct or gumbel do)")
    return problems


SELFPLAY_SECTION = Section("selfplay", "cli.py selfplay: AlphaZero-style generations", [
    Setting("run_dir", "runs/hex5-az", "the run directory (relative to the current one); an unfinished run there is "
            "resumed", resumable=True),
    Setting("net", "pv_mlp", "a policy-and-value net plugin: pv_mlp or pv_resnet", plugin="net"),
    Setting("init_net", "", "a saved network of that net (.keras) a new run starts from instead of an untrained one "
            "(its weights and optimizer state; the run's [nets.<net>] learning_rate applies): the last checkpoint of "
            "cli.py imitate, say; \"\" = untrained", empty=True),
    Setting("generations", 20, "train steps (each after games_per_generation self-play games)", low=1, resumable=True),
    Setting("games_per_generation", 20, "games played before each train step", low=1),
    Setting("sizes", [], "board sizes the run plays in turn, the game's own size among them: a generation's "
            "lock-step groups of games take them in turn (lockstep = 1: game by game); each size keeps its own "
            "replay_size cases and the network trains on every size each generation; the net must play every "
            "size (pv_resnet with heads = \"convolutional\"); [] = the game's size alone",
            items=Setting("size", 9, "a board size", low=1)),
    Setting("tree_policy", "puct", 'the search: "puct" (Dirichlet root noise, moves drawn by temperature) or "gumbel" '
            "(Gumbel AlphaZero: Gumbel top-k and sequential halving at the root, the improved policy as the target, "
            "the halving's winner played; temperature unused); any tree policy that reads priors; its "
            "[tree_policies.<name>] table holds its settings", plugin="tree_policy"),
    Setting("search_games", 200, "simulations per move ...", low=1),
    Setting("full_search_share", 1.0, "... for this share of the moves, drawn at random, which become training "
            "positions; the others (playout cap randomization, KataGo) get fast_search_games, no root noise and no "
            "target. 1 = every move searched in full", low=0, high=1),
    Setting("fast_search_games", 32, "simulations of a move not searched in full", low=1),
    Setting("batch_size", 16, "leaves evaluated per network call (virtual loss keeps them apart)", low=1),
    Setting("temperature", 1.0, "tau: moves drawn ~ visits^(1/tau) for the first temperature_moves moves ...",
            check=temperature_problem),
    Setting("temperature_moves", 6, "... of each game ...", low=0),
    Setting("temperature_final", 0.0, "... then this (0 = the most visited move)", check=temperature_problem),
    Setting("resign_threshold", 0.0, "resign when the mover's value after its search (root and most visited move; "
            "1 win, 0.5 draw, 0 loss) is below this; 0 = never resign (AlphaGo Zero's -0.9 on [-1, 1] is 0.05)",
            low=0, high=1),
    Setting("resign_min_moves", 0, "... but not before this many moves of the game have been played", low=0),
    Setting("no_resign_share", 0.1, "share of the games played to the end with resignation off, to measure the "
            "false positives (would-be resigners that did not lose) per generation", low=0, high=1),
    Setting("value_target", "z", '"z": the game\'s result for the player to move; "q": the root\'s value after the '
            'search; "mean": the mean of z and q; "mix": (1 - value_mix) z + value_mix q (a position the search '
            "proved takes its proven result whatever this is)", choices=("z", "q", "mean", "mix")),
    Setting("value_mix", 0.5, 'with value_target = "mix": the weight of the root\'s value', low=0, high=1),
    Setting("end_at_proof", False, "end a game as soon as the search proves its result (the winner with best play "
            "is recorded; the moves that would only play it out are not)"),
    Setting("average_positions", True, "merge duplicate positions, averaging their targets, before training"),
    Setting("augment", True, "add the game's symmetric cases (Hex: the 180-degree turn and the colour-swapped mirror; Connect Four: mirror)"),
    Setting("replay_size", 20000, "cases kept (the newest)", low=1),
    Setting("teacher_games", [], "games recorded elsewhere that keep a share of every generation's training: "
            "replay files (models/hex9/mohex-games.npz) or runs (their last committed buffer: an imitation run's "
            "teacher games), of the run's game and board size; [] = self-play's games alone",
            items=Setting("source", "runs/imitate", "a run directory or a replay file")),
    Setting("teacher_share", 0.25, "... the share of each generation's training cases drawn from them (the rest "
            "from the self-play buffer)", low=0, high=0.9),
    Setting("epochs", 2, "passes over the (averaged) buffer per generation", low=1),
    Setting("minibatch", 64, "cases per gradient step", low=1),
    Setting("train_steps", 0, "gradient steps per generation, their minibatches drawn from the buffer without "
            "replacement until every case has been drawn (a fixed training cost however big the buffer: more games "
            "for the same time); 0 = epochs passes over the whole buffer", low=0),
    Setting("gating", False, "play the new net against the best one and keep it only if it scores ..."),
    Setting("gating_games", 20, "... in this many games ...", low=2),
    Setting("gating_threshold", 0.55, "... at least this (draws count half)", low=0, high=1),
    Setting("starting_player", "alternate", 'who opens each self-play game: "alternate" or "random"',
            choices=("alternate", "random")),
    Setting("seed", 0, "random seed of the run; -1 = a new seed every run", low=-1),
    Setting("sgf", False, "also save every self-play game as SGF: RUN_DIR/sgf/gen_NNNN_game_NNN.sgf (games with "
            "SGF: Go, Hex)", resumable=True),
    Setting("workers", 1, "processes playing a generation's games at once (0 = one per core; with backend = "
            '"ray": the CPUs of the local Ray, and at most this many tasks at once on a cluster, 0 = as many as its '
            'CPUs take); the games and the run '
            "are the same whatever this is, only the time differs", low=0, resumable=True),
    Setting("lockstep", 1, "games a worker plays together in lock-step, the leaves of all of them judged by one "
            "network call; a generation's games are grouped by number (1-B, B+1-2B, ...), so the games depend on "
            "this, not on workers or backend", low=1, resumable=True),
    Setting("backend", "processes", 'where the workers run: "processes" (this machine) or "ray" (a Ray cluster, '
            'pip install -e ".[ray]")', choices=("processes", "ray"), resumable=True),
    Setting("ray_address", "", 'with backend = "ray": "" starts a local Ray; "auto" or "HOST:PORT" joins the '
            "cluster started by `ray start --head`", resumable=True, empty=True),
    Setting("net_server", "auto", 'where the workers\' positions are judged: "on": one network server per machine '
            "owns the network (on the GPU where Keras has one) and judges the positions of every worker in "
            'batches (mctsfw.netserver); "off": each worker its own copy of the network; "auto": the server '
            "where Keras computes on a GPU, else each worker its own (docs/speed.md has the figures)",
            choices=("auto", "on", "off"), resumable=True),
    Setting("server_batch", 1024, "with the server: the most positions it judges in one call ...", low=1,
            resumable=True),
    Setting("server_wait_ms", 2.0, "... and how long it waits for more once one worker has asked (it judges at "
            "once when every busy worker is waiting)", low=0, resumable=True),
], checks=[selfplay_config_problems])


@hookimpl
def mctsfw_config_sections():
    return [SELFPLAY_SECTION]


class SelfPlaySettings(SectionSettings):
    """The ``[selfplay]`` values as attributes (``settings.generations``)."""

    section = SELFPLAY_SECTION


def self_play_pieces(config: dict, registries: Registries) -> tuple[SelfPlaySettings, Game, type, TreePolicy]:
    """What a self-play game is built from, read from the config: the settings, the game,
    the net class and the tree policy (`selfplay.tree_policy`: PUCT by default) with its root noise."""
    s = SelfPlaySettings.from_config(config)
    game_name = config["game"]
    game = registries.games.get(game_name)(**plugin_params(config, "games", game_name))
    name = s.tree_policy
    policy = registries.tree_policies.get(name)(**plugin_params(config, "tree_policies", name))
    return s, game, registries.nets.get(s.net), policy


def searcher(game: Game, net, policy: TreePolicy, seed: int, batch_size: int, root_noise: bool = False,
             value: NetValue | None = None) -> MCTS:
    """PUCT search guided by ``net``: its priors and values (mixed with random rollouts
    when the policy's ``value_weight`` < 1), leaves batched under virtual loss. Root noise
    for self-play games only. ``value``: a ``NetValue`` of ``net`` shared by the games of
    a lock-step group."""
    evaluator = value_evaluator(game, net, policy.value_weight, seed=seed, value=value,
                                random_symmetry=getattr(policy, "random_symmetry", False),
                                mean_symmetry=getattr(policy, "mean_symmetry", False))
    return make_search(game, policy, evaluator, seed=seed, batch_size=batch_size, root_noise=root_noise)


#: the third word of the seed that decides whether a game may resign (the game's own stream is (seed, number))
NO_RESIGN_STREAM = 1
#: the third word of the seed of a lock-step group's random symmetries (from its first game's number)
SYMMETRY_STREAM = 2


def plays_to_the_end(s: SelfPlaySettings, number: int, seed: int) -> bool:
    """Whether game ``number`` of a run with seed ``seed`` is one of the ``no_resign_share``
    played to the end with resignation off; it follows from (seed, number) alone, so it is
    the same whichever worker plays the game, and the game's own random numbers are those
    it has without resignation."""
    return s.no_resign_share > 0 and np.random.default_rng([seed, number, NO_RESIGN_STREAM]).random() < s.no_resign_share


def mover_value(mcts, root) -> float:
    """The value of the position for the player to move after the search (expected result,
    1 a win, 0 a loss): the better of the root's value and its most visited move's, so a
    player resigns only when both are low, as in AlphaGo Zero; a proven result is exact."""
    result = mcts.root_result()
    if result is not None:
        return result
    return max(mcts.root_value(), mcts.child_value(mcts.best_action(root)))


class SelfPlayGame:
    """Game ``number`` of a run with seed ``seed``, in progress: its own search (seed,
    root noise, kept tree) and its own random numbers, all from (seed, number) alone.
    ``self_play_games`` searches its position (``state``) and hands the root to ``play``,
    move after move, until it is ``over``; ``result`` then gives its metrics record (with
    its moves) and the game with its targets (each position's visit distribution and
    value target; the replay buffer adds the symmetries).

    With resignation on, the record says who resigned (``resigned``: the player, or None)
    or, in a game played to the end (``no_resign``), who would have resigned first and at
    which move, and whether that was a false positive (``would_resign``, or None)."""

    def __init__(self, game: Game, net, policy: TreePolicy, s: SelfPlaySettings, number: int, seed: int,
                 value: NetValue | None = None):
        self.started = time.perf_counter()
        self.game, self.s, self.number = game, s, number
        self.rng = np.random.default_rng([seed, number])
        rng = self.rng
        self.starter = (1 if number % 2 else 2) if s.starting_player == "alternate" else int(rng.choice((1, 2)))
        self.mcts = searcher(game, net, policy, int(rng.integers(2**31)), s.batch_size, root_noise=True, value=value)
        self.state = game.initial_state(self.starter)
        self.resigning = s.resign_threshold > 0
        self.no_resign = self.resigning and plays_to_the_end(s, number, seed)
        self.resigned: int | None = None
        self.would_resign: dict[str, Any] | None = None
        self.moves: list[int] = []
        self.counts, self.movers, self.root_values = [], [], []
        self.proven: list[float | None] = []  # each position's proven result for its mover, where the search proved one
        self.proven_winner: int | None = None  # with end_at_proof: the game ended at a proof
        self.ended_at_proof = False
        self.over = game.is_final(self.state)
        self.full = True  # whether the coming search is a full one (``budget``)

    def budget(self) -> int:
        """The search games of the coming search: ``search_games`` with root noise, or with
        playout cap randomization (``full_search_share`` < 1), for the other moves,
        ``fast_search_games`` without noise (their positions are not learnt)."""
        s = self.s
        self.full = s.full_search_share >= 1 or bool(self.rng.random() < s.full_search_share)
        self.mcts.root_noise = self.full
        return s.search_games if self.full else s.fast_search_games

    def play(self, root: Node) -> None:
        """The move after the search of ``state`` whose root is ``root`` (or the resignation)."""
        game, s, mcts, state = self.game, self.s, self.mcts, self.state
        if (self.resigning and self.would_resign is None and len(self.moves) >= s.resign_min_moves
                and mover_value(mcts, root) < s.resign_threshold):
            if not self.no_resign:
                self.resigned = game.current_player(state)
                self.over = True
                return
            self.would_resign = {"player": game.current_player(state), "move": len(self.moves)}
        mover = game.current_player(state)
        result = mcts.root_result()
        if s.end_at_proof and result is not None and self.moves:  # decided: the rest would only play it out
            self.ended_at_proof = True
            self.proven_winner = None if result == 0.5 else mover if result == 1.0 else opponent(mover)
            self.over = True
            return
        targets = mcts.targets(root)
        self.counts.append(targets if self.full else np.zeros_like(targets))  # a fast search teaches nothing
        self.movers.append(mover)
        self.root_values.append(mcts.root_value())
        self.proven.append(result)
        if mcts.tree_policy.chooses_moves:  # Gumbel: the halving's winner, its noise the exploration
            action = mcts.best_action(root)
        else:
            tau = s.temperature if len(self.moves) < s.temperature_moves else s.temperature_final
            action = sample_action(shares(targets), tau, self.rng)
        self.moves.append(int(action))
        self.state = game.next_state(state, action)
        mcts.advance(action, self.state)
        self.over = game.is_final(self.state)

    def result(self) -> tuple[dict[str, Any], RecordedGame]:
        """(the metrics record, the recorded game with its targets) of the finished game."""
        game, s = self.game, self.s
        if self.resigned is not None:
            winner = opponent(self.resigned)
        elif self.ended_at_proof:
            winner = self.proven_winner
        else:
            winner = game.winner(self.state)
        weight = {"z": 0.0, "q": 1.0, "mean": 0.5, "mix": s.value_mix}[s.value_target]  # the root value's share
        values = []
        for player, q, proven in zip(self.movers, self.root_values, self.proven):
            z = game_result(winner, player)
            values.append(proven if proven is not None else (1.0 - weight) * z + weight * q if weight else z)
        recorded = RecordedGame.from_targets(game.num_actions, self.starter, self.moves, self.counts, values, winner)
        record = {"kind": "game", "generation": (self.number - 1) // s.games_per_generation + 1, "game": self.number,
                  "starting_player": self.starter, "winner": winner, "moves": self.moves}
        if s.end_at_proof:
            record["ended_at_proof"] = self.ended_at_proof
        if s.full_search_share < 1:  # playout cap randomization: the positions learnt
            record["full_searches"] = sum(bool(c.any()) for c in self.counts)
        if self.resigning:
            record["resigned"] = self.resigned
            record["no_resign"] = self.no_resign
            if self.no_resign:
                would = self.would_resign
                if would is not None:  # a false positive: the would-be resigner won or drew
                    would["false_positive"] = winner != opponent(would["player"])
                record["would_resign"] = would
        record["seconds"] = round(time.perf_counter() - self.started, 3)
        return record, recorded


def self_play_game(game: Game, net, policy: TreePolicy, s: SelfPlaySettings, number: int,
                   seed: int) -> tuple[dict[str, Any], RecordedGame]:
    """Game ``number`` of a run with seed ``seed`` played alone (a lock-step group of one):
    its metrics record and the game with its targets (``SelfPlayGame``)."""
    return self_play_games(game, net, policy, s, [number], seed)[0]


def self_play_games(game: Game, net, policy: TreePolicy, s: SelfPlaySettings, numbers: list[int],
                    seed: int) -> list[tuple[dict[str, Any], RecordedGame]]:
    """Games ``numbers`` of a run (one lock-step group, ``selfplay.lockstep``), played
    together, in order: what ``SelfPlayGame.result`` gives for each.

    Every game keeps its own search and random numbers; at each move all the games still
    going search in lock-step (``mcts.search_together``), the leaves of all of them
    judged by one call of the shared network per round, so a big network sees batches
    of up to ``lockstep * batch_size`` states. A game that ends drops out; the group is
    done when every game is. A group of one plays exactly the game played alone."""
    value = NetValue(game, net, getattr(policy, "random_symmetry", False), seed=[seed, numbers[0], SYMMETRY_STREAM],
                     mean_symmetry=getattr(policy, "mean_symmetry", False))
    games = [SelfPlayGame(game, net, policy, s, number, seed, value) for number in numbers]
    if all(isinstance(g.mcts, ArrayMCTS) for g in games):  # the group's trees in one array tree, a row each
        share_tree([g.mcts for g in games])
    playing = [g for g in games if not g.over]
    with paused_gc():  # for the whole group: a collection after every move walked each new tree (12% of Go's ceiling)
        while playing:
            roots = search_together([(g.mcts, g.state) for g in playing], [g.budget() for g in playing])
            for g, root in zip(playing, roots):
                g.play(root)
            playing = [g for g in playing if not g.over]
    return [g.result() for g in games]


def size_of_game(s: SelfPlaySettings, number: int) -> int | None:
    """The board size game ``number`` is played on with ``selfplay.sizes`` (None without
    them): its lock-step group's turn (the groups of every generation counted in order),
    so a group plays one size, whoever plays it."""
    if not s.sizes:
        return None
    generation, within = divmod(number - 1, s.games_per_generation)
    group = generation * -(-s.games_per_generation // s.lockstep) + within // s.lockstep
    return s.sizes[group % len(s.sizes)]


class SizedViews:
    """A network and its views of the other board sizes a run plays (``for_game``), made
    once per network and size."""

    def __init__(self, games: dict[int, Game], main: Game):
        self.games = {size: game for size, game in games.items() if size != getattr(main, "size", None)}
        self.main = main
        self.net, self.views = None, {}

    def game_and_net(self, size: int | None, net) -> tuple[Game, Any]:
        """The game of ``size`` (None or the main game's size: the main one) and ``net``'s view of it."""
        if net is not self.net:
            self.net, self.views = net, {}
        if size not in self.games:
            return self.main, net
        if size not in self.views:
            self.views[size] = net.for_game(self.games[size])
        return self.games[size], self.views[size]


def lockstep_groups(first: int, last: int, games_per_generation: int, lockstep: int) -> list[list[int]]:
    """Games ``first`` to ``last`` (numbers from 1, within one generation) in their lock-step
    groups: games 1-B, B+1-2B, ... of the generation, so a game is played with the same
    companions whatever the workers or backend (a resumed run plays what is left of a group)."""
    groups: dict[int, list[int]] = {}
    for number in range(first, last + 1):
        groups.setdefault(((number - 1) % games_per_generation) // lockstep, []).append(number)
    return list(groups.values())


class ResignationTally:
    """What one generation's games say about resignation, for its metrics line."""

    FIELDS = ("resigned_games", "no_resign_games", "would_resign_games", "false_positives")

    def __init__(self, counts: dict[str, int] | None = None):
        self.counts = {name: int((counts or {}).get(name, 0)) for name in self.FIELDS}

    def add(self, record: dict[str, Any]) -> None:
        """Count one game's metrics record (games without resignation add nothing)."""
        c = self.counts
        c["resigned_games"] += record.get("resigned") is not None
        c["no_resign_games"] += bool(record.get("no_resign"))
        would = record.get("would_resign")
        if would is not None:
            c["would_resign_games"] += 1
            c["false_positives"] += bool(would["false_positive"])

    def metrics(self) -> dict[str, Any]:
        """The counts and the false-positive rate among the no-resign games in which someone
        would have resigned (None when nobody would have)."""
        c = self.counts
        rate = c["false_positives"] / c["would_resign_games"] if c["would_resign_games"] else None
        return {**c, "false_positive_rate": rate}


# ---- self-play workers (processes or Ray tasks, mctsfw.backends) ------------------------------------
_worker: dict[str, Any] = {}


def _worker_start(config: dict) -> None:
    """Build the game, the noisy PUCT policy and the net class once per worker (a worker
    process calls it when it starts; a Ray worker on its first task, and again if a run
    with another config reuses it)."""
    registries = default_registries()
    settings, game, net_class, policy = self_play_pieces(config, registries)
    _worker.clear()
    _worker.update(config=config, settings=settings, game=game, net_class=net_class, policy=policy, net_key=None,
                   sized=SizedViews(sized_games(config, registries, settings.sizes), game))


def _worker_games(config: dict, net, numbers: list[int], seed: int) -> list[tuple[dict[str, Any], RecordedGame]]:
    """One lock-step group of games, played by a worker with the network ``net`` (a
    ``mctsfw.backends`` handle: a file, Ray's object store, or the network server),
    loaded once per version."""
    die_if_asked(numbers)
    if _worker.get("config") != config:
        _worker_start(config)
    if _worker["net_key"] != net.key:  # a new generation's network
        _worker["net"] = net.load(_worker["net_class"], _worker["game"])
        _worker["net_key"] = net.key
    game, sized = _worker["sized"].game_and_net(size_of_game(_worker["settings"], numbers[0]), _worker["net"])
    try:
        return self_play_games(game, sized, _worker["policy"], _worker["settings"], numbers, seed)
    finally:
        if isinstance(sized, ServedNet):
            sized.idle()  # the server waits for this worker no longer


def _server_pieces(config: dict) -> tuple[type, Game, SizedViews]:
    """What the network server of a run needs (``mctsfw.netserver``): the net class, the
    game, and the network's views of the run's board sizes."""
    registries = default_registries()
    settings, game, net_class, _ = self_play_pieces(config, registries)
    return net_class, game, SizedViews(sized_games(config, registries, settings.sizes), game)


def uses_server(s: SelfPlaySettings, net_class: type) -> bool:
    """Whether a run's workers send their positions to a network server (``net_server``:
    "auto" where the net class says it computes on a GPU, ``device()``); never for a net
    that cannot be served."""
    if s.net_server == "off" or server_problem(net_class):
        return False
    device = getattr(net_class, "device", None)
    return s.net_server == "on" or (callable(device) and device() != "CPU")


class GameClock:
    """The number of moves played in the current game, shared by both players of a game."""

    def __init__(self) -> None:
        self.moves = 0


class GatingPlayer(Actor):
    """One side of a gating game: PUCT guided by ``net`` (``searcher``) with a fresh tree
    each game, seeded from the trainer's ``seeds``; the game's first
    ``settings.temperature_moves`` moves are drawn with ``settings.temperature`` (from
    ``rng``), the rest are the most visited."""

    kind = "gating"

    def __init__(self, game: Game, net, policy: TreePolicy, settings: SelfPlaySettings, seeds: random.Random,
                 rng: np.random.Generator, clock: GameClock):
        super().__init__(game)
        self.net, self.policy, self.settings = net, policy, settings
        self.seeds, self.rng, self.clock = seeds, rng, clock
        self.mcts: MCTS | None = None

    def reset(self) -> None:
        self.mcts = searcher(self.game, self.net, self.policy, self.seeds.randrange(2**31), self.settings.batch_size)
        self.clock.moves = 0

    def select_action(self, state):
        s = self.settings
        root = self.mcts.search(state, search_games=s.search_games)
        temperature = s.temperature if self.clock.moves < s.temperature_moves else 0.0
        self.clock.moves += 1
        return sample_action(self.mcts.visit_distribution(root), temperature, self.rng)


class SelfPlayTrainer(ResumableRun):
    """Runs (or resumes) the self-play run in ``run_dir`` for a validated config."""

    counter = "step"
    checkpoint_tag = "gen"
    length_key = "generations"
    unit = "step"

    #: the config section of the run, and what its games are (for the messages)
    section, what = "selfplay", "self-play"

    def __init__(self, config: dict, run_dir: str | Path, registries: Registries | None = None, progress: bool = True):
        super().__init__(config, run_dir, progress)
        self.registries = registries or default_registries()
        self.settings, self.game, self.net_class, self.tree_policy = self.pieces(config, self.registries)
        self.net_name = self.settings.net
        self.sizes = self.game_sizes()  # selfplay.sizes: the board sizes played in turn ([]: the game's alone)
        self.sized = SizedViews(sized_games(config, self.registries, self.sizes), self.game)
        self.other_buffers: dict[int, ReplayBuffer] = {}  # the cases of each size but the game's own
        require_role(self.net_class, POLICY_VALUE, f"{self.section}.net = {self.net_name!r}: {self.what}")
        self._backend = None  # mctsfw.backends: started with the first games that need it
        self.generation, self.games_done = 0, 0
        self.resignation = ResignationTally()
        self.generation_moves = 0  # moves of this generation's committed games
        self._played = [0, 0.0]  # moves and seconds of the games played since the run (re)started
        self._nets_of: int | None = None  # the generation whose networks the newest resume state holds
        self._teacher: tuple[np.ndarray, ...] | None = None  # selfplay.teacher_games' cases, once read

    @staticmethod
    def pieces(config: dict, registries: Registries) -> tuple[Any, Game, type, TreePolicy | None]:
        """(settings, game, net class, tree policy) of the run, read from the config."""
        return self_play_pieces(config, registries)

    def game_sizes(self) -> list[int]:
        return list(self.settings.sizes)

    def size_of(self, number: int) -> int | None:
        """The board size of game ``number`` (None: the game's own)."""
        size = size_of_game(self.settings, number) if self.sizes else None
        return None if size == getattr(self.game, "size", None) else size

    def _new_buffers(self) -> None:
        """An empty buffer for each size other than the game's."""
        s = self.settings
        self.other_buffers = {size: ReplayBuffer(s.replay_size, *self._encoding(size), augment=s.augment)
                              for size in self.sizes if size != getattr(self.game, "size", None)}

    def _encoding(self, size: int) -> tuple[Game, Any]:
        """The game of ``size`` and its network view's encoder."""
        game, view = self.sized.game_and_net(size, self.net)
        return game, view.encode_batch

    def _other_buffer_path(self, directory: Path, size: int) -> Path:
        return directory / SIZE_BUFFER.format(size)

    # ---- the run's state ----------------------------------------------------------------------------
    def new_state(self) -> None:
        """The networks and buffer of a new run: an untrained network, or the one ``init_net`` names."""
        s = self.settings
        self.net = starting_net(self.config, self.registries, self.section, self.game, self.seed)
        self.best = self._clone(self.net)
        self.buffer = ReplayBuffer(s.replay_size, self.game, self.net.encode_batch, augment=s.augment)
        self._new_buffers()
        self.generation, self.games_done = 0, 0
        self._nets_of = None
        self._prune_sgf()
        self.resignation = ResignationTally()
        self.generation_moves = 0

    def load_state(self, directory: Path, progress: dict[str, Any]) -> None:
        self.generation, self.games_done = progress["generation"], progress["games_done"]
        self.resignation = ResignationTally(progress.get("resignation"))  # absent in runs saved before resignation
        self.generation_moves = progress.get("generation_moves", 0)
        self.net = self.net_class.load(directory / "net.keras", self.game)
        self.best = self.net_class.load(directory / "best.keras", self.game)
        self.buffer = ReplayBuffer.load(directory / "replay.npz", self.game, self.net.encode_batch)
        self._new_buffers()
        for size in self.other_buffers:
            self.other_buffers[size] = ReplayBuffer.load(self._other_buffer_path(directory, size), *self._encoding(size))
        self._nets_of = self.generation
        self._prune_sgf()

    def save_state(self, directory: Path) -> None:
        """The networks, the replay buffer (and the progress, by the caller). The networks
        change only when a generation trains: a state committed after a game links the
        files of the state before it (written again, they took 60 ms each a game)."""
        latest = self.run.latest()
        unchanged = self._nets_of == self.generation and latest is not None
        for name, net in (("net.keras", self.net), ("best.keras", self.best)):
            if unchanged:
                try:
                    os.link(latest[1] / name, directory / name)
                    continue
                except OSError:  # no hard links here: write it
                    pass
            net.save(directory / name)
        self._nets_of = self.generation
        self.buffer.save(directory / "replay.npz")
        for size, buffer in self.other_buffers.items():
            buffer.save(self._other_buffer_path(directory, size))

    def progress_state(self) -> dict[str, Any]:
        return {"generation": self.generation, "games_done": self.games_done, "resignation": self.resignation.counts,
                "generation_moves": self.generation_moves}

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
                started, moves = time.perf_counter(), 0
                for (record, recorded), commit in self._generation_games():
                    if s.sgf:  # before the game is committed: a resumed run never lacks it
                        self._save_sgf(record)
                    size = self.size_of(record["game"])
                    (self.buffer if size is None else self.other_buffers[size]).add(recorded)
                    self.resignation.add(record)
                    self.games_done += 1
                    self.generation_moves += len(record["moves"])
                    moves += len(record["moves"])
                    yield {**record, "buffer_size": self.cases_kept()}, commit
                self._played = [moves, time.perf_counter() - started]
            else:
                record = self.train_generation()
                self.generation += 1
                self.games_done = 0
                self.resignation = ResignationTally()
                self.generation_moves = 0
                self._played = [0, 0.0]
                self.save_checkpoint(self.generation)
                yield record, True

    # ---- SGF records of the games (selfplay.sgf) -------------------------------------------------
    def sgf_path(self, number: int) -> Path:
        """Where game ``number`` of the run (from 1) is saved as SGF."""
        generation, game = divmod(number - 1, self.settings.games_per_generation)
        return self.run.path / "sgf" / f"gen_{generation + 1:04d}_game_{game + 1:03d}.sgf"

    def _save_sgf(self, record: dict[str, Any]) -> None:
        """Game ``record`` as SGF; a game played again after a resume (the same game: its
        random numbers come from its number) replaces its file."""
        players = self.sgf_players(record)
        result = resigned_result(record.get("resigned"))  # a resigned game's W+R; else the final position's
        game = self.sized.game_and_net(self.size_of(record["game"]), self.best)[0]
        write_sgf(self.sgf_path(record["game"]), to_sgf(game, record["moves"], record["starting_player"], result,
                                                        players=players, GN=f"self-play game {record['game']}"))

    def sgf_players(self, record: dict[str, Any]) -> dict[int, str]:
        """The players' names in the SGF record of the game ``record``."""
        return {p: f"hexzero {self.net_name} gen {self.generation}" for p in (1, 2)}

    def _prune_sgf(self) -> None:
        """Remove the SGF files of games after the committed ones (played, then the run
        stopped before committing them): the run plays them again."""
        done = self.generation * self.settings.games_per_generation + self.games_done
        for path in (self.run.path / "sgf").glob("gen_*_game_*.sgf"):
            parts = path.stem.split("_")
            if parts[1].isdigit() and parts[3].isdigit():
                number = (int(parts[1]) - 1) * self.settings.games_per_generation + int(parts[3])
                if number > done:
                    path.unlink()

    def bar_counts(self) -> tuple[int, int]:
        s = self.settings
        return self.generation * (s.games_per_generation + 1) + self.games_done, s.generations * (s.games_per_generation + 1)

    def bar_postfix(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"generation": self.generation, "buffer": self.cases_kept()}

    def cases_kept(self) -> int:
        """The cases in the replay buffers (every size's)."""
        return len(self.buffer) + sum(len(buffer) for buffer in self.other_buffers.values())

    def completed(self) -> int:
        return self.generation

    def close(self, aborted: bool) -> None:
        if self._backend is not None:
            self._backend.close(abort=aborted)
            self._backend = None

    def _generation_games(self):
        """The rest of this generation's games, in order: ((metrics record, recorded game), commit now?)."""
        s = self.settings
        first = self.generation * s.games_per_generation + self.games_done + 1
        groups = lockstep_groups(first, (self.generation + 1) * s.games_per_generation, s.games_per_generation,
                                 s.lockstep)
        workers = s.workers if s.workers > 0 else os.cpu_count() or 1
        server = uses_server(s, self.net_class)
        if s.backend == "processes" and workers <= 1 and not server:
            for numbers in groups:
                game, net = self.sized.game_and_net(self.size_of(numbers[0]), self.best)
                yield from ((result, True) for result in
                            self_play_games(game, net, self.tree_policy, s, numbers, self.seed))
            return
        if self._backend is None:
            start = partial(NetServer, _server_pieces, (self.config,), s.server_batch, s.server_wait_ms) \
                if server else None
            self._backend = make_backend(s.backend, s.workers, s.ray_address, _worker_start, (self.config,), start)
        with self._backend.shared_net(self.best, self.run.path) as net:
            for results, next_ready in self._backend.play(_worker_games, groups,
                                                          lambda numbers: (self.config, net, numbers, self.seed)):
                for j, result in enumerate(results):
                    yield result, j + 1 == len(results) and not next_ready

    def fit(self) -> dict[str, Any]:
        """Train the network on the replay buffer: the generation's metrics record, its
        losses and the pace of its games."""
        s = self.settings
        heads = getattr(self.net, "aux_heads", ())
        losses = ("loss", "policy_loss", "value_loss", *(f"{head}_loss" for head in heads))
        totals, cases, teacher = dict.fromkeys(losses, 0.0), 0, 0
        # no epochs (imitate.epochs = 0): the games recorded, nothing learnt (distill learns them)
        parts = [(self.net, self.buffer), *((self.sized.game_and_net(size, self.net)[1], buffer)
                                            for size, buffer in self.other_buffers.items())] if s.epochs else []
        stored = sum(len(buffer) for _, buffer in parts)
        for view, buffer in parts:  # each size's cases in turn (a minibatch holds one board size)
            if not len(buffer):
                continue
            # with train_steps, each size its share of the steps (by the positions stored)
            wanted = round(s.train_steps * s.minibatch * len(buffer) / stored) if s.train_steps else None
            if wanted == 0:
                continue
            x, pi, z, *aux = buffer.cases(average_positions=s.average_positions, aux=bool(heads))
            epochs = s.epochs
            share = self.teacher_share() if view is self.net else 0.0  # the teacher games: the game's size
            if wanted:  # drawn by the one shuffle stream
                drawn = draw_cases(len(x), wanted - round(wanted * share), self.net.rng)
                x, pi, z, aux, epochs = x[drawn], pi[drawn], z[drawn], [a[drawn] for a in aux], 1
            if share:
                teacher = round(wanted * share) if wanted else round(len(x) * share / (1 - share))
                theirs = self.teacher_cases(teacher, aux=bool(heads))
                x, pi, z, *aux = (np.concatenate(pair) for pair in zip((x, pi, z, *aux), theirs))
            if view is not self.net:
                view.rng = self.net.rng  # one shuffle stream for every size
            stats = view.fit(x, pi, z, batch_size=s.minibatch, epochs=epochs,
                             **({"aux": dict(zip(("ownership", "score"), aux))} if heads else {}))
            for key in losses:
                totals[key] += float(stats[key]) * len(x)
            cases += len(x)
        if len(parts) > 1:
            self.net.refresh()  # its numpy pass, after training through the other sizes' views
        record: dict[str, Any] = {"kind": "generation", "generation": self.generation + 1, "cases": int(cases)}
        if teacher:
            record["teacher_cases"] = int(teacher)
        if cases:
            record.update({key: total / cases for key, total in totals.items()},
                          learning_rate=float(stats["learning_rate"]))
        record["mean_game_length"] = round(self.generation_moves / s.games_per_generation, 3)
        moves, seconds = self._played
        if moves and seconds > 0:  # the games this session played of the generation (all, unless it resumed)
            record["positions_per_second"] = round(moves / seconds, 2)
        return record

    def teacher_share(self) -> float:
        """The share of a generation's training cases drawn from ``teacher_games`` (0: none given)."""
        s = self.settings
        return s.teacher_share if getattr(s, "teacher_games", None) else 0.0  # imitation runs have none

    def teacher_cases(self, count: int, aux: bool) -> tuple[np.ndarray, ...]:
        """``count`` cases (x, pi, z, aux...) of the teacher games, drawn by the net's shuffle
        stream; the games are read and encoded once a session."""
        s = self.settings
        if self._teacher is None:
            parts = [ReplayBuffer.load(source_buffer_path(source), self.game, self.net.encode_batch)
                     .cases(average_positions=s.average_positions, aux=aux) for source in s.teacher_games]
            self._teacher = tuple(np.concatenate(column) for column in zip(*parts))
        drawn = draw_cases(len(self._teacher[0]), count, self.net.rng)
        return tuple(column[drawn] for column in self._teacher)

    def train_generation(self) -> dict[str, Any]:
        s = self.settings
        started = time.perf_counter()
        record = self.fit()
        if s.resign_threshold > 0:
            record.update(self.resignation.metrics())
        if s.gating:
            tally = self.match(self.net, self.best, s.gating_games)
            record["gating_score"] = tally.score
            # the candidate's rating less the best one's (Bradley-Terry, 95% interval)
            record["gating_elo"] = {k: round(v, 1) for k, v in
                                    two_player_rating(tally.wins, tally.losses, tally.draws).items()}
            record["promoted"] = tally.score >= s.gating_threshold
            if record["promoted"]:
                self.best = self._clone(self.net)
        else:
            self.best = self._clone(self.net)
        record["seconds"] = round(time.perf_counter() - started, 3)
        return record

    def match(self, candidate, best, games: int) -> Tally:
        """The candidate's results against ``best`` (``score``: draws count half): the candidate is
        player 1 in the even games; player 1 opens games 0 and 1 of every four, player 2
        games 2 and 3; the first ``temperature_moves`` moves of a game are drawn with
        temperature so that the games differ."""
        s = self.settings
        plies = GameClock()
        players = [GatingPlayer(self.game, net, self.tree_policy, s, self.rng, self.np_rng, plies)
                   for net in (candidate, best)]
        result = play_match(self.game, *players, games, **BALANCED)
        return result.tally()
