"""Load, override and validate the TOML configuration (``hexzero.toml``).

``load_config`` reads the defaults file, merges a user's file over it, applies
``key.path=value`` overrides, and validates the result against ``RULES`` and the
registries. Validation collects every problem before it raises ``ConfigError``.
"""

from __future__ import annotations

import copy
import difflib
import tomllib
from pathlib import Path
from typing import Any, Callable, Iterable

from mctsfw.plugin_manager import Registries, default_registries, unknown_name_message

Check = Callable[[Any], "str | None"]


class ConfigError(ValueError):
    """A configuration with problems; ``problems`` lists every one with its key path."""

    def __init__(self, problems: list[str], source: str = "config"):
        self.problems = problems
        super().__init__(f"{source}: {len(problems)} problem(s)\n" + "\n".join(f"  - {p}" for p in problems))


# ---- checks: each returns None when the value is fine, else the reason --------------------
def whole(low: int | None = None, high: int | None = None) -> Check:
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be a whole number"
        if low is not None and value < low:
            return f"must be at least {low}"
        if high is not None and value > high:
            return f"must be at most {high}"
        return None

    return check


def number(low: float | None = None, high: float | None = None, low_open: bool = False) -> Check:
    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number"
        if low is not None and (value <= low if low_open else value < low):
            return f"must be {'greater than' if low_open else 'at least'} {low}"
        if high is not None and value > high:
            return f"must be at most {high}"
        return None

    return check


def boolean(value):
    return None if isinstance(value, bool) else "must be true or false"


def one_of(*choices: Any) -> Check:
    def check(value):
        return None if value in choices else f"must be one of {', '.join(map(repr, choices))}"

    return check


def text(value):
    return None if isinstance(value, str) and value else "must be a non-empty string"


def plugin(kind: str) -> Check:
    """A name registered for ``kind``; ``validate`` checks it against the registries."""

    def check(value):
        return None if isinstance(value, str) else "must be a plugin name (a string)"

    check.plugin_kind = kind  # type: ignore[attr-defined]
    return check


def _unknown(kind: str, value: str, names: Iterable[str]) -> str:
    message = unknown_name_message(kind, value, names)
    # "unknown game 'hexx'; available: ..." -> "unknown game; available: ..." (the key path names the value)
    head, _, rest = message.partition("; ")
    return f"{' '.join(head.split(' ')[:-1])}; {rest}"


def actor_spec(value):
    if not isinstance(value, str) or not value:
        return "must be human, random, mcts or the path of a saved model"
    if value in ("human", "random", "mcts") or value.endswith(".keras") or Path(value).exists():
        return None
    return "must be human, random, mcts or the path of a saved model"


#: plugin tables: section name -> registry kind; ``[games.hex]`` holds the hex plugin's parameters
PLUGIN_TABLES = {"games": "game", "tree_policies": "tree_policy", "nets": "net"}

#: every plain key the configuration may hold, with its check
RULES: dict[str, Check] = {
    "game": plugin("game"),
    "tree_policy": plugin("tree_policy"),
    "display": plugin("display"),
    "net": plugin("net"),
    "mcts.search_games": whole(0),
    "mcts.time_limit": number(0),
    "mcts.seed": whole(-1),
    "show.enabled": boolean,
    "show.delay": number(0),
    "play.player1": actor_spec,
    "play.player2": actor_spec,
    "play.starting_player": one_of(1, 2, "alternate"),
    "play.games": whole(1),
    "play.model_search_games": whole(0),
    "play.model_selection": one_of("greedy", "sample"),
    "play.temperature": number(0),
    "train.run_dir": text,
    "train.episodes": whole(1),
    "train.search_games": whole(1),
    "train.checkpoints": whole(2),
    "train.replay_size": whole(1),
    "train.minibatch": whole(1),
    "train.epochs": whole(1),
    "train.epsilon": number(0, 1),
    "train.epsilon_decay": number(0, 1),
    "train.epsilon_min": number(0, 1),
    "train.starting_player": one_of("alternate", "random"),
    "train.move_selection": one_of("sample", "greedy"),
    "train.rollout_selection": one_of("greedy", "sample"),
    "train.augment": boolean,
    "train.display": boolean,
    "train.seed": whole(-1),
    "topp.games_per_series": whole(1),
    "topp.selection": one_of("greedy", "sample"),
    "topp.display": boolean,
    "topp.gif": boolean,
    "topp.seed": whole(-1),
    "selfplay.run_dir": text,
    "selfplay.net": plugin("net"),
    "selfplay.generations": whole(1),
    "selfplay.games_per_generation": whole(1),
    "selfplay.search_games": whole(1),
    "selfplay.batch_size": whole(1),
    "selfplay.temperature": number(0),
    "selfplay.temperature_moves": whole(0),
    "selfplay.temperature_final": number(0),
    "selfplay.value_target": one_of("z", "mean"),
    "selfplay.average_positions": boolean,
    "selfplay.augment": boolean,
    "selfplay.replay_size": whole(1),
    "selfplay.epochs": whole(1),
    "selfplay.minibatch": whole(1),
    "selfplay.gating": boolean,
    "selfplay.gating_games": whole(2),
    "selfplay.gating_threshold": number(0, 1),
    "selfplay.starting_player": one_of("alternate", "random"),
    "selfplay.seed": whole(-1),
    "selfplay.workers": whole(0),
}


