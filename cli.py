"""hexzero's command line: play games, list plugins (train and tournaments come with the nets).

    python cli.py play                          a person against MCTS on 5x5 Hex
    python cli.py play --p1 mcts --p2 mcts      two agents on the display
    python cli.py play --game nim --p1 human    NIM against MCTS
    python cli.py plugins                       what is registered, and by whom

Every command takes ``--config FILE`` (merged over hexzero.toml) and any number of
``--set key.path=value``; a bad configuration lists every problem and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mctsfw
from mctsfw.checkpoints import net_class_for
from mctsfw.config import ConfigError, load_config, plugin_params
from mctsfw.match import play_game, replay_record
from mctsfw.roles import POLICY_VALUE, has_role
from mctsfw.runs import RunDirError

DEFAULT_CONFIG = Path(__file__).resolve().parent / "hexzero.toml"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cli.py", description="hexzero: MCTS and Keras agents for board games")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE", help="a TOML file merged over hexzero.toml")
    common.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides",
        help="override one config value, e.g. --set games.hex.size=7 (repeatable)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", parents=[common], help="play games: people and agents")
    play.add_argument("--game", help="game plugin name (config: game)")
    play.add_argument("--size", type=int, help="board size for games that have one (config: games.<game>.size)")
    play.add_argument("--p1", help="player 1: human, random, mcts or a model path (config: play.player1)")
    play.add_argument("--p2", help="player 2 (config: play.player2)")
    play.add_argument("--model-search-games", type=int,
                      help="a saved model's MCTS search games per move; 0 = the raw network (config: play.model_search_games)")
    play.add_argument("--search-games", type=int,
                      help="search games per move of MCTS players and of saved models (config: mcts.search_games "
                           "and play.model_search_games)")
    play.add_argument("--temperature", type=float,
                      help="searching players draw moves ~ visits^(1/T); 0 = most visited (config: play.temperature)")
    play.add_argument("--time-limit", type=float, help="MCTS seconds per move (config: mcts.time_limit)")
    play.add_argument("--games", type=int, help="games in a row (config: play.games)")
    play.add_argument("--starting-player", help="1, 2 or alternate (config: play.starting_player)")
    play.add_argument("--seed", type=int, help="agents' random seed; -1 for a new one (config: mcts.seed)")
    show = play.add_mutually_exclusive_group()
    show.add_argument("--display", dest="show", action="store_true", default=None, help="draw the board (config: show.enabled)")
    show.add_argument("--no-display", dest="show", action="store_false", help="do not draw the board")
    play.add_argument("--delay", type=float, help="seconds to pause after each drawn move (config: show.delay)")
    play.add_argument("--gif", metavar="FILE", help="also save each game as an animated GIF (game N of several: FILE-N.gif)")

    train = sub.add_parser("train", parents=[common], help="on-policy MCTS learning of a network (resumable)")
    add_run_arguments(train, "train", "--episodes", "actual games to play in all (config: train.episodes)")

    topp = sub.add_parser("topp", parents=[common], help="Tournament of Progressive Policies between saved models")
    topp.add_argument("run_dir", nargs="?", metavar="RUN_DIR",
                      help="a training run: its config.toml names the game, checkpoints/*.keras are the agents")
    topp.add_argument("--models", nargs="+", metavar="MODEL", help="model files (.keras) to play instead of a run's")
    topp.add_argument("--game", help="game plugin name (default: the run's game, else config: game)")
    topp.add_argument("--size", type=int, help="board size for games that have one")
    topp.add_argument("--games", type=int, metavar="G", help="games per pair of agents (config: topp.games_per_series)")
    topp.add_argument("--selection", choices=["greedy", "sample"], help="how a network picks its move (config: topp.selection)")
    topp.add_argument("--seed", type=int, help="seed of sampling agents; -1 for a new one (config: topp.seed)")
    topp_show = topp.add_mutually_exclusive_group()
    topp_show.add_argument("--display", dest="show", action="store_true", default=None, help="draw the games (config: topp.display)")
    topp_show.add_argument("--no-display", dest="show", action="store_false", help="do not draw the games")
    topp.add_argument("--delay", type=float, help="seconds to pause after each drawn move (config: show.delay)")
    topp.add_argument("--gif", metavar="DIR", help="save every game as an animated GIF in DIR (config: topp.gif, into OUT/gifs)")
    topp.add_argument("--out", metavar="DIR", help="where topp.json and topp.png go (default: RUN_DIR/topp, else ./topp)")

    selfplay = sub.add_parser("selfplay", parents=[common], help="AlphaZero-style self-play generations (resumable)")
    selfplay.add_argument("--game", help="game plugin name (config: game)")
    add_run_arguments(selfplay, "selfplay", "--generations", "generations in all (config: selfplay.generations)")
    selfplay.add_argument("--workers", type=int,
                          help="processes playing self-play games at once, 0 = one per core (config: selfplay.workers)")

    compare = sub.add_parser("compare", parents=[common], help="play agent A against agent B and report rates and times")
    compare.add_argument("a", help="agent A: random, mcts or a saved model (.keras)")
    compare.add_argument("b", help="agent B: random, mcts or a saved model (.keras)")
    compare.add_argument("--games", type=int, default=20, help="games to play (A is player 1 in half of them)")
    compare.add_argument("--game", help="game plugin name (config: game)")
    compare.add_argument("--size", type=int, help="board size for games that have one")
    compare.add_argument("--search-games", type=int, help="search games per move of searching agents")
    compare.add_argument("--temperature", type=float, help="searching agents draw moves ~ visits^(1/T); 0 = most visited")
    compare.add_argument("--starting-player", type=int, choices=(1, 2), default=1, help="who opens every game")
    compare.add_argument("--seed", type=int, help="agents' random seed")
    compare.add_argument("--display", action="store_true", help="draw the games")
    compare.add_argument("--json", metavar="FILE", help="also write the results as JSON")

    sub.add_parser("plugins", parents=[common], help="list registered games, nets, tree policies, evaluators, displays")
    return parser


def add_run_arguments(parser: argparse.ArgumentParser, section: str, length_flag: str, length_help: str) -> None:
    """The flags of a resumable learning command (train, selfplay)."""
    parser.add_argument("--run-dir", help=f"the run directory (config: {section}.run_dir); an unfinished run there resumes")
    parser.add_argument(length_flag, type=int, help=length_help)
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR with its own config snapshot")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def play_overrides(args: argparse.Namespace, game_name: str) -> list[str]:
    """The config overrides that the play command's flags stand for."""
    pairs = [
        ("game", args.game and f'"{args.game}"'),
        (f"games.{game_name}.size", args.size),
        ("play.player1", args.p1 and f'"{args.p1}"'),
        ("play.player2", args.p2 and f'"{args.p2}"'),
        ("mcts.search_games", args.search_games),
        ("play.model_search_games", args.model_search_games if args.model_search_games is not None else args.search_games),
        ("play.temperature", args.temperature),
        ("mcts.time_limit", args.time_limit),
        ("play.games", args.games),
        ("mcts.seed", args.seed),
        ("show.enabled", None if args.show is None else str(args.show).lower()),
        ("show.delay", args.delay),
    ]
    if args.starting_player is not None:
        sp = args.starting_player
        pairs.append(("play.starting_player", sp if sp in ("1", "2") else f'"{sp}"'))
    return [f"{key}={value}" for key, value in pairs if value is not None]


