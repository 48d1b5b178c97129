"""hexzero's command line (installed as ``hexzero``; from a checkout ``python cli.py``).

    hexzero play                          a person against MCTS on 5x5 Hex
    hexzero play --p1 mcts --p2 mcts      two agents on the display
    hexzero play --game nim --p1 human    NIM against MCTS
    hexzero train / selfplay / imitate    learning runs (resumable)
    hexzero topp                          tournaments between saved networks
    hexzero plugins                       what is registered, and by whom

Every command reads the declared defaults, then ``hexzero.toml`` in the current directory
(if there is one), then each ``--config FILE`` in order, then every ``--set
key.path=value`` and the command's flags; a bad configuration lists every problem and
exits with 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError, settings_layer
from hexzero.mctsfw.config import (
    ConfigError, config_sections, declared_defaults, fixed_changes, load_config, merge, override, plugin_params,
    setting_at,
)
from hexzero.mctsfw.interrupts import exit_status, stop_on_sigterm
from hexzero.mctsfw.actors import ActorError, HumanActor, actor_spec_problem, is_model_path
from hexzero.mctsfw.match import play_match, replay_record
from hexzero.mctsfw.players import close_actors, make_player, make_players
from hexzero.mctsfw.plugin_manager import PluginError, UnknownPluginError
from hexzero.mctsfw.records import append_game_line, game_line
from hexzero.mctsfw.roles import RoleError
from hexzero.mctsfw.runs import RunDirError
from hexzero.mctsfw.schema import format_value
from hexzero.mctsfw.sgf import SgfError, read_sgf_file, resigned_result, score_text, to_sgf, write_sgf
from hexzero.nets.twohead import PRECISION_VARIABLE, batch_precision, cpu_multiplies_bfloat16

#: the configuration file a command reads from the current directory, when there is one
LOCAL_CONFIG = "hexzero.toml"

#: the errors that are the user's (a bad config, a missing or mismatched model file, an
#: unknown plugin, a net without the role a command needs): one line, exit 2, no traceback
USER_ERRORS = (ConfigError, ModelFileError, UnknownPluginError, PluginError, RoleError, RunDirError, SgfError,
               ActorError)


def hexzero_version() -> str:
    """The installed package's version (``pip install -e .`` installs it too)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("hexzero")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: run pip install -e .)"


def local_config() -> Path | None:
    """``hexzero.toml`` of the current directory, if there is one (the checkout ships one)."""
    path = Path(LOCAL_CONFIG)
    return path if path.is_file() else None


def effective_defaults() -> dict:
    """The values a command starts from here (declared defaults and the local hexzero.toml), for --help."""
    try:
        return load_config(local_config())
    except ConfigError:
        return declared_defaults()


def value_at(config: dict, path: str) -> Any:
    node: Any = config
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _flag_type(setting) -> Any:
    if setting.choices and any(isinstance(c, int) for c in setting.choices):
        return lambda text: int(text) if text.strip().lstrip("-").isdigit() else text
    return {int: int, float: float}.get(setting.type, str)


def search_flags(parser: argparse.ArgumentParser, note: str = "") -> None:
    """The flags that set how hard the players of ``play`` and ``gtp`` think."""
    config_flag(parser, "--model-search-games", "play.model_search_games")
    parser.add_argument("--search-games", type=int,
                        help="search games per move of MCTS players and of saved models (config: mcts.search_games "
                             "and play.model_search_games)" + note)
    config_flag(parser, "--temperature", "play.temperature")
    config_flag(parser, "--time-limit", "mcts.time_limit")


def openings_flag(parser: argparse.ArgumentParser) -> None:
    """``--openings``: what begins each pair of games of a comparison (``mctsfw.match.match_openings``)."""
    from hexzero.mctsfw.match import parse_openings

    def openings(text: str):
        try:
            return parse_openings(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix("--openings is ")) from None

    parser.add_argument("--openings", type=openings, default="auto", metavar="{auto,game,none,N}",
                        help="what begins each pair of games (A once in each seat): auto (the default) the game's "
                             "openings (random stones for Hex and Go, balanced stones near the centre for Gomoku; "
                             "none for NIM and Connect Four) when "
                             "both players would replay one game (searches with nothing drawn at random, outside "
                             "engines, greedy networks), else the empty board; game: the game's openings always; "
                             "none: the empty board; N: N uniformly random legal moves")


def engine_flags(parser: argparse.ArgumentParser, note: str) -> None:
    """The flags of a command that puts one player behind a protocol (``gtp``, ``pbrain``)."""
    parser.add_argument("--p", "--player", dest="player", default="mcts", metavar="PLAYER",
                        help="who plays: random, mcts, a model path, or gtp:COMMAND (default: mcts)")
    search_flags(parser, note)
    config_flag(parser, "--seed", "mcts.seed")


def config_flag(parser: argparse.ArgumentParser, flag: str, path: str, help: str | None = None, **kwargs) -> None:
    """A flag that stands for the config key ``path``: its type, choices and help come from
    the key's declaration, with the value in effect here (``parser.defaults_here``); its
    value becomes ``--set path=value``."""
    setting = setting_at(path)
    if setting is None:
        raise KeyError(f"{flag}: {path} is not a declared config key")
    now = value_at(parser.defaults_here, path)
    text = help or setting.help
    if setting.plugin:  # the names registered here, whoever registered them
        text += f" ({', '.join(mctsfw.default_registries().of(setting.plugin).names())})"
    text = f"{text} (config: {path}; now {format_value(now)})"
    kwargs.setdefault("dest", "config:" + path)
    kwargs.setdefault("metavar", {int: "N", float: "X"}.get(setting.type, "NAME" if setting.plugin else "VALUE"))
    if setting.type is bool and not setting.choices:
        kwargs.pop("metavar")
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text, **kwargs)
        return
    if setting.choices:
        kwargs["metavar"] = "{" + ",".join(map(str, setting.choices)) + "}"
    parser.add_argument(flag, type=_flag_type(setting), help=text.replace("%", "%%"), **kwargs)


