"""Load, merge, override and validate the TOML configuration.

Every key is declared once (``mctsfw.schema``): the top-level plugin keys and ``[mcts]``
and ``[play]`` here, the other sections beside the code that reads them (collected
through the ``mctsfw_config_sections`` hook), plugin parameters in the plugin classes
(``[games.<name>]``, ``[nets.<name>]``, ``[tree_policies.<name>]``).

``load_config`` builds a config in this order, each layer over the one before:

1. the declared defaults (an installed package needs no file), with those the game
   declares for the tree policies and the nets (``Game.tree_policy_defaults``, e.g. Hex's
   UCT c; ``Game.net_defaults``) in place of the plugins' own;
2. ``defaults``: a file such as ``hexzero.toml`` (the command line reads the one in the
   current directory, if there is one) or a run's ``config.toml``;
3. ``network``: the settings a saved network carries (its game, the search it plays
   best with: ``mctsfw.checkpoints.settings_layer``), when a command is given one;
4. each user file (``--config``), in order;
5. the ``key.path=value`` overrides (``--set``);

then validates it: every problem is collected, each with its key path, before
``ConfigError`` is raised.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import tomllib
from pathlib import Path
from typing import Any, Iterable, Sequence

from hexzero.mctsfw.evaluators import PLAYOUTS
from hexzero.mctsfw.plugin_manager import Registries, default_registries, unknown_name_message
from hexzero.mctsfw.sampling import temperature_problem
from hexzero.mctsfw.schema import Parameters, Section, Setting


class ConfigError(ValueError):
    """A configuration with problems; ``problems`` lists every one with its key path."""

    def __init__(self, problems: list[str], source: str = "config"):
        self.problems = problems
        self.source = source
        if len(problems) == 1:
            message = problems[0] if source == "config" else f"{source}: {problems[0]}"
        else:
            message = f"{source}: {len(problems)} problems\n" + "\n".join(f"  - {p}" for p in problems)
        super().__init__(message)


# ---- the core's declarations ------------------------------------------------------------------
def _actor_spec_problem(value: Any) -> str | None:
    from hexzero.mctsfw.actors import actor_spec_problem

    return actor_spec_problem(value)


#: the top-level keys: which plugins a command uses
TOP_LEVEL = Section("", "the plugins a command uses", [
    Setting("game", "hex", "the game plugin to play", plugin="game"),
    Setting("tree_policy", "uct", "the MCTS tree policy plugin", plugin="tree_policy"),
    Setting("display", "terminal", "the display plugin that shows actual games", plugin="display", resumable=True),
    Setting("net", "anet", "the network plugin that training builds", plugin="net"),
])


def _budget_problems(config: dict, registries: Registries) -> list[str]:
    mcts = config["mcts"]
    if mcts["search_games"] == 0 and mcts["time_limit"] == 0:
        return ["mcts: give search_games > 0 or time_limit > 0 (both are 0)"]
    return []


#: the search of MCTS players (``cli.py play`` and ``compare``; ``make_actor("mcts", ...)``)
MCTS_SECTION = Section("mcts", "the search of MCTS players (play, compare)", [
    Setting("search_games", 1000, "search games (tree descents + rollouts) per actual move; 0 = use time_limit",
            low=0, resumable=True),
    Setting("time_limit", 0.0, "seconds per actual move; 0 = no time limit (search_games alone)", low=0, resumable=True),
    Setting("seed", -1, "random seed of agents; -1 = a new seed every run", low=-1, resumable=True),
    Setting("playouts", "random", '"random": uniformly random rollouts; "tactical": each rollout move takes a win at '
            "once or stops the opponent's, where the game declares its threats (slower, closer to real play); also "
            "the rollouts a saved policy-and-value model's search mixes in (value_weight < 1)",
            choices=PLAYOUTS, resumable=True),
    Setting("engine", "auto", 'where a player\'s search runs: "arrays", the compiled array tree (the game\'s kernels; '
            'UCT, PUCT or Gumbel with random playouts, a value head or both), "objects", the Python tree (every game, tree '
            'policy and evaluator); "auto": arrays where the search can run there, else objects',
            choices=("auto", "arrays", "objects"), resumable=True),
], checks=[_budget_problems])

#: ``cli.py play``: who plays, how many games, how saved models and searchers pick moves
def _model_tree_policy_problems(config: dict, registries: Registries) -> list[str]:
    name = config["play"]["model_tree_policy"]
    if name in registries.tree_policies and not registries.tree_policies.get(name).uses_priors:
        return [f"play.model_tree_policy = {name!r}: a policy-and-value model searches with its priors; the {name} "
                "tree policy reads none (puct or gumbel do)"]
    return []


PLAY_SECTION = Section("play", "cli.py play", [
    Setting("player1", "human", "player 1: human, random, mcts, the path of a saved model (.keras), gtp:COMMAND (an "
            "outside GTP engine) or another NAME:... kind (cli.py plugins lists them)",
            check=_actor_spec_problem, resumable=True),
    Setting("player2", "mcts", "player 2: human, random, mcts, the path of a saved model (.keras), gtp:COMMAND (an "
            "outside GTP engine) or another NAME:... kind (cli.py plugins lists them)",
            check=_actor_spec_problem, resumable=True),
    Setting("starting_player", 1, 'who opens: 1, 2, or "alternate" (alternates over a series of games)',
            choices=(1, 2, "alternate"), resumable=True),
    Setting("games", 1, "games to play in a row", low=1, resumable=True),
    Setting("model_search_games", 0,
            "a saved model as player: 0 = the raw network; N = MCTS with N search games guided by it",
            low=0, resumable=True),
    Setting("model_selection", "greedy",
            'the raw network\'s move: its most probable ("greedy") or drawn from it ("sample")',
            choices=("greedy", "sample"), resumable=True),
    Setting("temperature", 0.0, "searching players: 0 = the most visited move; T > 0 = drawn ~ visits^(1/T)",
            kind=float, check=temperature_problem, resumable=True),
    Setting("model_tree_policy", "puct", 'a saved policy-and-value model that searches (model_search_games > 0): '
            '"puct" or "gumbel" (Gumbel AlphaZero\'s sequential halving, sound from 8 search games), any tree policy '
            "that reads priors", plugin="tree_policy", resumable=True),
], checks=[_model_tree_policy_problems])

#: plugin tables: section name -> registry kind; ``[games.hex]`` holds the hex plugin's parameters
PLUGIN_TABLES = {"games": "game", "tree_policies": "tree_policy", "nets": "net"}


def config_sections(registries: Registries | None = None) -> list[Section]:
    """Every declared section: the top-level keys, ``[mcts]``, ``[play]``, then the plugins'."""
    registries = registries or default_registries()
    return [TOP_LEVEL, MCTS_SECTION, PLAY_SECTION, *registries.sections]