def make_player(spec: str, game: mctsfw.Game, config: dict, seed: int | None) -> mctsfw.Actor:
    if spec == "mcts":
        mcts = config["mcts"]
        return mctsfw.make_actor(
            "mcts", game,
            search_games=mcts["search_games"] or None,
            time_limit=mcts["time_limit"] or None,
            seed=seed,
            tree_policy=config["tree_policy"],
            temperature=config["play"]["temperature"],
            policy_params=plugin_params(config, "tree_policies", config["tree_policy"]),
        )
    if spec == "random":
        return mctsfw.make_actor(spec, game, seed=seed)
    if spec == "human":
        return mctsfw.make_actor(spec, game)
    # a saved model: the raw network, or with play.model_search_games > 0 a search guided by
    # it: UCT with its rollouts (a policy net), PUCT with its priors and values (policy and value)
    tree_policy = "puct" if has_role(net_class_for(spec), POLICY_VALUE) else "uct"
    policy_params = plugin_params(config, "tree_policies", tree_policy)
    policy_params.pop("dirichlet_epsilon", None)  # root noise is for self-play; a player searches without it
    return mctsfw.make_actor(
        spec, game,
        search_games=config["play"]["model_search_games"],
        time_limit=config["mcts"]["time_limit"] or None,
        selection=config["play"]["model_selection"],
        temperature=config["play"]["temperature"],
        seed=seed,
        tree_policy=tree_policy,
        policy_params=policy_params,
    )


def save_gif(game: mctsfw.Game, record, path: str, number: int | None) -> None:
    gif = mctsfw.default_registries().displays.get("gif")()
    replay_record(game, record, gif)
    target = Path(path)
    if number is not None:
        target = target.with_name(f"{target.stem}-{number}{target.suffix or '.gif'}")
    gif.save(target)
    print(f"saved {target}")