def flag_overrides(args: argparse.Namespace) -> list[str]:
    """The ``--set`` overrides that the given config flags stand for."""
    return [override(dest.removeprefix("config:"), value)
            for dest, value in vars(args).items() if dest.startswith("config:") and value is not None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hexzero", description="hexzero: MCTS and Keras agents for board games")
    parser.add_argument("--version", action="version", version=f"hexzero {hexzero_version()}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE", action="append", default=[],
                        help=f"a TOML file merged over ./{LOCAL_CONFIG} and the declared defaults (repeatable: "
                             "later files win)")
    common.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides",
        help="override one config value, e.g. --set games.hex.size=7 (repeatable; after every --config)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    defaults_here = effective_defaults()

    parser.commands = {}  # name -> its parser: an unknown flag is reported with the command's usage

    def command(name: str, help: str) -> argparse.ArgumentParser:
        made = sub.add_parser(name, parents=[common], help=help)
        made.defaults_here = defaults_here  # the config values in effect, for the flags' help
        parser.commands[name] = made
        return made

    play = command("play", "play games: people and agents")
    config_flag(play, "--game", "game")
    play.add_argument("--size", type=int, help="board size for games that have one (config: games.<game>.size)")
    config_flag(play, "--p1", "play.player1")
    config_flag(play, "--p2", "play.player2")
    search_flags(play)
    config_flag(play, "--games", "play.games")
    config_flag(play, "--starting-player", "play.starting_player")
    config_flag(play, "--seed", "mcts.seed")
    config_flag(play, "--display", "show.enabled")
    config_flag(play, "--delay", "show.delay")
    play.add_argument("--no-color", "--no-colour", dest="no_color", action="store_true",
                      help="no colours on the board, even on a terminal (they are never written into a pipe; the "
                           "NO_COLOR environment variable turns them off too)")
    play.add_argument("--gif", metavar="FILE", help="also save each game as an animated GIF (game N of several: FILE-N.gif)")
    play.add_argument("--record", metavar="FILE",
                      help="also save the games played in FILE: as SGF when FILE ends in .sgf (Go, Hex; game "
                           "N of several: FILE-N.sgf), else as JSON lines (any game), one a game: the game's name and "
                           "parameters, the starting player, the moves (action numbers) and the winner; a game left "
                           "with quit is saved as far as it went")
    play.add_argument("--from", metavar="FILE.sgf", dest="from_sgf",
                      help="start from the position of an SGF record (its game, board size and komi; its moves "
                           "replayed, then the players go on; the player to move there is the record's)")

    train = command("train", "on-policy MCTS learning of a network (resumable)")
    add_run_arguments(train, "train", "--episodes", "episodes")

    topp = command("topp", "Tournament of Progressive Policies between saved models")
    topp.add_argument("run_dir", nargs="?", metavar="RUN_DIR",
                      help="a training run: its config.toml names the game, checkpoints/*.keras are the agents")
    topp.add_argument("--models", nargs="+", metavar="MODEL",
                      help="model files (.keras) to play instead of a run's, and/or outside engines (gtp:COMMAND)")
    topp.add_argument("--game", help="game plugin name (default: the run's game, else config: game)")
    topp.add_argument("--size", type=int, help="board size for games that have one")
    config_flag(topp, "--games", "topp.games_per_series", metavar="G")
    config_flag(topp, "--selection", "topp.selection")
    config_flag(topp, "--seed", "topp.seed")
    config_flag(topp, "--every", "topp.every", metavar="N")
    config_flag(topp, "--last", "topp.last", metavar="K")
    config_flag(topp, "--random-anchor", "topp.random_anchor")
    config_flag(topp, "--display", "topp.display")
    config_flag(topp, "--delay", "show.delay")
    topp.add_argument("--gif", metavar="DIR", help="save every game as an animated GIF in DIR (config: topp.gif, into OUT/gifs)")
    topp.add_argument("--out", metavar="DIR", help="where topp.json, topp.png and ratings.png go (default: a training "
                                                   "run's RUN_DIR/topp; for another folder, such as models/hex5, "
                                                   "runs/topp/FOLDER; for --models, runs/topp)")

    selfplay = command("selfplay", "AlphaZero-style self-play generations (resumable)")
    config_flag(selfplay, "--game", "game")
    add_run_arguments(selfplay, "selfplay", "--generations", "generations")
    config_flag(selfplay, "--workers", "selfplay.workers")
    config_flag(selfplay, "--init-net", "selfplay.init_net", metavar="MODEL")

    imitate = command("imitate", "a network learns from the games of given players, outside engines too (resumable)")
    config_flag(imitate, "--game", "game")
    add_run_arguments(imitate, "imitate", "--generations", "generations")
    config_flag(imitate, "--p1", "imitate.player1", metavar="PLAYER")
    config_flag(imitate, "--p2", "imitate.player2", metavar="PLAYER")
    config_flag(imitate, "--opening-moves", "imitate.opening_moves", metavar="N")
    config_flag(imitate, "--referee", "imitate.referee")
    config_flag(imitate, "--workers", "imitate.workers")
    config_flag(imitate, "--init-net", "imitate.init_net", metavar="MODEL")

    distill = command("distill", "a network learns the games earlier runs recorded (resumable)")
    distill.add_argument("sources", nargs="*", metavar="SOURCE",
                         help="run directories (their last replay buffer) or replay files (config: distill.sources); "
                              "the game is the first run's unless the config names one")
    add_run_arguments(distill, "distill", "--epochs", "epochs")
    config_flag(distill, "--net", "distill.net")
    config_flag(distill, "--init-net", "distill.init_net", metavar="MODEL")

    compare = command("compare", "play agent A against agent B and report rates and times")
    compare.add_argument("a", help="agent A: random, mcts, a saved model (.keras) or gtp:COMMAND (an outside engine)")
    compare.add_argument("b", help="agent B: as A")
    compare.add_argument("--games", type=int, default=20, help="games to play (A is player 1 in half of them)")
    compare.add_argument("--game", help="game plugin name (config: game)")
    compare.add_argument("--size", type=int, help="board size for games that have one")
    compare.add_argument("--search-games", type=int, help="search games per move of searching agents")
    compare.add_argument("--temperature", type=float, help="searching agents draw moves ~ visits^(1/T); 0 = most visited")
    compare.add_argument("--starting-player", type=int, choices=(1, 2), default=1, help="who opens every game")
    compare.add_argument("--seed", type=int, help="agents' random seed (and the openings')")
    openings_flag(compare)
    compare.add_argument("--display", action="store_true", help="draw the games")
    compare.add_argument("--json", metavar="FILE", help="also write the results as JSON")

    gtp = command("gtp", "speak GTP (version 2) on stdin/stdout: for GoGui, Sabaki, HexGui, other engines")
    config_flag(gtp, "--game", "game")
    gtp.add_argument("--size", type=int, help="board size for games that have one (config: games.<game>.size)")
    gtp.add_argument("--komi", type=float, help="komi for games that have it (config: games.<game>.komi); "
                                                "the controller's komi command changes it")
    engine_flags(gtp, "; time_settings from the controller may stop a search sooner")
    gtp.add_argument("--resign-threshold", type=float, default=0.0, metavar="X",
                     help="a searching player answers genmove with resign when its chosen move's value (1 win, "
                          "0 loss) is below X (default 0: never resigns)")

    pbrain = command("pbrain", "speak the Gomocup brain protocol on stdin/stdout: for Piskvork, Yixin-Board, "
                               "the Gomocup manager (Gomoku)")
    config_flag(pbrain, "--game", "game")
    pbrain.add_argument("--size", type=int, help="board size (config: games.gomoku.size); the manager's START "
                                                 "changes it")
    engine_flags(pbrain, "; the manager's INFO timeout_turn and time_left may stop a search sooner")

    serve = command("serve", "the board in the browser: a person plays an agent on a local web page")
    config_flag(serve, "--game", "game")
    serve.add_argument("--size", type=int, help="board size for games that have one (config: games.<game>.size)")
    config_flag(serve, "--p2", "play.player2", "the agent: random, mcts, a model path or gtp:COMMAND (the person "
                                               "plays player 1 at first; the page swaps sides)")
    search_flags(serve)
    config_flag(serve, "--seed", "mcts.seed")
    config_flag(serve, "--host", "serve.host", metavar="HOST")
    config_flag(serve, "--port", "serve.port")

    model = command("model", "what a saved network carries: the game it was made for and the search it plays "
                             "best with; --write records those of the config given")
    model.add_argument("path", metavar="MODEL", help="a saved network (.keras)")
    model.add_argument("--write", action="store_true",
                       help="record in the file the game and the search of the config: its own settings, then "
                            "--config and --set over them (the game must be one it can play)")

    command("plugins", "list registered games, nets, tree policies, evaluators, displays, actor kinds")
    command("info", "what this install uses: versions, the Keras backend and its device, the self-play workers, "
                    "the outside programs found")
    return parser


def add_run_arguments(parser: argparse.ArgumentParser, section: str, length_flag: str, length_key: str) -> None:
    """The flags of a resumable learning command (train, selfplay)."""
    config_flag(parser, "--run-dir", f"{section}.run_dir", metavar="DIR")
    config_flag(parser, length_flag, f"{section}.{length_key}")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its config snapshot; --config and --set apply to the "
                             "keys a resumed run may change, and any other change is refused")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def play_overrides(args: argparse.Namespace, game_name: str) -> list[str]:
    """The config overrides that the play command's flags stand for."""
    pairs = flag_overrides(args)
    if args.size is not None:
        pairs.append(override(f"games.{game_name}.size", args.size))
    if args.search_games is not None and args.search_games < 0:  # one flag, one problem (it sets two keys)
        raise ConfigError([f"--search-games: must be a whole number >= 0, not {args.search_games}"])
    if args.search_games is not None:
        pairs.append(override("mcts.search_games", args.search_games))
        if getattr(args, "config:play.model_search_games", None) is None:
            pairs.append(override("play.model_search_games", args.search_games))
    return pairs


