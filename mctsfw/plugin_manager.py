"""The plugin manager factory and the registries built from its hooks.

Third-party plugins come from the ``mctsfw`` entry points, loaded one at a time: one
that fails to import is left out with a ``PluginImportWarning`` naming it, and the
rest work. Registration refuses what cannot work, with one line naming the plugin: two
classes of one kind with one name (``DuplicatePluginError``), a class without a name,
or a game class missing a method of the game protocol (``InvalidPluginError``).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

import pluggy

from hexzero.mctsfw import hookspecs
from hexzero.mctsfw.game import Game

#: the entry-point group of third-party plugins
ENTRY_POINT_GROUP = "mctsfw"
#: what every game must implement: the abstract methods of ``mctsfw.Game``
GAME_METHODS = ("initial_state", "current_player", "legal_actions", "next_state", "is_final", "winner", "encode",
                "render")

#: (hook name, registry kind) for every registration hook
KINDS = {
    "game": "mctsfw_register_games",
    "net": "mctsfw_register_nets",
    "tree_policy": "mctsfw_register_tree_policies",
    "evaluator": "mctsfw_register_evaluators",
    "display": "mctsfw_register_displays",
    "actor": "mctsfw_register_actors",
}


class UnknownPluginError(KeyError):
    """A name that no registered plugin provides; the message lists the available names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class PluginError(ValueError):
    """A plugin that cannot be registered; the message is one line naming it."""


class DuplicatePluginError(PluginError):
    """Two plugins registered the same name for the same kind, or two plugins share a name."""


class InvalidPluginError(PluginError):
    """A registered class that cannot work: no name, or a game missing a required method."""


class PluginImportWarning(UserWarning):
    """An installed plugin failed to import and was left out; the others work."""


def unknown_name_message(kind: str, name: Any, available: Iterable[str]) -> str:
    available = sorted(available)
    message = f"unknown {kind.replace('_', ' ')} {name!r}; available: {', '.join(available) or 'none'}"
    close = difflib.get_close_matches(str(name), available, n=1)
    if close:
        message += f'. Did you mean "{close[0]}"?'
    return message