def plugin_parameters(cls: type) -> Parameters:
    """The declared parameters of a plugin class (none declared: no parameters)."""
    return getattr(cls, "parameters", None) or Parameters()


def declared_defaults(registries: Registries | None = None) -> dict:
    """The configuration made of the declared defaults alone (what an installed package runs)."""
    registries = registries or default_registries()
    sections = config_sections(registries)
    config: dict[str, Any] = dict(TOP_LEVEL.defaults())
    for table, kind in PLUGIN_TABLES.items():
        config[table] = {}
        for name in registries.of(kind).names():
            defaults = plugin_parameters(registries.of(kind).get(name)).defaults()
            if defaults:
                config[table][name] = defaults
    for section in sections[1:]:
        config[section.name] = section.defaults()
    return config


def setting_at(path: str, registries: Registries | None = None) -> Setting | None:
    """The declaration of the key ``path`` ("train.episodes", "games.hex.size"), None if undeclared."""
    registries = registries or default_registries()
    parts = path.split(".")
    if parts[0] in PLUGIN_TABLES and len(parts) == 3:
        registry = registries.of(PLUGIN_TABLES[parts[0]])
        return plugin_parameters(registry.get(parts[1])).get(parts[2]) if parts[1] in registry else None
    section_name, key = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0]) if len(parts) == 1 else (None, None)
    for section in config_sections(registries):
        if section.name == section_name:
            return section.settings.get(key)
    return None


def resumable_keys(registries: Registries | None = None) -> list[str]:
    """The keys a resumed run may change (declared ``resumable``)."""
    return [
        section.path(s.name) for section in config_sections(registries) for s in section.settings if s.resumable
    ]