def configs_with_models(args: argparse.Namespace, game_flag: str | None, pairs_for: Callable[[str], list[str]],
                        specs_of: Callable[[dict], dict]) -> tuple[dict, dict]:
    """(the command's config, {player key: that player's config}) where players are saved
    models: each model's settings (``mctsfw.checkpoints.settings_layer``: its game, the
    search it plays best with) lie between ./hexzero.toml and the user's ``--config``,
    ``--set`` and flags. The first model's game is the match's unless the user names
    another (a network that cannot play it is refused when loaded, naming both); each
    model searches with its own settings unless the user sets them. ``pairs_for(game)``:
    the overrides the command's flags stand for; ``specs_of(config)``: the player specs."""
    def load(layer: dict | None = None) -> dict:
        name = game_flag or load_config(local_config(), args.config, args.overrides, network=layer)["game"]
        return load_config(local_config(), args.config, args.overrides + pairs_for(name), network=layer)

    config = load()
    layers = {key: settings_layer(spec) for key, spec in specs_of(config).items() if is_model_path(spec)}
    first = next((layer for layer in layers.values() if layer), None)
    if first is None:
        return config, {}
    game_layer = {"game": first["game"], "games": first["games"]}
    return load(game_layer), {key: load(merge(game_layer, layer)) for key, layer in layers.items() if layer}


def save_gif(game: mctsfw.Game, record, path: str, number: int | None) -> None:
    gif = mctsfw.default_registries().displays.get("gif")()
    replay_record(game, record, gif)
    target = Path(path)
    if number is not None:
        target = target.with_name(f"{target.stem}-{number}{target.suffix or '.gif'}")
    gif.save(target)
    print(f"saved {target}")


