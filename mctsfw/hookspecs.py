"""The hooks a hexzero plugin may implement.

A plugin is any module or object with functions decorated ``@mctsfw.hookimpl`` whose
names match the specifications below. Built-in plugins register through these same
hooks; a third-party package declares an entry point in the ``mctsfw`` group::

    [project.entry-points.mctsfw]
    my_game = "my_package.my_module"

Every registration hook returns a list of classes, each with a unique ``name``
attribute; the core builds one registry per kind from them and rejects duplicates.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("mctsfw")
hookimpl = pluggy.HookimplMarker("mctsfw")


@hookspec
def mctsfw_register_games() -> list[type]:
    """Called once when the registries are built.

    Return game classes: subclasses of ``mctsfw.Game`` with a unique ``name``,
    constructed as ``cls(**params)`` from ``make_game(name, **params)`` or the
    ``[games.<name>]`` table of the config. Declare the parameters as
    ``parameters = mctsfw.schema.Parameters(Setting(...), ...)``: validation, defaults and
    unknown-parameter errors follow from it.
    """


@hookspec
def mctsfw_register_nets() -> list[type]:
    """Called once when the registries are built.

    Return policy-network classes with a unique ``name``, constructed as
    ``cls(game, **params)`` from the ``[nets.<name>]`` table of the config (parameters
    declared as for games).
    """


@hookspec
def mctsfw_register_tree_policies() -> list[type]:
    """Called once when the registries are built.

    Return tree-policy classes (subclasses of ``mctsfw.TreePolicy``) with a unique
    ``name``, constructed as ``cls(**params)`` from ``[tree_policies.<name>]`` (parameters declared as for games). The MCTS
    engine asks the tree policy which child to descend into at every expanded node.
    """


@hookspec
def mctsfw_register_evaluators() -> list[type]:
    """Called once when the registries are built.

    Return evaluator classes with a unique ``name`` (for example the Tournament of
    Progressive Policies): things that take saved agents and report how they compare.
    """


@hookspec
def mctsfw_register_displays() -> list[type]:
    """Called once when the registries are built.

    Return display classes with a unique ``name``: they are shown the states of actual
    games (never rollouts) through ``show(game, state, last_action)``. A display that
    also has ``thinking(progress)`` is handed to the searching agents of ``cli.py play``
    (``Actor.watch``) and shows them think.
    """


@hookspec
def mctsfw_register_actors() -> list[type]:
    """Called once when the registries are built.

    Return actor classes (subclasses of ``mctsfw.Actor``) with a unique ``name``: the
    prefix of a player spec ``NAME:ARGUMENT`` (``gtp:"gnugo --mode gtp --level 1"``).
    ``make_actor`` builds one as ``cls.from_spec(argument, game, **params)``; the class
    takes what it needs of ``params`` (a player's search settings) and ignores the rest.
    """


@hookspec
def mctsfw_config_sections() -> list:
    """Called once when the registries are built.

    Return ``mctsfw.schema.Section`` objects: the config tables a plugin reads
    (``[topp]``, ``[show]``, ...), each setting declared once with its type, default,
    bounds, help and whether a resumed run may change it. Validation, the defaults, the
    settings objects and ``--help`` follow from them; two plugins may not declare one name.
    """


@hookspec(firstresult=True)
def mctsfw_board_svg(game, state, last_action: int | None, heat: dict | None) -> str | None:
    """Called by the web board (``cli.py serve``) each time it draws a position.

    Return the board of ``state`` as an SVG document for the game this plugin provides
    (None for a game that is not yours: the first answer wins, and a game no plugin
    draws is shown as ``game.render`` text with a box to type moves). Every clickable
    place carries the action it plays as ``data-action="N"``; ``last_action`` (or None)
    is marked; ``heat`` (or None) maps actions to their share of an agent's search
    visits, drawn as a heat map. ``mctsfw.svg`` has the shared pieces.
    """