def make_plugin_manager(load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A new plugin manager: the built-ins, then the ``mctsfw`` entry points, checked."""
    # Imported here: the built-in plugins import mctsfw, so mctsfw must not import them
    # at module level (imports point inward).
    from hexzero.mctsfw.builtins import BUILTIN_PLUGINS

    pm = pluggy.PluginManager("mctsfw")
    pm.add_hookspecs(hookspecs)
    for module_name in BUILTIN_PLUGINS:
        pm.register(__import__(module_name, fromlist=["_"]), name=module_name)
    if load_entrypoints:
        load_entry_point_plugins(pm)
    pm.check_pending()
    return pm


def load_entry_point_plugins(pm: pluggy.PluginManager, group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Register the plugins of the installed ``group`` entry points, one at a time, and
    return their names. One that fails to import is left out with a
    ``PluginImportWarning`` naming it and the error (pluggy's own loader would stop at
    the first); two different plugins under one entry-point name raise
    ``DuplicatePluginError``. The same plugin found twice (a distribution seen on two
    paths) is registered once."""
    loaded = []
    for entry_point in importlib.metadata.entry_points(group=group):
        where = f"{entry_point.name} = {entry_point.value}"
        if entry_point.dist is not None:
            where += f" (from {entry_point.dist.name} {entry_point.dist.version})"
        try:
            plugin = entry_point.load()
        except Exception as error:  # a broken third-party package must not take the others down
            warnings.warn(
                f"plugin {where} failed to import and is left out: {type(error).__name__}: {error}",
                PluginImportWarning,
                stacklevel=2,
            )
            continue
        registered = pm.get_plugin(entry_point.name)
        if registered is plugin or pm.is_blocked(entry_point.name):
            continue
        if registered is not None:
            raise DuplicatePluginError(
                f"two plugins are named {entry_point.name!r}: {registered!r} and {where}; uninstall one of them"
            )
        pm.register(plugin, name=entry_point.name)
        loaded.append(entry_point.name)
    return loaded


class Registry:
    """Name -> class for one kind of plugin, remembering which plugin provided each."""

    def __init__(self, kind: str):
        self.kind = kind
        self._classes: dict[str, type] = {}
        self._providers: dict[str, str] = {}

    def add(self, cls: type, provider: str) -> None:
        """Register ``cls`` under its ``name``; refuse it, with the reason, if it cannot work."""
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise InvalidPluginError(f"{provider}: {self.kind} class {_class_name(cls)} has no 'name' (a non-empty string)")
        if self.kind == "game":
            problem = game_class_problem(cls)
            if problem:
                raise InvalidPluginError(f"{provider}: game class {_class_name(cls)} ({name!r}) {problem}")
        if name in self._classes:
            raise DuplicatePluginError(
                f"{self.kind} {name!r} is registered twice: by {self._providers[name]} and by {provider}"
            )
        self._classes[name] = cls
        self._providers[name] = provider

    def get(self, name: str) -> type:
        try:
            return self._classes[name]
        except KeyError:
            raise UnknownPluginError(unknown_name_message(self.kind, name, self._classes)) from None

    def provider(self, name: str) -> str:
        return self._providers[name]

    def names(self) -> list[str]:
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def __iter__(self):
        return iter(self.names())


def game_class_problem(cls: Any) -> str | None:
    """Why ``cls`` cannot be a game (None if it can): not a class, a method of the game
    protocol missing, or no ``num_actions``.

    ``num_actions`` is either a class attribute (a fixed board) or set by the class's own
    ``__init__`` from its parameters (Hex's n*n)."""
    if not isinstance(cls, type):
        return "is not a class"
    missing = [m for m in GAME_METHODS if not callable(getattr(cls, m, None)) or getattr(cls, m) is getattr(Game, m)]
    if missing:
        return f"does not implement {', '.join(missing)} (required of every game)"
    num_actions = getattr(cls, "num_actions", None)
    declared = isinstance(num_actions, int) and not isinstance(num_actions, bool) and num_actions > 0
    if not declared and cls.__init__ in (Game.__init__, object.__init__):
        return "sets no num_actions (a class attribute, or set in __init__ from the game's parameters)"
    return None


def _class_name(cls: Any) -> str:
    return getattr(cls, "__qualname__", None) or repr(cls)


@dataclass(frozen=True)
class Registries:
    games: Registry
    nets: Registry
    tree_policies: Registry
    evaluators: Registry
    displays: Registry
    #: actor kinds named by a player spec's prefix (``gtp:COMMAND``)
    actors: Registry
    #: the config sections declared through ``mctsfw_config_sections``, in registration order
    sections: tuple = ()
    #: the plugin manager's hook caller, for the hooks called while the program runs
    #: (``hook.mctsfw_board_svg(...)``); None for registries built by hand
    hook: Any = None

    def of(self, kind: str) -> Registry:
        return {
            "game": self.games,
            "net": self.nets,
            "tree_policy": self.tree_policies,
            "evaluator": self.evaluators,
            "display": self.displays,
            "actor": self.actors,
        }[kind]


def build_registries(pm: pluggy.PluginManager) -> Registries:
    """One registry per kind from the registration hooks. A third-party hook that raises
    (typically an import inside it failing) leaves that plugin's classes of that kind out,
    with a ``PluginImportWarning``; a built-in one that raises is a bug and propagates."""
    from hexzero.mctsfw.builtins import BUILTIN_PLUGINS

    registries = {kind: Registry(kind) for kind in KINDS}
    for kind, hook_name in KINDS.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            provider = pm.get_name(impl.plugin) or repr(impl.plugin)
            try:
                classes = impl.function() or []
            except Exception as error:
                if provider in BUILTIN_PLUGINS:
                    raise
                warnings.warn(
                    f"plugin {provider} failed in {hook_name} and its {kind.replace('_', ' ')}s are left out: "
                    f"{type(error).__name__}: {error}",
                    PluginImportWarning,
                    stacklevel=2,
                )
                continue
            for cls in classes:
                registries[kind].add(cls, provider)
    sections: dict[str, Any] = {}
    for impl in pm.hook.mctsfw_config_sections.get_hookimpls():
        provider = pm.get_name(impl.plugin) or repr(impl.plugin)
        for section in impl.function() or []:
            if section.name in sections:
                raise DuplicatePluginError(
                    f"config section [{section.name}] is declared twice: by {sections[section.name][0]} and by {provider}"
                )
            sections[section.name] = (provider, section)
    return Registries(
        sections=tuple(section for _, section in sections.values()),
        hook=pm.hook,
        games=registries["game"],
        nets=registries["net"],
        tree_policies=registries["tree_policy"],
        evaluators=registries["evaluator"],
        displays=registries["display"],
        actors=registries["actor"],
    )


@lru_cache(maxsize=1)
def default_registries() -> Registries:
    """The registries of the built-ins plus installed entry-point plugins (built once)."""
    return build_registries(make_plugin_manager())