# ---- loading ------------------------------------------------------------------------------
def read_toml(path: str | Path) -> dict:
    """A TOML file as a dict; ConfigError naming the file for anything that is not one."""
    from hexzero.mctsfw.files import read_text

    path = Path(path)
    try:
        return tomllib.loads(read_text(path, "config"))
    except FileNotFoundError:
        raise ConfigError(["file not found"], str(path)) from None
    except IsADirectoryError:
        raise ConfigError(["a directory, not a TOML file"], str(path)) from None
    except OSError as error:  # not a regular file, too large, not readable
        raise ConfigError([f"cannot be read: {error.strerror or error}"], str(path)) from None
    except UnicodeDecodeError as error:
        raise ConfigError([f"not a TOML file: not UTF-8 text (byte {error.start})"], str(path)) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError([f"not valid TOML: {error}"], str(path)) from None


def merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"mcts.search_games=200"`` -> (["mcts", "search_games"], 200); a bare word stays a string."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or any(not part.strip() for part in key.split(".")):
        raise ConfigError([f"--set {item!r}: expected key.path=value"])
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return [part.strip() for part in key.split(".")], value


def override(path: str, value: Any) -> str:
    """The ``--set`` text that sets ``path`` to ``value`` (what a command-line flag stands for)."""
    if isinstance(value, str):
        return f"{path}={json.dumps(value)}"
    if isinstance(value, bool):
        return f"{path}={str(value).lower()}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path}={'nan' if math.isnan(value) else ('inf' if value > 0 else '-inf')}"
    return f"{path}={value!r}"


