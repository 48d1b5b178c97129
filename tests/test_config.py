"""The config schema: every key declared once, every problem reported with its key path."""

import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.config import (
    ConfigError, apply_overrides, config_sections, declared_defaults, fixed_changes, flatten_all, load_config,
    parse_override, resumable_keys, setting_at, validate,
)
from hexzero.mctsfw.plugin_manager import build_registries, make_plugin_manager
from hexzero.mctsfw.schema import Parameters, Section, Setting

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = ROOT / "hexzero.toml"


def problems_of(*overrides, user_text=None, tmp_path=None):
    user_file = None
    if user_text is not None:
        user_file = tmp_path / "mine.toml"
        user_file.write_text(user_text)
    with pytest.raises(ConfigError) as error:
        load_config(DEFAULTS, user_file, overrides)
    return error.value.problems


def builtin_registries():
    return build_registries(make_plugin_manager(load_entrypoints=False))


# ---- one declaration ---------------------------------------------------------------------------
def game_declared_keys(registries) -> set[str]:
    """The tree-policy and net keys some game declares its own default for."""
    games = [registries.games.get(name) for name in registries.games.names()]
    return {f"{table}.{plugin}.{key}" for game in games
            for table, declared in (("tree_policies", game.tree_policy_defaults), ("nets", game.net_defaults))
            for plugin, params in declared.items() for key in params}


def test_hexzero_toml_is_the_declared_defaults_commented():
    """The shipped file holds every declared key at its declared default, and nothing else;
    a key that a game declares its own default for is there commented out (set, it would
    override the game's)."""
    text = DEFAULTS.read_text()
    shipped = flatten_all(tomllib.loads(text))
    registries = builtin_registries()
    declared = flatten_all(declared_defaults(registries))
    by_games = game_declared_keys(registries)
    assert by_games and not by_games & set(shipped)
    assert all(f"# {key.rsplit('.', 1)[1]} = " in text for key in by_games)
    assert sorted(shipped) == sorted(set(declared) - by_games)
    assert {k: v for k, v in shipped.items() if v != declared[k]} == {}
    assert all(type(shipped[k]) is type(declared[k]) for k in shipped)  # 0.0 stays a float
    assert text.count("#") > len(shipped)  # commented


def test_the_shipped_config_is_valid_and_an_installed_package_needs_no_file():
    config = load_config(DEFAULTS)
    assert config["game"] == "hex" and config["games"]["hex"]["size"] == 5
    assert load_config() == config  # the declared defaults alone give the same


def test_the_anet_convolves_where_the_game_declares_it_and_what_a_user_sets_wins():
    """Hex declares a convolutional ANET (its measured best on 5x5); other games keep the
    MLP; a config file or --set wins; the shipped 5x5 config keeps the MLP it trained."""
    anet = load_config(DEFAULTS)["nets"]["anet"]
    assert anet["conv_layers"] == [16, 16, 16] and anet["hidden_layers"] == [] and load_config()["nets"]["anet"] == anet
    for game in ("connect4", "gomoku", "nim", "go"):
        other = load_config(DEFAULTS, overrides=[f"game={game}"])["nets"]["anet"]
        assert other["conv_layers"] == [] and other["hidden_layers"] == [128, 128]
    mine = load_config(DEFAULTS, overrides=["nets.anet.hidden_layers=[64]"])["nets"]["anet"]
    assert mine["conv_layers"] == [16, 16, 16] and mine["hidden_layers"] == [64]
    shipped = load_config(DEFAULTS, ROOT / "models" / "hex5" / "config.toml")["nets"]["anet"]
    assert shipped["conv_layers"] == [] and shipped["hidden_layers"] == [128, 128]
    from hexzero.nets.anet import ANET

    assert ANET(mctsfw.make_game("hex")).params()["conv_layers"] == []  # a net built in Python: its own