def command_play(args: argparse.Namespace) -> int:
    game_name = args.game or load_config(DEFAULT_CONFIG, args.config, args.overrides)["game"]
    config = load_config(DEFAULT_CONFIG, args.config, args.overrides + play_overrides(args, game_name))
    game = mctsfw.make_game(config["game"], **plugin_params(config, "games", config["game"]))
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    specs = {1: config["play"]["player1"], 2: config["play"]["player2"]}
    actors = {p: make_player(specs[p], game, config, None if seed is None else seed + p) for p in (1, 2)}
    display = None
    if config["show"]["enabled"] or "human" in specs.values():
        display = mctsfw.default_registries().displays.get(config["display"])(delay=config["show"]["delay"])
    starting = config["play"]["starting_player"]
    score = {1: 0, 2: 0, None: 0}
    print(f"{game!r}: player 1 = {actors[1].label}, player 2 = {actors[2].label}")
    for i in range(config["play"]["games"]):
        start = (1 + i % 2) if starting == "alternate" else starting
        record = play_game(game, actors, start, display)
        if args.gif:
            save_gif(game, record, args.gif, i + 1 if config["play"]["games"] > 1 else None)
        score[record.winner] += 1
        outcome = f"player {record.winner} ({actors[record.winner].label}) wins" if record.winner else "a draw"
        print(f"game {i + 1}: player {start} started, {len(record.actions)} moves, {outcome}")
    if config["play"]["games"] > 1:
        print(f"score: player 1 {score[1]}, player 2 {score[2]}, draws {score[None]}")
    return 0


#: config keys that may change between the start of a run and its resumption
RESUMABLE_CHANGES = (
    "train.episodes", "train.display", "train.run_dir", "selfplay.generations", "selfplay.run_dir", "selfplay.workers",
    "show.", "play.", "mcts.", "topp.",
)


def training_config_changes(saved: dict, current: dict) -> list[str]:
    from mctsfw.config import flatten_all

    old, new = flatten_all(saved), flatten_all(current)
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return [k for k in changed if not k.startswith(RESUMABLE_CHANGES)]


def run_training(
    args: argparse.Namespace, section: str, length_key: str, length: int | None, make_trainer, unit: str
) -> int:
    """Start, resume or extend the run of ``[section]`` (train or selfplay)."""
    from mctsfw.runs import RunDir

    flags = [f"{section}.{length_key}={length}"] if length is not None else []
    if getattr(args, "workers", None) is not None:
        flags.append(f"{section}.workers={args.workers}")
    if args.resume:
        run = RunDir(args.resume)
        if not run.exists():
            print(f"error: {args.resume} holds no run (no config.toml)", file=sys.stderr)
            return 2
        config = load_config(DEFAULT_CONFIG, run.config_path, flags)
    else:
        if args.run_dir:
            flags.append(f'{section}.run_dir="{args.run_dir}"')
        if getattr(args, "game", None):
            flags.append(f'game="{args.game}"')
        config = load_config(DEFAULT_CONFIG, args.config, args.overrides + flags)
        run = RunDir(config[section]["run_dir"])
        if run.exists():
            changes = training_config_changes(load_config(DEFAULT_CONFIG, run.config_path), config)
            if changes:
                print(
                    f"error: {run.path} holds a run with another configuration ({', '.join(changes)} differ): "
                    f"continue it with --resume {run.path}, or start a new one with --run-dir NEW_DIR",
                    file=sys.stderr,
                )
                return 2
    latest = run.latest()
    if latest:
        print(f"resuming {run.path} after {unit} {latest[0]} ({length_key}: {config[section][length_key]})")
    trainer = make_trainer(config, run.path, progress=not args.no_progress)
    try:
        summary = trainer.train()
    except KeyboardInterrupt:
        print(f"\ninterrupted: resume with python cli.py {args.command} --resume {run.path}", file=sys.stderr)
        return 130
    done = summary.get("episodes", summary.get("generations"))
    print(f"{done} {length_key} in {run.path} ({summary['this_time']} {unit}s this time, {summary['seconds']:.1f} s); "
          "checkpoints:")
    for path in summary["checkpoints"]:
        print(f"  {path}")
    print(f"metrics: {run.metrics_path}")
    print(f"next: python cli.py topp {run.path}")
    return 0


def command_train(args: argparse.Namespace) -> int:
    from mctsfw.training import Trainer

    return run_training(args, "train", "episodes", args.episodes, Trainer, "episode")


def command_selfplay(args: argparse.Namespace) -> int:
    from mctsfw.selfplay import SelfPlayTrainer

    return run_training(args, "selfplay", "generations", args.generations, SelfPlayTrainer, "step")


