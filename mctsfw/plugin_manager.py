"""The plugin manager factory and the registries built from its hooks."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

import pluggy

from mctsfw import hookspecs

#: (hook name, registry kind) for every registration hook
KINDS = {
    "game": "mctsfw_register_games",
    "net": "mctsfw_register_nets",
    "tree_policy": "mctsfw_register_tree_policies",
    "evaluator": "mctsfw_register_evaluators",
    "display": "mctsfw_register_displays",
}


class UnknownPluginError(KeyError):
    """A name that no registered plugin provides; the message lists the available names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class DuplicatePluginError(ValueError):
    """Two plugins registered the same name for the same kind."""


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
    from mctsfw.builtins import BUILTIN_PLUGINS

    pm = pluggy.PluginManager("mctsfw")
    pm.add_hookspecs(hookspecs)
    for module_name in BUILTIN_PLUGINS:
        pm.register(__import__(module_name, fromlist=["_"]), name=module_name)
    if load_entrypoints:
        pm.load_setuptools_entrypoints("mctsfw")
    pm.check_pending()
    return pm


class Registry:
    """Name -> class for one kind of plugin, remembering which plugin provided each."""

    def __init__(self, kind: str):
        self.kind = kind
        self._classes: dict[str, type] = {}
        self._providers: dict[str, str] = {}

    def add(self, cls: type, provider: str) -> None:
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise DuplicatePluginError(f"{provider}: {self.kind} class {cls!r} has no 'name'")
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


@dataclass(frozen=True)
class Registries:
    games: Registry
    nets: Registry
    tree_policies: Registry
    evaluators: Registry
    displays: Registry
    #: the config sections declared through ``mctsfw_config_sections``, in registration order
    sections: tuple = ()

    def of(self, kind: str) -> Registry:
        return {
            "game": self.games,
            "net": self.nets,
            "tree_policy": self.tree_policies,
            "evaluator": self.evaluators,
            "display": self.displays,
        }[kind]


def build_registries(pm: pluggy.PluginManager) -> Registries:
    registries = {kind: Registry(kind) for kind in KINDS}
    for kind, hook_name in KINDS.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            provider = pm.get_name(impl.plugin) or repr(impl.plugin)
            for cls in impl.function() or []:
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
        games=registries["game"],
        nets=registries["net"],
        tree_policies=registries["tree_policy"],
        evaluators=registries["evaluator"],
        displays=registries["display"],
    )


@lru_cache(maxsize=1)
def default_registries() -> Registries:
    """The registries of the built-ins plus installed entry-point plugins (built once)."""
    return build_registries(make_plugin_manager())