def test_uct_c_is_the_games_where_it_declares_one_and_what_a_user_sets_wins(tmp_path):
    """UCT's c is 1.4 unless the game declares its own (Hex, Go: 0.25, measured); a config
    file, --set or a caller's c wins over the game's; shipped models keep theirs."""
    assert load_config(DEFAULTS)["tree_policies"]["uct"]["c"] == 0.25 == load_config()["tree_policies"]["uct"]["c"]
    assert load_config(DEFAULTS, overrides=["game=go"])["tree_policies"]["uct"]["c"] == 0.25
    for game in ("connect4", "gomoku", "nim"):
        assert load_config(DEFAULTS, overrides=[f"game={game}"])["tree_policies"]["uct"]["c"] == 1.4
    assert mctsfw.make_tree_policy("uct").c == 1.4
    assert mctsfw.make_actor("mcts", mctsfw.make_game("hex"), search_games=10).mcts.tree_policy.c == 0.25
    assert mctsfw.make_actor("mcts", mctsfw.make_game("nim"), search_games=10).mcts.tree_policy.c == 1.4
    assert mctsfw.make_actor("mcts", mctsfw.make_game("hex"), search_games=10, c=0.7).mcts.tree_policy.c == 0.7
    assert load_config(DEFAULTS, overrides=["tree_policies.uct.c=1.4"])["tree_policies"]["uct"]["c"] == 1.4
    mine = tmp_path / "mine.toml"
    mine.write_text("[tree_policies.uct]\nc = 2.0\n")
    assert load_config(DEFAULTS, mine)["tree_policies"]["uct"]["c"] == 2.0
    for model in ("hex5", "hex5-az", "connect4"):
        assert load_config(None, ROOT / "models" / model / "config.toml")["tree_policies"]["uct"]["c"] == 1.0


def test_plugin_constructors_default_to_the_declared_parameters():
    registries = builtin_registries()
    for kind in ("game", "tree_policy", "net"):
        for name in registries.of(kind).names():
            cls = registries.of(kind).get(name)
            signature = inspect.signature(cls.__init__).parameters
            for setting in cls.parameters:
                assert signature[setting.name].default == setting.default, (name, setting.name)
            assert cls.param_problems(cls.parameters.defaults()) == []


def test_the_hook_docs_name_the_config_tables():
    docs = (ROOT / "mctsfw" / "hookspecs.py").read_text()
    assert "[games.<name>]" in docs and "[nets.<name>]" in docs and "[tree_policies.<name>]" in docs
    assert "[game.<name>]" not in docs and "[net.<name>]" not in docs


def test_settings_objects_come_from_the_declaration():
    from hexzero.mctsfw.selfplay import SelfPlaySettings
    from hexzero.mctsfw.training import TrainSettings

    config = load_config(None, None, ["train.episodes=7", "selfplay.workers=3"])
    train = TrainSettings.from_config(config)
    assert train.episodes == 7 and train.minibatch == 512 and train.checkpoint_episodes() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert SelfPlaySettings.from_config(config).workers == 3
    with pytest.raises(TypeError, match="missing"):
        TrainSettings(episodes=3)


def test_resumable_keys_are_declared():
    keys = resumable_keys()
    assert {"train.episodes", "train.run_dir", "train.display", "selfplay.generations", "selfplay.workers",
            "mcts.search_games", "topp.seed", "show.delay"} <= set(keys)
    assert "train.minibatch" not in keys and "selfplay.net" not in keys
    assert setting_at("games.hex.size").resumable is False
    saved = load_config()
    current = load_config(None, None, ["train.episodes=9", "train.minibatch=7", "games.hex.size=7"])
    assert fixed_changes(saved, current) == ["games.hex.size", "train.minibatch"]