def command_topp(args: argparse.Namespace) -> int:
    from mctsfw.config import read_toml

    if not args.run_dir and not args.models:
        print("error: give a run directory (cli.py topp RUN_DIR) or model files (--models A.keras B.keras ...)",
              file=sys.stderr)
        return 2
    run_dir = Path(args.run_dir) if args.run_dir else None
    if run_dir is not None and not run_dir.is_dir():
        print(f"error: {run_dir}: no such run directory", file=sys.stderr)
        return 2
    pairs = [
        ("topp.games_per_series", args.games),
        ("topp.selection", args.selection and f'"{args.selection}"'),
        ("topp.seed", args.seed),
        ("topp.display", None if args.show is None else str(args.show).lower()),
        ("show.delay", args.delay),
    ]
    config = load_config(DEFAULT_CONFIG, args.config, args.overrides + [f"{k}={v}" for k, v in pairs if v is not None])
    # the game: the run's own (its config snapshot), unless named on the command line
    game_config = config
    if run_dir is not None and (run_dir / "config.toml").is_file():
        game_config = read_toml(run_dir / "config.toml")
    game_name = args.game or game_config.get("game", config["game"])
    game_params = plugin_params(game_config, "games", game_name) if game_name == game_config.get("game") else {}
    if args.size is not None:
        game_params["size"] = args.size
    topp_config = config["topp"]
    topp_class = mctsfw.default_registries().evaluators.get("topp")
    try:
        game = mctsfw.make_game(game_name, **game_params)
        paths = topp_class.collect_models(args.models if args.models else run_dir)
        if len(paths) < 2:
            raise ValueError(f"a tournament needs at least 2 models, found {len(paths)}: {', '.join(map(str, paths))}")
        out_dir = Path(args.out) if args.out else (run_dir / "topp" if run_dir is not None else Path("topp"))
        gif_dir = Path(args.gif) if args.gif else (out_dir / "gifs" if topp_config["gif"] else None)
        display = None
        if topp_config["display"]:
            display = mctsfw.default_registries().displays.get(config["display"])(delay=config["show"]["delay"])
        seed = None if topp_config["seed"] == -1 else topp_config["seed"]
        topp = topp_class.from_models(
            game, paths, games_per_series=topp_config["games_per_series"], selection=topp_config["selection"],
            seed=seed, display=display, gif_dir=gif_dir, stream=sys.stdout,
        )
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"TOPP on {game!r}: {len(paths)} models, {topp.games_per_series} games a pair, {topp.selection} selection")
    result = topp.run()
    files = result.save(out_dir)
    print()
    print(result.table())
    print()
    print(result.matrix_text())
    print(f"\nwrote {files['json']} and {files['png']}" + (f"; game GIFs in {gif_dir}" if gif_dir else ""))
    return 0


def command_compare(args: argparse.Namespace) -> int:
    from mctsfw.match import compare, compare_report

    if args.games < 1:
        print("error: --games must be at least 1", file=sys.stderr)
        return 2
    as_play = argparse.Namespace(
        game=args.game, size=args.size, p1=args.a, p2=args.b, search_games=args.search_games, time_limit=None,
        games=None, seed=args.seed, show=False, delay=None, model_search_games=None, temperature=args.temperature,
        starting_player=None,
    )
    game_name = args.game or load_config(DEFAULT_CONFIG, args.config, args.overrides)["game"]
    config = load_config(DEFAULT_CONFIG, args.config, args.overrides + play_overrides(as_play, game_name))
    game = mctsfw.make_game(config["game"], **plugin_params(config, "games", config["game"]))
    seed = None if config["mcts"]["seed"] == -1 else config["mcts"]["seed"]
    actors = [make_player(spec, game, config, None if seed is None else seed + i) for i, spec in enumerate((args.a, args.b))]
    if actors[0].label == actors[1].label:
        actors[0].label, actors[1].label = f"A:{actors[0].label}", f"B:{actors[1].label}"
    display = mctsfw.default_registries().displays.get(config["display"])() if args.display else None
    result = compare(game, actors[0], actors[1], args.games, args.starting_player, display)
    print(compare_report(result))
    if args.json:
        from mctsfw.checkpoints import atomic_path

        with atomic_path(args.json) as tmp:
            Path(tmp).write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json}")
    return 0


def command_plugins(args: argparse.Namespace) -> int:
    load_config(DEFAULT_CONFIG, args.config, args.overrides)  # a broken config fails here too
    registries = mctsfw.default_registries()
    for title, registry in [
        ("games", registries.games),
        ("nets", registries.nets),
        ("tree policies", registries.tree_policies),
        ("evaluators", registries.evaluators),
        ("displays", registries.displays),
    ]:
        print(f"{title}:")
        if not registry.names():
            print("  (none)")
        for name in registry.names():
            description = getattr(registry.get(name), "description", "") or ""
            print(f"  {name:<14} from {registry.provider(name):<22} {description}")
    return 0


COMMANDS = {"play": command_play, "train": command_train, "selfplay": command_selfplay, "topp": command_topp, "compare": command_compare, "plugins": command_plugins}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (ConfigError, mctsfw.ModelFileError, RunDirError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except EOFError:
        print("\nno more input: game abandoned", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