# ---- loading ------------------------------------------------------------------------------
def read_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError([f"file not found: {path}"], str(path)) from None
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
    if not sep or not key:
        raise ConfigError([f"--set {item!r}: expected key.path=value"])
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key.split("."), value


def apply_overrides(config: dict, overrides: Iterable[str]) -> dict:
    config = copy.deepcopy(config)
    for item in overrides:
        path, value = parse_override(item)
        node = config
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError([f"--set {item!r}: {'.'.join(path[:-1])} is not a table"])
        node[path[-1]] = value
    return config


def load_config(
    defaults: str | Path,
    user_file: str | Path | None = None,
    overrides: Iterable[str] = (),
    registries: Registries | None = None,
) -> dict:
    """The validated configuration: defaults, then the user's file, then overrides."""
    config = read_toml(defaults)
    if user_file is not None:
        config = merge(config, read_toml(user_file))
    config = apply_overrides(config, overrides)
    validate(config, registries)
    return config


# ---- validation ----------------------------------------------------------------------------
def flatten(config: dict, prefix: str = "") -> dict[str, Any]:
    flat = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path.split(".")[0] not in PLUGIN_TABLES:
            flat.update(flatten(value, path + "."))
        elif isinstance(value, dict) and "." not in path:
            flat[path] = value  # a plugin section: checked table by table below
        else:
            flat[path] = value
    return flat


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
    problems: list[str] = []
    flat = flatten(config)
    for path, value in flat.items():
        if path in PLUGIN_TABLES:
            problems += plugin_table_problems(path, value, registries)
            continue
        check = RULES.get(path)
        if check is None:
            close = difflib.get_close_matches(path, list(RULES) + list(PLUGIN_TABLES), n=1)
            hint = f'. Did you mean "{close[0]}"?' if close else ""
            problems.append(f"{path}: unknown key{hint}")
            continue
        kind = getattr(check, "plugin_kind", None)
        reason = _check_plugin(kind, value, registries) if kind else check(value)
        if reason:
            problems.append(f"{path} = {value!r}: {reason}")
    for path in RULES:
        if path not in flat:
            problems.append(f"{path}: missing")
    mcts = config.get("mcts", {})
    if mcts.get("search_games") == 0 and not mcts.get("time_limit"):
        problems.append("mcts: give search_games > 0 or time_limit > 0 (both are 0)")
    train = config.get("train", {})
    episodes, checkpoints = train.get("episodes"), train.get("checkpoints")
    if isinstance(episodes, int) and isinstance(checkpoints, int) and checkpoints > episodes + 1:
        problems.append(f"train.checkpoints = {checkpoints}: at most episodes + 1 = {episodes + 1}")
    if not problems:  # what the trainers need of the plugins named (net roles), on a sound config
        from mctsfw.selfplay import selfplay_config_problems
        from mctsfw.training import train_config_problems

        problems += train_config_problems(config, registries) + selfplay_config_problems(config, registries)
    if problems:
        raise ConfigError(problems)


def _check_plugin(kind: str, value: Any, registries: Registries) -> str | None:
    if not isinstance(value, str):
        return "must be a plugin name (a string)"
    registry = registries.of(kind)
    return None if value in registry else _unknown(kind, value, registry.names())


def plugin_table_problems(section: str, tables: Any, registries: Registries) -> list[str]:
    kind = PLUGIN_TABLES[section]
    registry = registries.of(kind)
    if not isinstance(tables, dict):
        return [f"{section}: must be a table of [{section}.<name>] tables"]
    problems = []
    for name, params in tables.items():
        if name not in registry:
            problems.append(f"{section}.{name}: {_unknown(kind, name, registry.names())}")
            continue
        if not isinstance(params, dict):
            problems.append(f"{section}.{name}: must be a table of parameters")
            continue
        problems += [f"{section}.{name}.{p}" for p in registry.get(name).param_problems(params)]
    return problems


def plugin_params(config: dict, section: str, name: str) -> dict:
    """The parameters of plugin ``name`` from ``[section.name]`` (empty when absent)."""
    return dict(config.get(section, {}).get(name, {}))


def section_settings(cls: type, config: dict, section: str):
    """A dataclass ``cls`` filled from the keys of ``[section]`` that it names."""
    return cls(**{name: config[section][name] for name in cls.__dataclass_fields__})
