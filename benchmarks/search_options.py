"""How the reports search a saved policy-and-value network: one list of options, so that
``scripts/strength_report.py`` and ``benchmarks/connect4_perfect.py`` build the same
agent from the same flags and name it alike.

    --value-weight L       PUCT's lambda: L * value head + (1 - L) * playout
    --playouts tactical    the playouts mixed in take a win at once and stop the opponent's
    --first-play reduction an untried move is worth the parent's mean less 0.2 (Leela Zero, KataGo)
    --c-puct C             PUCT's weight of the prior against the mean value
    --random-symmetry      each position judged in a random symmetry of the board (KataGo)
    --mean-symmetry        each position judged in every symmetry, the mean taken (AlphaGo)
    --tree-policy gumbel   Gumbel's root (top-k and sequential halving) instead of the file's PUCT

Each is a declared setting of the tree policy or of ``[mcts]`` (``hexzero.toml``), so
``cli.py play`` and ``compare`` search a model the same way from a config. An option not
given leaves the network file's own setting (the search it was recorded to play best
with), as every command does.
"""

from __future__ import annotations

import argparse

from hexzero import mctsfw
from hexzero.mctsfw.config import MCTS_SECTION
from hexzero.mctsfw.evaluators import PLAYOUTS
from hexzero.plugins.puct import FIRST_PLAY, PUCT

#: PUCT's declared defaults (what a network file without settings searches with)
DEFAULT = PUCT.parameters.default
#: the tree policies that search with a policy-and-value network's priors (``--tree-policy``)
TREE_POLICIES = ("puct", "gumbel")
#: the options that are the tree policy's own settings (``policy_params``)
POLICY_OPTIONS = ("value_weight", "first_play", "c_puct", "random_symmetry", "mean_symmetry")
#: ``[mcts] playouts``'s declared default, likewise
PLAYOUTS_DEFAULT = MCTS_SECTION.defaults()["playouts"]


def add_search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tree-policy", choices=TREE_POLICIES,
                        help="the searching agent's tree policy (default: the network file's, else puct; gumbel: "
                             "Gumbel's root, top-k and sequential halving, as self-play searches with it)")
    parser.add_argument("--value-weight", type=float,
                        help="PUCT's lambda for a policy-and-value network: lambda * value + (1 - lambda) * playout "
                             f"(default: the network file's, else {DEFAULT('value_weight'):g})")
    parser.add_argument("--playouts", choices=PLAYOUTS,
                        help="the playouts mixed in with --value-weight < 1: uniformly random, or tactical (each move "
                             f"takes a win at once or stops the opponent's; default: the file's, else {PLAYOUTS_DEFAULT})")
    parser.add_argument("--first-play", choices=FIRST_PLAY,
                        help="PUCT's value of a move not tried yet (reduction: the parent's mean less "
                             f"{DEFAULT('fpu_reduction'):g}; default: the file's, else {DEFAULT('first_play')})")
    parser.add_argument("--c-puct", type=float,
                        help="PUCT's weight of the prior against the mean value "
                             f"(default: the file's, else {DEFAULT('c_puct'):g})")
    parser.add_argument("--random-symmetry", action="store_true", default=None,
                        help="the searching agent's network judges each position in a random symmetry (KataGo)")
    parser.add_argument("--mean-symmetry", action="store_true", default=None,
                        help="the searching agent's network judges each position in every symmetry of the board, and "
                             "the search takes the mean (AlphaGo)")


def check_search_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """With ``--tree-policy``, an option that is not a declared setting of that policy
    refused as argparse refuses a bad option (exit 2), before any model is loaded."""
    if args.tree_policy is None:
        return
    declared = {setting.name for setting in mctsfw.default_registries().tree_policies.get(args.tree_policy).parameters}
    for name in POLICY_OPTIONS:
        if getattr(args, name) is not None and name not in declared:
            parser.error(f"--{name.replace('_', '-')} is not a setting of the {args.tree_policy} tree policy")


def search_params(args: argparse.Namespace) -> dict:
    """``make_actor`` parameters of a model's search from the options given; the others are
    the network file's own settings (``mctsfw.make_actor``), else the declared defaults."""
    policy = {name: getattr(args, name) for name in POLICY_OPTIONS if getattr(args, name) is not None}
    params: dict = {"policy_params": policy} if policy else {}
    if args.playouts is not None:
        params["playouts"] = args.playouts
    if args.tree_policy is not None:
        params["tree_policy"] = args.tree_policy
    return params


def search_label(args: argparse.Namespace) -> str:
    """The options given, as ", lambda 0.5, tactical playouts"."""
    parts = []
    if args.tree_policy is not None:
        parts.append(args.tree_policy)
    if args.value_weight is not None:
        parts.append(f"lambda {args.value_weight:g}")
    if args.playouts is not None:
        parts.append(f"{args.playouts} playouts")
    if args.first_play is not None:
        parts.append(f"first play {args.first_play}")
    if args.c_puct is not None:
        parts.append(f"c {args.c_puct:g}")
    if args.random_symmetry:
        parts.append("random symmetry")
    if args.mean_symmetry:
        parts.append("mean of symmetries")
    return "".join(f", {part}" for part in parts)
