"""Declared settings: each configuration key and each plugin parameter is declared once.

A ``Setting`` says a key's name, default, help text, the values it accepts and whether a
resumed run may change it. The code that reads a setting declares it beside itself, as
pytest plugins declare their options: ``[train]`` in ``mctsfw/training.py``, ``[topp]`` in
the TOPP plugin, a game's parameters in its class (``parameters = Parameters(...)``).
Validation, the defaults, the settings objects (``settings.episodes``), ``--help`` and the
check of ``hexzero.toml`` all follow from these declarations.

    SIZE = Setting("size", 5, "board side", low=3, high=19)
    SIZE.problem(2)     -> "must be a whole number from 3 to 19, not 2"
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Iterator, Sequence

#: a check of one value beyond its type and bounds: None when fine, else the reason
ValueCheck = Callable[[Any], "str | None"]
#: a check of a whole validated config (registries given): the problems, each with its key path
ConfigCheck = Callable[[dict, Any], Iterable[str]]


@dataclass(frozen=True)
class Setting:
    """One declared key: its default (which also gives its type), help, bounds or choices.

    ``low``/``high`` bound numbers (``above=True``: strictly above ``low``); every float
    must be finite. ``choices`` lists the accepted values (``ignore_case`` for names).
    ``items`` declares the elements of a list, ``min_items``/``max_items`` its length.
    ``plugin`` names a registry kind ("game", "net", ...): the value is checked against
    it. ``check`` adds a rule of its own. ``resumable``: a resumed run may change it.
    A default of None marks a parameter that only the Python API passes (a seed).
    """

    name: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    above: bool = False
    choices: tuple = ()
    ignore_case: bool = False
    items: "Setting | None" = None
    min_items: int = 0
    max_items: int | None = None
    plugin: str | None = None
    check: ValueCheck | None = None
    resumable: bool = False
    kind: type | None = None  # the value's type when the default does not show it (None)
    hint: str = ""  # a few words in the message after the rule: "(residual blocks)"
    empty: bool = False  # a string setting that may be "" (which means something: "a local Ray")

    @property
    def type(self) -> type:
        if self.kind is not None:
            return self.kind
        return list if isinstance(self.default, (list, tuple)) else type(self.default)

    # ---- the rule ----------------------------------------------------------------------------
    def rule(self, finite: bool = False) -> str:
        """What the setting accepts, in words: "a whole number >= 1", "true or false"."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        kind = self.type
        if kind is bool:
            return "true or false"
        if kind is str:
            if self.plugin:
                return f"the name of a {self.plugin.replace('_', ' ')} plugin"
            return "a string" if self.empty else "a non-empty string"
        if kind is list:
            element = self.items.rule().removeprefix("a ") if self.items else "values"
            element = element.replace("number", "numbers", 1)
            if self.max_items is not None:
                return f"a list of {self.min_items} to {self.max_items} {element}"
            if self.min_items:
                return f"a non-empty list of {element}" if self.min_items == 1 else f"a list of at least {self.min_items} {element}"
            return f"a list of {element}"
        base = "a whole number" if kind is int else ("a finite number" if finite else "a number")
        if self.low is not None and self.high is not None:
            return f"{base} from {_num(self.low)} to {_num(self.high)}"
        if self.low is not None:
            return f"{base} {'>' if self.above else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{base} <= {_num(self.high)}"
        return base

    def problem(self, value: Any) -> str | None:
        """None when ``value`` is acceptable, else the reason: "must be ..., not VALUE"."""
        if value is None and self.default is None:
            return None
        if not self._accepts(value):
            finite = isinstance(value, float) and not math.isfinite(value)
            hint = f" ({self.hint})" if self.hint else ""
            return f"must be {self.rule(finite)}{hint}, not {value!r}"
        return self.check(value) if self.check else None

    def _accepts(self, value: Any) -> bool:
        if self.choices:
            if self.ignore_case and isinstance(value, str):
                return value.lower() in self.choices
            # True == 1: a bool is never one of numeric choices
            return any(value == c and type(value) is type(c) for c in self.choices)
        kind = self.type
        if kind is bool:
            return isinstance(value, bool)
        if kind is str:
            return isinstance(value, str) and (bool(value) or self.empty)
        if kind is list:
            if not isinstance(value, (list, tuple)) or len(value) < self.min_items:
                return False
            if self.max_items is not None and len(value) > self.max_items:
                return False
            return self.items is None or all(self.items._accepts(v) for v in value)
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
            return kind is int and _is_numpy_int(value)
        if kind is float and not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return self.high is None or value <= self.high

    def describe(self) -> str:
        """The help line: the help text, the rule and the default."""
        default = "" if self.default is None else f"; default {format_value(self.default)}"
        return f"{self.help} ({self.rule()}{default})"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and not isinstance(x, float) else repr(x)