# ---- load order ----------------------------------------------------------------------------------
def test_layers_merge_in_order(tmp_path):
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    first.write_text('game = "nim"\n[games.nim]\npiles = [1, 2]\n[mcts]\nsearch_games = 10\n')
    second.write_text("[mcts]\nsearch_games = 20\ntime_limit = 0.5\n")
    config = load_config(DEFAULTS, [first, second], ["mcts.time_limit=0.25", "games.nim.misere=true"])
    assert config["game"] == "nim" and config["games"]["nim"] == {"piles": [1, 2], "max_take": 0, "misere": True}
    assert config["mcts"]["search_games"] == 20 and config["mcts"]["time_limit"] == 0.25
    assert config["games"]["hex"]["size"] == 5  # untouched defaults stay


# ---- problems --------------------------------------------------------------------------------------
def test_unknown_plugin_names_list_the_available_ones():
    problems = problems_of('game="hexx"', 'tree_policy="uctt"', 'display="tv"')
    assert 'game: unknown game \'hexx\'; available: connect4, go, gomoku, hex, nim. Did you mean "hex"?' in problems
    assert any(p.startswith("tree_policy: unknown tree policy 'uctt'; available: gumbel, puct, rave, uct") for p in problems)
    assert any(p.startswith("display: unknown display 'tv'") for p in problems)


def test_every_problem_is_reported_at_once():
    problems = problems_of(
        "games.hex.size=2", "mcts.search_games=-1", "mcts.time_limit=-0.5", "show.enabled=maybe",
        "play.starting_player=3", "play.games=0", "play.player2=alphago", "tree_policies.uct.c=-1",
        "games.nim.piles=[]", "games.nim.max_take=-2",
    )
    paths = [p.split(":")[0] for p in problems]
    assert sorted(paths) == sorted([
        "games.hex.size", "games.nim.piles", "games.nim.max_take", "tree_policies.uct.c",
        "mcts.search_games", "mcts.time_limit", "show.enabled", "play.player2", "play.starting_player", "play.games",
    ])
    assert "mcts.search_games: must be a whole number >= 0, not -1" in problems
    assert "play.starting_player: must be one of 1, 2, alternate, not 3" in problems


def test_unknown_keys_and_tables():
    problems = problems_of("mcts.serch_games=5", "games.chess.size=8", "games.hex.colour=1", "tree_policies.puctt.c=1",
                           "colour=1")
    assert 'mcts.serch_games: unknown key. Did you mean "mcts.search_games"?' in problems
    assert any(p.startswith("games.chess: unknown game 'chess'; available: connect4, go, gomoku, hex, nim") for p in problems)
    assert "games.hex.colour: unknown parameter of hex (known: size, swap, pairing, vc, prune)" in problems
    assert any(p.startswith("tree_policies.puctt: unknown tree policy") for p in problems)
    assert any(p.startswith("colour: unknown key") for p in problems)


def test_wrong_types():
    problems = problems_of('games.hex.size="big"', 'mcts.search_games=1.5', "game=3", "show.delay=[1]",
                           "play.starting_player=true", "games.nim.misere=1")
    assert len(problems) == 6


def test_a_table_replaced_by_a_value_or_a_value_used_as_a_table(tmp_path):
    with pytest.raises(ConfigError, match=r"mcts is a table; set one of its keys"):
        apply_overrides(load_config(), ["mcts=3"])
    with pytest.raises(ConfigError, match=r"mcts.search_games is a value, not a table"):
        apply_overrides(load_config(), ["mcts.search_games.x=1"])
    problems = problems_of(user_text="mcts = 3\n", tmp_path=tmp_path)
    assert problems == ["mcts: must be a table ([mcts] with search_games, time_limit, seed, playouts, engine), not 3"]


def test_every_declared_float_must_be_finite():
    """nan and inf are refused wherever a number is declared (mcts.time_limit = nan used to hang)."""
    registries = builtin_registries()
    floats = [section.path(s.name) for section in config_sections(registries) for s in section.settings
              if s.type is float]
    floats += [f"{table}.{name}.{s.name}" for table, kind in (("games", "game"), ("tree_policies", "tree_policy"),
                                                               ("nets", "net"))
               for name in registries.of(kind).names() for s in registries.of(kind).get(name).parameters
               if s.type is float]
    assert {"mcts.time_limit", "show.delay", "play.temperature", "tree_policies.uct.c", "nets.anet.learning_rate"} <= set(floats)
    for path in floats:
        for bad in ("nan", "inf", "-inf"):
            problems = problems_of(f"{path}={bad}")
            assert len(problems) == 1 and problems[0].startswith(f"{path}: "), (path, problems)