def flag(args: argparse.Namespace, path: str) -> Any:
    """The value given to the flag that stands for config key ``path`` (None if not given)."""
    return getattr(args, "config:" + path, None)


def sgf_record_path(path: str, number: int | None) -> Path:
    """Where ``play --record FILE.sgf`` saves game ``number`` (None: the only game)."""
    target = Path(path)
    return target if number is None else target.with_name(f"{target.stem}-{number}{target.suffix}")


def hint_giver(game: mctsfw.Game, person: int, actors: dict, config: dict, seed: int | None, watcher=None):
    """``hint(state, swap)`` for the person who is player ``person``: the opposing agent's
    search of the person's position (``Actor.analyse``), or, when the opponent does not
    search (a person, a raw network, random), a plain MCTS with the config's budget,
    built when first asked. One line: the suggested move, its share of the visits, the
    person's win estimate; where the swap is offered (``swap``: the starting player and
    the moves), the swapped position is searched too, and the swap suggested when it
    promises more."""
    helper: list = []

    def analyse(state):
        """(progress, who thinks) of the first searcher that will."""
        opponent = actors[3 - person]
        if watcher is not None:
            opponent.watch(None)  # a hint is not the agent's move: no thinking line for it
        try:
            progress = opponent.analyse(state)
        finally:
            if watcher is not None:
                opponent.watch(watcher)
        if progress is not None:
            return progress, f"{opponent.label} thinks"
        if not helper:
            helper.append(make_player("mcts", game, config, seed))
        return helper[0].analyse(state), f"no searching agent here: {helper[0].label} thinks"

    def hint(state, swap=None) -> str:
        progress, who = analyse(state)
        move = game.action_to_text(progress.best_action, state)
        total = sum(progress.visits.values())
        text = (f"{move}, {progress.share(progress.best_action):.0%} of {total} visits; "
                f"your {progress.outlook()}")
        if swap is not None:
            starting, moves = game.swapped(*swap)
            swapped = 1.0 - analyse(game.state_after(moves, starting))[0].win_estimate
            text = (f"swap: your win estimate {swapped:.0%} after the swap, {progress.win_estimate:.0%} answering "
                    f"with {move}") if swapped > progress.win_estimate else f"{text} (after a swap {swapped:.0%})"
        return f"hint ({who}): {text}"

    return hint


def command_play(args: argparse.Namespace) -> int:
    sgf = None
    if args.from_sgf:  # the record says which game it is: read it once for that, again with the config's parameters
        game_name = read_sgf_file(args.from_sgf).game.name
        if flag(args, "game") not in (None, game_name):
            raise SgfError(f"{args.from_sgf}: a game of {game_name}, not of {flag(args, 'game')} (--game)")
    else:
        game_name = flag(args, "game")
    config, player_configs = configs_with_models(
        args, game_name, lambda name: play_overrides(args, name),
        lambda config: {1: config["play"]["player1"], 2: config["play"]["player2"]})
    problem = (args.gif and output_file_problem(args.gif, "--gif")) or \
        (args.record and output_file_problem(args.record, "--record"))
    if problem:  # checked before the games are played
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.from_sgf:
        sgf = read_sgf_file(args.from_sgf, params=plugin_params(config, "games", game_name))
        if args.size is not None and args.size != sgf.size:
            raise SgfError(f"{args.from_sgf}: a {sgf.size}x{sgf.size} board, not {args.size}x{args.size} (--size)")
        game = sgf.game
        if game.is_final(sgf.state()):
            raise SgfError(f"{args.from_sgf}: the game is over after its {len(sgf.moves)} moves: nothing to play")
    else:
        game = mctsfw.make_config_game(config)
    as_sgf = bool(args.record) and Path(args.record).suffix.lower() == ".sgf"
    if as_sgf and game.sgf_game is None:
        print(f"error: --record {args.record}: {game.name} has no SGF; record it as JSON lines (another extension)",
              file=sys.stderr)
        return 2
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    specs = {1: config["play"]["player1"], 2: config["play"]["player2"]}
    actors = make_players(specs, game, config, seed, player_configs)
    display = None
    if config["show"]["enabled"] or "human" in specs.values():
        display_class = mctsfw.default_registries().displays.get(config["display"])
        extra = {"colour": False} if args.no_color and config["display"] == "terminal" else {}
        display = display_class(delay=config["show"]["delay"], **extra)
    watcher = getattr(display, "thinking", None)  # a display may show the agents think (the terminal's does)
    for player, actor in actors.items():
        if watcher is not None:
            actor.watch(watcher)
        if isinstance(actor, HumanActor):
            actor.hint = hint_giver(game, player, actors, config, seed, watcher)
    starting = config["play"]["starting_player"]
    games = config["play"]["games"]
    print(f"{game!r}: player 1 = {actors[1].label}, player 2 = {actors[2].label}")
    if "human" in specs.values():
        print(f"type a move ({game.move_help}), or help for the commands (undo, hint, swap, resign, quit)")
    if sgf is not None:
        print(f"from {args.from_sgf}: {len(sgf.moves)} moves played, player {game.current_player(sgf.state())} to move")
    if args.record and not as_sgf:
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text("")  # each game is added as it ends: an interrupted match keeps the finished ones
    saved: list[Path] = []

    def game_started(number: int, starting_player: int) -> None:
        if games > 1:
            print(f"game {number + 1} of {games}: player {starting_player} starts")

    def game_ended(number: int, record) -> None:
        if args.gif:
            save_gif(game, record, args.gif, number + 1 if games > 1 else None)
        if as_sgf:
            path = sgf_record_path(args.record, number + 1 if games > 1 else None)
            result = resigned_result(getattr(record, "resigned", None))  # W+R; else the final position's
            if result is None and record.score is not None:  # or the count of the engine that judged it
                result = score_text(record.score)
            write_sgf(path, to_sgf(game, record.actions, record.starting_player, result,
                                   players={p: actors[p].label for p in (1, 2)}, DT=time.strftime("%Y-%m-%d"),
                                   swapped_first_move=record.swapped_first_move))
            saved.append(path)
        elif args.record:
            line = game_line(game, record.starting_player, record.actions, record.winner)
            if record.swapped_first_move is not None:  # the game as played: this first move, then the swap
                line["swapped_first_move"] = int(record.swapped_first_move)
            if record.quit is not None:
                line["quit"] = record.quit
            append_game_line(args.record, line)
        if record.quit is not None:
            print(f"game {number + 1}: player {record.starting_player} started, {len(record.actions)} moves, "
                  f"unfinished: player {record.quit} quit")
            return
        outcome = f"player {record.winner} ({actors[record.winner].label}) wins" if record.winner else "a draw"
        if record.resigned:
            outcome += f": player {record.resigned} resigned"
        elif record.score is not None:  # an outside engine counted the game (GNU Go's final_score)
            outcome += f": {score_text(record.score)} as the outside engine counted"
        print(f"game {number + 1}: player {record.starting_player} started, {len(record.actions)} moves, {outcome}")

    if sgf is not None:
        openers, opening = (sgf.starting_player,), sgf.moves
    else:
        openers, opening = ((1, 2) if starting == "alternate" else (starting,)), ()
    try:
        result = play_match(game, actors[1], actors[2], games, seating=(1,), openers=openers, display=display,
                            game_started=game_started, game_ended=game_ended, opening=opening, judged=True)
    finally:
        close_actors(actors.values())
    if games > 1 or result.games < games:
        print(f"score: player 1 {result.wins_a}, player 2 {result.wins_b}, draws {result.draws}"
              + (f" ({result.games} of {games} games finished)" if result.games < games else ""))
    if as_sgf:
        print(f"games saved in {', '.join(map(str, saved))}" if len(saved) < 4 else
              f"games saved in {saved[0]} ... {saved[-1]}")
    elif args.record:
        print(f"games saved in {args.record}")
    return 0