def _is_numpy_int(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.integer)


def format_value(value: Any) -> str:
    """A value as TOML writes it: true, "text", [1, 2]."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return repr(value)


class Parameters:
    """The declared parameters of a plugin class (a game, a net, a tree policy), in order.

    ``cls.parameters = Parameters(Setting("size", 5, "board side", low=3, high=19))``; the
    class's ``param_problems`` and defaults follow from it.
    """

    def __init__(self, *settings: Setting):
        self._settings = {s.name: s for s in settings}
        if len(self._settings) != len(settings):
            raise ValueError("a parameter is declared twice")

    def __iter__(self) -> Iterator[Setting]:
        return iter(self._settings.values())

    def __len__(self) -> int:
        return len(self._settings)

    def __contains__(self, name: object) -> bool:
        return name in self._settings

    def __getitem__(self, name: str) -> Setting:
        return self._settings[name]

    def get(self, name: str) -> Setting | None:
        return self._settings.get(name)

    def names(self) -> list[str]:
        return list(self._settings)

    def default(self, name: str) -> Any:
        return copy.deepcopy(self._settings[name].default)

    def defaults(self) -> dict[str, Any]:
        """The defaults a config table holds (parameters defaulting to None are API-only)."""
        return {s.name: copy.deepcopy(s.default) for s in self if s.default is not None}

    def problems(self, owner: str, params: dict[str, Any]) -> list[str]:
        """Every problem of ``params``: unknown names first, then the declared ones in order,
        each as "name: reason"."""
        known = ", ".join(self._settings) or "none"
        problems = [f"{key}: unknown parameter of {owner} (known: {known})" for key in sorted(set(params) - set(self._settings))]
        for setting in self:
            if setting.name in params:
                reason = setting.problem(params[setting.name])
                if reason:
                    problems.append(f"{setting.name}: {reason}")
        return problems

    def with_defaults(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` completed with the declared defaults (None ones included)."""
        return {**{s.name: copy.deepcopy(s.default) for s in self}, **params}


@dataclass(frozen=True)
class Section:
    """A ``[name]`` table of the config: its declared settings, and checks across them.

    ``checks`` are functions ``(config, registries) -> problems`` run once every key of
    the section and the top-level keys passed their own checks (a role check of the net a
    section names, say). The top-level keys are the section named "".
    """

    name: str
    help: str
    settings: Parameters
    checks: tuple[ConfigCheck, ...] = field(default=())

    def __init__(self, name: str, help: str, settings: Sequence[Setting], checks: Sequence[ConfigCheck] = ()):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "help", help)
        object.__setattr__(self, "settings", settings if isinstance(settings, Parameters) else Parameters(*settings))
        object.__setattr__(self, "checks", tuple(checks))

    def path(self, key: str) -> str:
        return f"{self.name}.{key}" if self.name else key

    def defaults(self) -> dict[str, Any]:
        return self.settings.defaults()


class SectionSettings:
    """The values of one section as attributes (``settings.episodes``), read from a
    validated config. Subclasses set ``section`` and may add methods."""

    section: ClassVar[Section]

    def __init__(self, **values: Any):
        names = self.section.settings.names()
        unknown = sorted(set(values) - set(names))
        missing = [n for n in names if n not in values]
        if unknown or missing:
            raise TypeError(f"{type(self).__name__}: unknown {unknown}, missing {missing}")
        for name in names:
            setattr(self, name, values[name])

    @classmethod
    def from_config(cls, config: dict):
        table = config[cls.section.name]
        return cls(**{name: table[name] for name in cls.section.settings.names()})

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.section.settings.names()}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.as_dict() == self.as_dict()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.as_dict().items())})"