def test_temperatures_are_checked_by_the_sampler_rule():
    assert problems_of("play.temperature=-1") == [
        "play.temperature: temperature must be a finite number >= 0 (0 = the most probable move), not -1"
    ]
    assert problems_of("selfplay.temperature_final=-0.5")[0].startswith("selfplay.temperature_final: ")


def test_nim_piles_are_bounded():
    assert problems_of("games.nim.piles=[101]") == [
        "games.nim.piles: must be a list of 1 to 10 whole numbers from 1 to 100, not [101]"]
    assert problems_of(f"games.nim.piles={[1] * 11}")[0].startswith("games.nim.piles:")
    assert problems_of("games.nim.max_take=1000")[0].startswith("games.nim.max_take:")
    with pytest.raises(ValueError, match="piles"):
        mctsfw.make_game("nim", piles=[10**9])
    assert mctsfw.make_game("nim", piles=[100] * 10).num_actions == 1000


class CompleteGame(mctsfw.Game):
    """Every method of the game protocol (registration refuses a game without them)."""

    num_actions = 1

    def initial_state(self, starting_player=1):
        return starting_player

    def current_player(self, state):
        return state

    def legal_actions(self, state):
        return []

    def next_state(self, state, action):
        raise mctsfw.IllegalMoveError("no moves")

    def is_final(self, state):
        return True

    def winner(self, state):
        return None

    def encode(self, state):
        return [state]

    def render(self, state):
        return ""


def test_a_plugin_game_refuses_unknown_parameters():
    class Solitaire(CompleteGame):
        name = "solitaire"

    class Dice(CompleteGame):
        name = "dice"
        parameters = Parameters(Setting("sides", 6, "faces of the die", low=2))

    class ThirdParty:
        @mctsfw.hookimpl
        def mctsfw_register_games(self):
            return [Solitaire, Dice]

    pm = make_plugin_manager(load_entrypoints=False)
    pm.register(ThirdParty(), name="third_party")
    registries = build_registries(pm)
    config = declared_defaults(registries)
    assert config["games"]["dice"] == {"sides": 6} and "solitaire" not in config["games"]
    with pytest.raises(ConfigError) as error:
        validate(apply_overrides(config, ["games.solitaire.foo=1", "games.dice.sides=1", "games.dice.colour=2"]),
                 registries)
    assert error.value.problems == [
        "games.dice.colour: unknown parameter of dice (known: sides)",
        "games.dice.sides: must be a whole number >= 2, not 1",
        "games.solitaire.foo: unknown parameter of solitaire (known: none)",
    ]


def test_plugins_declare_sections_with_checks_and_names_are_unique():
    def even_only(config, registries):
        return [] if config["extra"]["n"] % 2 == 0 else ["extra.n: must be even"]

    class Extra:
        @mctsfw.hookimpl
        def mctsfw_config_sections(self):
            return [Section("extra", "an extra section", [Setting("n", 2, "a number", low=0)], checks=[even_only])]

    pm = make_plugin_manager(load_entrypoints=False)
    pm.register(Extra(), name="extra_plugin")
    registries = build_registries(pm)
    assert load_config(None, None, ["extra.n=4"], registries)["extra"]["n"] == 4
    with pytest.raises(ConfigError, match="extra.n: must be even"):
        load_config(None, None, ["extra.n=3"], registries)
    with pytest.raises(ConfigError, match="extra.n: must be a whole number >= 0"):  # the check waits for the types
        load_config(None, None, ["extra.n=-1"], registries)

    class Clash:
        @mctsfw.hookimpl
        def mctsfw_config_sections(self):
            return [Section("train", "another [train]", [])]

    pm = make_plugin_manager(load_entrypoints=False)
    pm.register(Clash(), name="clash")
    with pytest.raises(mctsfw.DuplicatePluginError, match=r"\[train\] is declared twice"):
        build_registries(pm)