def directory_problem(path: str | Path, what: str) -> str | None:
    """Why ``path`` cannot be (or become) a directory: it, or the nearest existing folder
    above it, is a file. None when it can."""
    path = Path(path)
    for candidate in (path, *path.parents):
        if candidate.exists():
            if candidate.is_dir():
                return None
            return f"{what} {path} is a file, not a directory" if candidate == path else \
                f"{what} {path} cannot be made: {candidate} is a file"
    return None


def output_file_problem(path: str | Path, what: str) -> str | None:
    """Why a file cannot be written at ``path`` (it is a directory, or a folder above it is a file)."""
    path = Path(path)
    if path.is_dir():
        return f"{what} {path} is a directory, not a file"
    return directory_problem(path.parent, what) if str(path.parent) not in ("", ".") else None


def describe_resumable() -> str:
    """The keys a resumed run may change, whole sections as [name]."""
    parts = []
    for section in config_sections():
        keys = [s.name for s in section.settings if s.resumable]
        if section.name and keys and len(keys) == len(section.settings):
            parts.append(f"[{section.name}]")
        else:
            parts += [section.path(k) for k in keys]
    return ", ".join(parts)


def fixed_change_reason(saved: dict, config: dict, section: str) -> str | None:
    """Why ``config`` cannot continue the run of ``[section]`` whose config was ``saved``: the
    keys that differ and that a run keeps from its start, with both values (None when there
    are none). The other run commands' sections do not count (``fixed_changes``)."""
    fixed = fixed_changes(saved, config, section=section)
    if not fixed:
        return None
    shown = ", ".join(f"{k} = {json.dumps(value_at(config, k))} (the run has {json.dumps(value_at(saved, k))})"
                      for k in fixed[:4]) + (f" and {len(fixed) - 4} more" if len(fixed) > 4 else "")
    which = "this key from its start, because it shapes" if len(fixed) == 1 else \
        "these keys from its start, because they shape"
    return f"{shown}; a run keeps {which} what it has already learnt (a resumed run may change {describe_resumable()})"


def counted(number: int, plural: str) -> str:
    """``1 episode``, ``3 episodes``: a count and its noun (given in the plural)."""
    return f"{number} {plural.removesuffix('s') if number == 1 else plural}"


def run_training(args: argparse.Namespace, section: str, length_key: str, make_trainer,
                 layer: dict | None = None) -> int:
    """Start, resume or extend the run of ``[section]`` (train or selfplay).

    With ``--resume RUN_DIR`` the run's config snapshot is the base, and ``--config`` and
    ``--set`` apply over it; without it, a run found in the run directory is continued
    when the config asks for it. Either way a change to a key a run keeps from its start
    (one not declared ``resumable``) is refused, naming the key: never silently dropped.
    """
    from hexzero.mctsfw.backends import BackendError
    from hexzero.mctsfw.netserver import NetServerError
    from hexzero.mctsfw.runs import RunDir

    flags = flag_overrides(args)
    if args.resume:
        if flag(args, f"{section}.run_dir") is not None:
            print("error: give the run directory once: --resume RUN_DIR or --run-dir RUN_DIR, not both", file=sys.stderr)
            return 2
        problem = directory_problem(args.resume, "--resume")
        run = RunDir(args.resume)
        if problem or not run.exists():
            print(f"error: {problem or f'{args.resume} holds no run (no config.toml)'}", file=sys.stderr)
            return 2
        saved = load_config(run.config_path)
        config = load_config(run.config_path, args.config, args.overrides + flags)
        fixed = fixed_change_reason(saved, config, section)
        if fixed:
            print(f"error: --resume {run.path}: {fixed}; start a new run with --run-dir NEW_DIR", file=sys.stderr)
            return 2
    else:
        config = load_config(local_config(), args.config, args.overrides + flags, network=layer)
        problem = directory_problem(config[section]["run_dir"], f"{section}.run_dir:")
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        run = RunDir(config[section]["run_dir"])
        if run.exists():
            fixed = fixed_change_reason(load_config(run.config_path), config, section)
            if fixed:
                print(f"error: {run.path} holds a run with another configuration: {fixed}: continue it with "
                      f"--resume {run.path}, or start a new one with --run-dir NEW_DIR", file=sys.stderr)
                return 2
    problems = make_trainer.config_problems(config)
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        return 2
    with run.lock():  # a second process on this run is refused before it says or writes anything
        from hexzero.nets.anet import device_line

        print(device_line())
        asked = config[section][length_key]
        trainer = make_trainer(config, run.path, progress=not args.no_progress)
        trainer.on_resume = lambda done: print(f"resuming {run.path} after {counted(done, length_key)} "
                                               f"({section}.{length_key} = {asked})", flush=True)
        try:
            summary = trainer.train()
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM
            print(f"\ninterrupted: resume with hexzero {args.command} --resume {run.path}", file=sys.stderr)
            return exit_status(stop)
        except (BackendError, NetServerError) as error:  # self-play workers (or their network server) that
            # cannot start (a Ray cluster not there) or go on
            resume = f": resume with hexzero {args.command} --resume {run.path}" if run.latest() else ""
            print(f"error: {error}{resume}", file=sys.stderr)
            return 2
        done = summary[length_key]
        if summary["nothing_to_do"]:
            print(f"nothing to do: {run.path} holds {counted(done, length_key)} already, and {section}.{length_key} asks "
                  f"for {asked}; to go on, ask for more (--{length_key} {done + 1} or more)")
            return 0
        print(f"{counted(done, length_key)} in {run.path} ({counted(summary['this_time'], length_key)} this time, "
              f"{summary['seconds']:.1f} s); checkpoints:")
        for path in summary["checkpoints"]:
            print(f"  {path}")
        print(f"metrics: {run.metrics_path}")
        print(f"next: hexzero {trainer.next_command} {run.path}")
        return 0