def apply_overrides(config: dict, overrides: Iterable[str]) -> dict:
    config = copy.deepcopy(config)
    for item in overrides:
        path, value = parse_override(item)
        node = config
        for depth, part in enumerate(path[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError([f"--set {item!r}: {'.'.join(path[:depth + 1])} is a value, not a table"])
        if isinstance(node.get(path[-1]), dict) and not isinstance(value, dict):
            raise ConfigError([f"--set {item!r}: {'.'.join(path)} is a table; set one of its keys "
                               f"({'.'.join(path)}.KEY=VALUE)"])
        node[path[-1]] = value
    return config


def load_config(
    defaults: str | Path | None = None,
    user_file: str | Path | Sequence[str | Path] | None = None,
    overrides: Iterable[str] = (),
    registries: Registries | None = None,
    network: dict | None = None,
) -> dict:
    """The validated configuration: declared defaults, then the ``defaults`` file, then a
    saved network's settings (``network``, a config layer), then each user file in order,
    then the overrides."""
    registries = registries or default_registries()
    given: dict = read_toml(defaults) if defaults is not None else {}  # what the files and the overrides set
    given = merge(given, network or {})
    files = [user_file] if isinstance(user_file, (str, Path)) else list(user_file or [])
    for path in files:
        given = merge(given, read_toml(path))
    given = apply_overrides(given, overrides)
    config = merge(merge(declared_defaults(registries), game_declared_defaults(given, registries)), given)
    validate(config, registries)
    return config


def game_declared_defaults(config: dict, registries: Registries) -> dict:
    """The ``[tree_policies]`` and ``[nets]`` values that the game ``config`` names declares
    its own (``Game.tree_policy_defaults``, ``Game.net_defaults``): they stand in for the
    plugins' declared defaults."""
    name = config.get("game", TOP_LEVEL.defaults()["game"])
    cls = registries.games.get(name) if isinstance(name, str) and name in registries.games.names() else None
    tables = {"tree_policies": getattr(cls, "tree_policy_defaults", None), "nets": getattr(cls, "net_defaults", None)}
    return {table: copy.deepcopy(declared) for table, declared in tables.items() if declared}


# ---- validation ----------------------------------------------------------------------------
def flatten_all(config: dict, prefix: str = "") -> dict[str, Any]:
    """Every leaf value by its full key path, plugin tables included."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(flatten_all(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def validate(config: dict, registries: Registries | None = None) -> None:
    """Raise ConfigError listing every problem of ``config``, each with its key path."""
    registries = registries or default_registries()
    sections = {section.name: section for section in config_sections(registries)}
    top = sections[""]
    known_paths = [s.path(k) for s in sections.values() for k in s.settings.names()] + list(PLUGIN_TABLES)
    problems: list[str] = []
    troubled: set[str] = set()  # sections with a problem: their cross-checks are skipped

    def unknown(path: str) -> str:
        close = difflib.get_close_matches(path, known_paths, n=1)
        return f"{path}: unknown key" + (f'. Did you mean "{close[0]}"?' if close else "")

    for key, value in config.items():
        if key in PLUGIN_TABLES:
            problems += plugin_table_problems(key, value, registries)
        elif key in top.settings:
            reason = setting_problem(top.settings[key], value, registries)
            if reason:
                problems.append(f"{key}: {reason}")
                troubled.add("")
        elif key in sections:
            if not isinstance(value, dict):
                problems.append(f"{key}: must be a table ([{key}] with {', '.join(sections[key].settings.names())}), "
                                f"not {value!r}")
                troubled.add(key)
                continue
            for name, item in value.items():
                setting = sections[key].settings.get(name)
                reason = unknown(f"{key}.{name}") if setting is None else setting_problem(setting, item, registries)
                if reason:
                    problems.append(reason if setting is None else f"{key}.{name}: {reason}")
                    troubled.add(key)
        else:
            problems.append(unknown(key))
    for section in sections.values():
        table = config if section.name == "" else config.get(section.name)
        if not isinstance(table, dict):
            if section.name not in config:
                problems.append(f"{section.name}: missing")
                troubled.add(section.name)
            continue
        for name in section.settings.names():
            if name not in table:
                problems.append(f"{section.path(name)}: missing")
                troubled.add(section.name)
    for section in sections.values():
        if section.checks and section.name not in troubled and "" not in troubled:
            for check in section.checks:
                problems += list(check(config, registries))
    if problems:
        raise ConfigError(problems)


def setting_problem(setting: Setting, value: Any, registries: Registries) -> str | None:
    """Why ``value`` does not fit ``setting`` (a plugin name is looked up in its registry)."""
    reason = setting.problem(value)
    if reason or setting.plugin is None:
        return reason
    registry = registries.of(setting.plugin)
    return None if value in registry else unknown_name_message(setting.plugin, value, registry.names())


def plugin_table_problems(section: str, tables: Any, registries: Registries) -> list[str]:
    kind = PLUGIN_TABLES[section]
    registry = registries.of(kind)
    if not isinstance(tables, dict):
        return [f"{section}: must be a table of [{section}.<name>] tables, not {tables!r}"]
    problems = []
    for name, params in tables.items():
        if name not in registry:
            problems.append(f"{section}.{name}: {unknown_name_message(kind, name, registry.names())}")
            continue
        if not isinstance(params, dict):
            problems.append(f"{section}.{name}: must be a table of parameters, not {params!r}")
            continue
        cls = registry.get(name)
        if hasattr(cls, "param_problems"):
            found = cls.param_problems(params)
        else:
            found = plugin_parameters(cls).problems(name, params)
        problems += [f"{section}.{name}.{p}" for p in found]
    return problems


def plugin_params(config: dict, section: str, name: str) -> dict:
    """The parameters of plugin ``name`` from ``[section.name]`` (empty when absent)."""
    return dict(config.get(section, {}).get(name, {}))


def changed_keys(saved: dict, current: dict) -> list[str]:
    """The key paths whose values differ between two configs."""
    old, new = flatten_all(saved), flatten_all(current)
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def fixed_changes(saved: dict, current: dict, registries: Registries | None = None,
                  section: str | None = None) -> list[str]:
    """The changed keys that a resumed run may not change (not declared ``resumable``). The
    run of ``[section]`` reads none of the other run commands' sections (those that declare
    a ``run_dir``): a change there does not count (an imitation run resumes whatever
    ``[distill]`` says now)."""
    registries = registries or default_registries()
    others = tuple(f"{s.name}." for s in config_sections(registries)
                   if section is not None and s.name != section and "run_dir" in s.settings)
    return [k for k in changed_keys(saved, current)
            if not k.startswith(others) and not getattr(setting_at(k, registries), "resumable", False)]