def test_no_budget_at_all():
    problems = problems_of("mcts.search_games=0", "mcts.time_limit=0")
    assert problems == ["mcts: give search_games > 0 or time_limit > 0 (both are 0)"]


def test_missing_keys():
    config = load_config()
    del config["mcts"]["search_games"]
    with pytest.raises(ConfigError) as error:
        validate(config)
    assert error.value.problems == ["mcts.search_games: missing"]


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(DEFAULTS, tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("game = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(DEFAULTS, broken)
    with pytest.raises(ConfigError, match="a directory, not a TOML file"):
        load_config(DEFAULTS, tmp_path)
    latin = tmp_path / "latin.toml"
    latin.write_bytes('game = "h\xe9x"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(DEFAULTS, latin)


def test_override_syntax():
    assert parse_override("a.b=3") == (["a", "b"], 3)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a=hello") == (["a"], "hello")
    assert parse_override("a=nan")[1] != parse_override("a=nan")[1]  # TOML's nan, for validation to refuse
    for bad in ("novalue", "=3", "a..b=1"):
        with pytest.raises(ConfigError, match="key.path=value"):
            parse_override(bad)
    with pytest.raises(ConfigError, match="not a table"):
        apply_overrides({"game": "hex"}, ["game.size=3"])


def test_one_problem_is_one_line():
    with pytest.raises(ConfigError) as error:
        load_config(None, None, ["show.delay=nan"])
    assert str(error.value) == "show.delay: must be a finite number >= 0, not nan"


def test_cli_exits_2_and_lists_every_problem():
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "play", "--game", "hexx", "--set", "mcts.search_games=-3", "--no-display"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "unknown game 'hexx'; available: connect4, go, gomoku, hex, nim" in result.stderr and "mcts.search_games" in result.stderr
    assert "Traceback" not in result.stderr
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "plugins", "--set", "games.hex.size=1"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and "games.hex.size" in result.stderr


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.toml")),
                         ids=lambda path: path.name)
def test_every_ready_configuration_loads_without_a_problem(path):
    from hexzero.mctsfw.config import load_config

    # a layer names no game: it goes over the configuration its name starts with (go13-gnugo over go13)
    base = path.with_name(path.name.split("-")[0] + ".toml")
    layers = [base, path] if "game" not in tomllib.loads(path.read_text()) and base != path else [path]
    config = load_config(path.parent.parent / "hexzero.toml", layers)
    assert config["game"] in ("hex", "go", "gomoku", "connect4", "nim")


def test_the_ranges_hexzero_toml_states_are_the_declared_ones():
    """A comment that gives a key's range ("board side, 5 to 20") says what the code takes."""
    section, checked = "", 0
    for line in DEFAULTS.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
            continue
        found = re.match(r"(\w+) = [^#]*#.*?\b(-?\d+) to (-?\d+)\b", line)
        if not found or line.startswith("piles"):  # piles: two ranges (the count, the stones)
            continue
        key, low, high = found.group(1), int(found.group(2)), int(found.group(3))
        setting = setting_at(f"{section}.{key}" if section else key)
        assert (setting.low, setting.high) == (low, high), f"[{section}] {key}: {line.split('#')[1].strip()}"
        checked += 1
    assert checked >= 5
    # and where the manual states a game's sizes
    for page in sorted((ROOT / "docs").glob("*.md")):
        for name, low, high in re.findall(r"\[games\.(\w+)\]`: `size` (\d+) to (\d+)", page.read_text()):
            setting = setting_at(f"games.{name}.size")
            assert (setting.low, setting.high) == (int(low), int(high)), f"{page.name}: {name} {low} to {high}"
            checked += 1
    assert checked >= 6