def command_train(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.training import Trainer

    return run_training(args, "train", "episodes", Trainer)


def command_selfplay(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.selfplay import SelfPlayTrainer

    return run_training(args, "selfplay", "generations", SelfPlayTrainer)


def command_imitate(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.imitation import ImitationTrainer

    return run_training(args, "imitate", "generations", ImitationTrainer)


def command_distill(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.distill import DistillTrainer, source_game

    if args.sources:
        args.overrides = args.overrides + [f"distill.sources={json.dumps(list(args.sources))}"]
    sources = load_config(local_config(), args.config, args.overrides)["distill"]["sources"]
    layer = next((made for made in map(source_game, sources) if made), None)  # the first run's game
    return run_training(args, "distill", "epochs", DistillTrainer, layer=layer)


def command_topp(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.config import read_toml

    if not args.run_dir and not args.models:
        print("error: give a run directory (cli.py topp RUN_DIR) or model files (--models A.keras B.keras ...)",
              file=sys.stderr)
        return 2
    run_dir = Path(args.run_dir) if args.run_dir else None
    if run_dir is not None and not run_dir.is_dir():
        reason = "is a file, not a run directory" if run_dir.exists() else "no such run directory"
        print(f"error: {run_dir}: {reason}", file=sys.stderr)
        return 2
    config = load_config(local_config(), args.config, args.overrides + flag_overrides(args))
    # the game: the run's own (its config snapshot), unless named on the command line
    game_config = config
    if run_dir is not None and (run_dir / "config.toml").is_file():
        game_config = read_toml(run_dir / "config.toml")
    elif args.models:  # model files alone: the game the first that names one was made for, under the user's
        layer = next((layer for layer in (settings_layer(m) for m in args.models if is_model_path(m)) if layer), None)
        if layer:
            game_config = load_config(local_config(), args.config, args.overrides + flag_overrides(args),
                                      network={"game": layer["game"], "games": layer["games"]})
    game_name = args.game or game_config.get("game", config["game"])
    game_params = plugin_params(game_config, "games", game_name) if game_name == game_config.get("game") else {}
    if args.size is not None:
        game_params["size"] = args.size
    topp_config = config["topp"]
    topp_class = mctsfw.default_registries().evaluators.get("topp")
    try:
        game = mctsfw.make_game(game_name, **game_params)
        found = topp_class.collect_models(args.models if args.models else run_dir)
        paths = topp_class.select_models(found, every=topp_config["every"], last=topp_config["last"])
        if len(paths) + topp_config["random_anchor"] < 2:
            raise ValueError(f"a tournament needs at least 2 agents, found {len(paths)} model(s): "
                             f"{', '.join(map(str, paths))}")
        # a training run's own folder takes its tournament (RUN_DIR/topp, the curves in RUN_DIR/tb); any
        # other folder (models/, shipped networks) and loose files are only read: the results go to runs/topp
        is_run = run_dir is not None and not args.models and (run_dir / "checkpoints").is_dir()
        out_dir = Path(args.out) if args.out else (run_dir / "topp" if is_run else Path("runs", "topp", *(
            [run_dir.resolve().name] if run_dir is not None and not args.models else [])))
        gif_dir = Path(args.gif) if args.gif else (out_dir / "gifs" if topp_config["gif"] else None)
        # checked before the games are played, not when their results are written
        for directory, what in ((out_dir, "--out"), (gif_dir, "--gif")):
            problem = directory and directory_problem(directory, what)
            if problem:
                raise ValueError(problem)
        display = None
        if topp_config["display"]:
            display = mctsfw.default_registries().displays.get(config["display"])(delay=config["show"]["delay"])
        seed = None if topp_config["seed"] == -1 else topp_config["seed"]
        topp = topp_class.from_models(
            game, paths, games_per_series=topp_config["games_per_series"], selection=topp_config["selection"],
            seed=seed, display=display, gif_dir=gif_dir, stream=sys.stdout, random_anchor=topp_config["random_anchor"],
            temperature=topp_config["temperature"],
        )
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    chosen = f" (of {len(found)})" if len(paths) < len(found) else ""
    print(f"TOPP on {game!r}: {len(paths)} models{chosen}" + (" and random play" if topp_config["random_anchor"] else "")
          + f", {topp.games_per_series} games a pair, {topp.selection} selection"
          + (f" (temperature {topp_config['temperature']:g})" if topp.selection == "sample" else ""))
    result = topp.run()
    files = result.save(out_dir)
    if is_run:
        from hexzero.mctsfw.runs import RunDir

        result.write_curves(RunDir(run_dir).tb_dir / "topp")
    print()
    print(result.table())
    print()
    print(result.matrix_text())
    print(f"\nwrote {files['json']}, {files['png']} and {files['ratings']}"
          + (f"; game GIFs in {gif_dir}" if gif_dir else ""))
    return 0


def command_compare(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.match import compare, compare_report

    problem = "--games must be at least 1" if args.games < 1 else args.json and output_file_problem(args.json, "--json")
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    as_play = argparse.Namespace(**{
        "size": args.size, "search_games": args.search_games, "config:game": args.game, "config:mcts.seed": args.seed,
        "config:play.temperature": args.temperature, "config:play.player1": args.a, "config:play.player2": args.b,
    })
    config, player_configs = configs_with_models(args, args.game, lambda name: play_overrides(as_play, name),
                                                 lambda config: {0: args.a, 1: args.b})
    game = mctsfw.make_config_game(config)
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    made = make_players({0: args.a, 1: args.b}, game, config, seed, player_configs)
    actors = [made[0], made[1]]
    if actors[0].label == actors[1].label:
        actors[0].label, actors[1].label = f"A:{actors[0].label}", f"B:{actors[1].label}"
    display = mctsfw.default_registries().displays.get(config["display"])() if args.display else None
    try:
        result = compare(game, actors[0], actors[1], args.games, args.starting_player, display,
                         openings=args.openings, seed=seed)
    finally:
        close_actors(actors)
    print(compare_report(result))
    if args.json:
        from hexzero.mctsfw.checkpoints import atomic_path

        with atomic_path(args.json) as tmp:
            Path(tmp).write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json}")
    return 0


def command_serve(args: argparse.Namespace) -> int:
    from hexzero.plugins.web import LOCAL_HOSTS, WebBoard, serve

    config, player_configs = configs_with_models(args, flag(args, "game"), lambda name: play_overrides(args, name),
                                                 lambda config: {2: config["play"]["player2"]})
    spec = config["play"]["player2"]
    if spec == "human":
        print("error: --p2 human: the web board's opponent is an agent (random, mcts, a model path or gtp:COMMAND); "
              "the person plays on the page", file=sys.stderr)
        return 2
    host, port = config["serve"]["host"], config["serve"]["port"]
    game = mctsfw.make_config_game(config)
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    try:
        agent = make_player(spec, game, player_configs.get(2, config), None if seed is None else seed + 2)
    except ValueError as error:  # an agent the game cannot have (a model file's error names the file)
        print(f"error: {error if spec in str(error) else f'--p2 {spec}: {error}'}", file=sys.stderr)
        return 2
    try:
        board = WebBoard(game, agent)
    except BaseException:
        agent.close()
        raise
    if host not in LOCAL_HOSTS:
        print(f"warning: serving on {host}: other machines that reach this one can play on the board "
              "(--host 127.0.0.1 keeps it to this machine)", file=sys.stderr)
    try:
        serve(board, host, port, announce=lambda line: print(line, flush=True))
    except OSError as error:  # the port is taken, the address is not this machine's
        print(f"error: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM: the socket is closed and the agent let go on the way out
        print("\nstopped", file=sys.stderr)
        return 0
    return 0


def command_model(args: argparse.Namespace) -> int:
    from hexzero.mctsfw.checkpoints import describe_settings, load_net, play_settings, saved_settings

    config = load_config(local_config(), args.config, args.overrides, network=settings_layer(args.path))
    game = mctsfw.make_config_game(config)
    net = load_net(args.path, game)  # refused, naming both, where it cannot play the config's game
    if args.write:
        net.play_settings = play_settings(config, net)
        net.save(args.path)
        print(f"wrote the game and search settings into {args.path}")
    saved = saved_settings(args.path)
    print(f"{args.path}: {net!r}")
    if not saved:
        print("carries no settings (saved before networks carried them): commands play it with the config's; "
              "record them with --write (and --config)")
        return 0
    print(f"game: {describe_settings(saved['game']['name'], saved['game']['params'])}")
    search = saved.get("search")
    if search:
        policy, params = search["tree_policy"], dict(search.get("policy_params") or {})
        if policy in mctsfw.default_registries().tree_policies:  # self-play's root noise: no player adds it
            for name in mctsfw.default_registries().tree_policies.get(policy).root_noise_params:
                params.pop(name, None)
        weight = params.get("value_weight", 1.0)
        leaves = "" if "playouts" not in search else (
            "; leaves judged by the value head alone" if weight == 1 else
            f"; leaves judged {weight:g} by the value head, {1 - weight:g} by {search['playouts']} playouts")
        print(f"search: {describe_settings(policy, params)}{leaves}")
    else:
        print("search: none recorded (the config's)")
    return 0


def command_info(args: argparse.Namespace) -> int:
    """What a user checks first: versions, the Keras backend and device, the workers
    self-play would use, and which outside programs are found (and how to get the others)."""
    import importlib.metadata
    import os
    import platform

    from hexzero.nets.anet import device_line
    from hexzero.plugins.gtp import find_program
    from hexzero.plugins.mohex import find_mohex
    from hexzero.plugins.pachi import find_pachi
    from hexzero.plugins.rapfi import find_rapfi

    config = load_config(local_config(), args.config, args.overrides)

    def version(package: str) -> str:
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    print(f"hexzero {version('hexzero')}: Python {platform.python_version()}, {platform.system()} "
          f"{platform.machine()}, {os.cpu_count()} cores")
    print("packages: " + ", ".join(f"{name} {version(name)}" for name in
                                   ("keras", "tensorflow", "tensorflow-cpu", "jax", "numpy", "numba", "pluggy",
                                    "networkx", "ray", "open_spiel") if version(name) != "not installed"))
    print(device_line())
    hardware = cpu_multiplies_bfloat16()
    print(f"network batches in {batch_precision()} (${PRECISION_VARIABLE}: float32, bfloat16 or auto; this CPU "
          + ("multiplies bfloat16 in hardware: bfloat16 judges a ResNet's batches a few times faster)" if hardware
             else "has no bfloat16 in hardware: keep float32)"))
    workers = config["selfplay"]["workers"]
    print(f"self-play workers: {workers or os.cpu_count() or 1}" + (" (selfplay.workers = 0: one per core)"
                                                                    if not workers else " (selfplay.workers)"))
    found = {
        "GNU Go": (find_program("gnugo"), "apt-get install gnugo"),
        "MoHex": (find_mohex(), "scripts/build_mohex.sh, or $HEXZERO_MOHEX"),
        "Pachi": (find_pachi(), "scripts/build_pachi.sh, or $HEXZERO_PACHI"),
        "Rapfi (a Gomocup brain)": (find_rapfi(), "scripts/build_rapfi.sh, or $HEXZERO_RAPFI"),
        "Chromium": (find_program("chromium") or find_program("chromium-browser"),
                     "apt-get install chromium chromium-driver (the browser board's tests)"),
    }
    print("outside programs:")
    for name, (path, how) in found.items():
        print(f"  {name}: {path}" if path else f"  {name}: not found ({how})")
    return 0


def command_plugins(args: argparse.Namespace) -> int:
    load_config(local_config(), args.config, args.overrides)  # a broken config fails here too
    registries = mctsfw.default_registries()
    for title, registry in [
        ("games", registries.games),
        ("nets", registries.nets),
        ("tree policies", registries.tree_policies),
        ("evaluators", registries.evaluators),
        ("displays", registries.displays),
        ("actor kinds (player specs NAME:...)", registries.actors),
    ]:
        print(f"{title}:")
        if not registry.names():
            print("  (none)")
        for name in registry.names():
            description = getattr(registry.get(name), "description", "") or ""
            print(f"  {name:<14} from {registry.provider(name):<26} {description}")
    return 0


def command_gtp(args: argparse.Namespace) -> int:
    from hexzero.plugins.gtp import GtpEngine

    def pairs_for(game_name: str) -> list[str]:
        pairs = play_overrides(args, game_name)
        if args.komi is not None:
            pairs.append(override(f"games.{game_name}.komi", args.komi))
        return pairs

    config, player_configs = configs_with_models(args, flag(args, "game"), pairs_for, lambda config: {0: args.player})
    if not 0 <= args.resign_threshold < 1:
        print(f"error: --resign-threshold is a value from 0 (never resign) to below 1, not {args.resign_threshold}",
              file=sys.stderr)
        return 2
    params = plugin_params(config, "games", config["game"])
    return serve_engine(args, config, player_configs.get(0, config), "a GTP engine", lambda make: GtpEngine(
        config["game"], params, make, resign_threshold=args.resign_threshold))


def command_pbrain(args: argparse.Namespace) -> int:
    from hexzero.plugins.pbrain import PbrainEngine

    game_name = flag(args, "game") or "gomoku"
    if game_name != "gomoku":
        print(f"error: --game {game_name}: the Gomocup protocol plays Gomoku only (--game gomoku)", file=sys.stderr)
        return 2
    config, player_configs = configs_with_models(args, game_name, lambda name: play_overrides(args, name),
                                                 lambda config: {0: args.player})
    params = plugin_params(config, "games", game_name)
    return serve_engine(args, config, player_configs.get(0, config), "a brain",
                        lambda make: PbrainEngine(game_name, params, make))


def serve_engine(args: argparse.Namespace, config: dict, player_config: dict, what: str,
                 build: Callable[[Callable], Any]) -> int:
    """The player ``--p`` names behind a protocol on stdin and stdout (GTP, Gomocup's):
    ``build(make_player)`` makes the engine, the player with ``player_config`` (a saved
    model's settings under the user's); a person, a bad spec or a player the game cannot
    have is refused in one line (status 2)."""
    from hexzero.plugins.gtp import serve

    if args.player == "human":
        print(f"error: --p human: {what} needs an agent (random, mcts, a model path or gtp:COMMAND)", file=sys.stderr)
        return 2
    problem = actor_spec_problem(args.player)
    if problem:
        print(f"error: --p {problem}", file=sys.stderr)
        return 2
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    try:
        engine = build(lambda game: make_player(args.player, game, player_config, seed))
    except ValueError as error:  # an actor the game cannot have (bad parameters, an engine that failed)
        print(f"error: {error}", file=sys.stderr)
        return 2
    serve(engine)
    return 0


COMMANDS = {"gtp": command_gtp, "pbrain": command_pbrain, "play": command_play, "train": command_train, "selfplay": command_selfplay, "imitate": command_imitate, "topp": command_topp, "compare": command_compare, "plugins": command_plugins,
            "model": command_model, "distill": command_distill, "info": command_info,
            "serve": command_serve}


def show_plugin_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A plugin left out is one line on stderr (other warnings keep Python's format)."""
    if issubclass(category, mctsfw.PluginImportWarning):
        print(f"warning: {message}", file=sys.stderr)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = show_plugin_warning  # before the parser: its --help reads the plugins' settings
    with stop_on_sigterm():  # SIGTERM stops every command as a Ctrl-C does (mctsfw.interrupts)
        try:
            parser = build_parser()
            args, unknown = parser.parse_known_args(argv)
            if unknown:  # said with the command's own usage, not the top level's
                parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
            batch_precision()  # $HEXZERO_PRECISION checked before anything starts (the nets read it later)
            return COMMANDS[args.command](args)
        except USER_ERRORS as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except EOFError:
            print("\nno more input: game abandoned", file=sys.stderr)
            return 1
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM
            print("\ninterrupted", file=sys.stderr)
            return exit_status(stop)


if __name__ == "__main__":
    sys.exit(main())
