"""Players built from the config: ``make_player(spec, game, config, seed)`` turns a
player's spec (``human``, ``random``, ``mcts``, a model path, ``gtp:COMMAND`` and the other
registered kinds) into an actor with the config's search settings (``[mcts]``,
``[play]``); every command that seats players (play, compare, serve, gtp) and the
imitation games (``mctsfw.imitation``) build them here."""

from __future__ import annotations

from hexzero import mctsfw
from hexzero.mctsfw.actors import registered_actor_kind
from hexzero.mctsfw.checkpoints import net_class_for
from hexzero.mctsfw.config import plugin_params
from hexzero.mctsfw.roles import POLICY_VALUE, has_role


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
            playouts=mcts["playouts"],
            engine=mcts["engine"],
        )
    if spec == "random":
        return mctsfw.make_actor(spec, game, seed=seed)
    if spec == "human":
        return mctsfw.make_actor(spec, game)
    if registered_actor_kind(spec):  # gtp:COMMAND and other registered kinds
        return mctsfw.make_actor(spec, game, seed=seed)
    # a saved model: the raw network, or with play.model_search_games > 0 a search guided by
    # it: UCT with its rollouts (a policy net), PUCT with its priors and values (policy and value)
    tree_policy = config["play"]["model_tree_policy"] if has_role(net_class_for(spec), POLICY_VALUE) else "uct"
    policy_params = plugin_params(config, "tree_policies", tree_policy)
    return mctsfw.make_actor(
        spec, game,
        search_games=config["play"]["model_search_games"],
        time_limit=config["mcts"]["time_limit"] or None,
        selection=config["play"]["model_selection"],
        temperature=config["play"]["temperature"],
        seed=seed,
        tree_policy=tree_policy,
        policy_params=policy_params,
        playouts=config["mcts"]["playouts"],
        engine=config["mcts"]["engine"],
    )


def make_players(specs: dict, game: mctsfw.Game, config: dict, seed: int | None,
                 player_configs: dict | None = None) -> dict:
    """``make_player`` for each key's spec (seed + key), with that key's config in
    ``player_configs`` where it has one (a saved model's: its own settings under the
    user's), else ``config``; if one fails, those made are closed."""
    actors: dict = {}
    player_configs = player_configs or {}
    try:
        for key, spec in specs.items():
            actors[key] = make_player(spec, game, player_configs.get(key, config), None if seed is None else seed + key)
    except BaseException:
        close_actors(actors.values())
        raise
    return actors


def close_actors(actors) -> None:
    """Let each actor go (an outside engine is stopped)."""
    for actor in actors:
        actor.close()
