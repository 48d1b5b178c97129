"""Agents behind one interface: ``select_action(state) -> action``.

Every actor also speaks the Online Hex Tournament (OHT) client protocol, whose methods
a tournament server calls with keyword arguments (the parameter names are the
contract): ``handle_series_start``, ``handle_game_start``, ``handle_get_action``,
``handle_game_over``, ``handle_series_over``, ``handle_tournament_over``.
``handle_get_action`` takes the flat state ``(player_to_move, cell_0, ...)`` and
answers ``(row, col)``; it needs a game with ``from_flat`` and a square ``size``.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

from mctsfw.game import Action, Game, IllegalMoveError, State
from mctsfw.mcts import MCTS


class Actor:
    """Base class of all agents."""

    kind = "actor"

    def __init__(self, game: Game):
        self.game = game
        self.series: dict[str, Any] = {}

    @property
    def label(self) -> str:
        return self.kind

    def select_action(self, state: State) -> Action:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget anything kept from the previous game."""

    # ---- the OHT client protocol --------------------------------------------------------
    def handle_series_start(self, unique_id: int, series_id: int, player_map: Any, num_games: int, game_params: Sequence[int]) -> None:
        size = getattr(self.game, "size", None)
        if game_params and size is not None and int(game_params[0]) != size:
            raise ValueError(f"this agent plays {self.game.name} of size {size}, the series asks for size {game_params[0]}")
        self.series = {
            "unique_id": unique_id,
            "series_id": series_id,
            "player_map": player_map,
            "num_games": num_games,
            "game_params": game_params,
        }

    def handle_game_start(self, start_player: int) -> None:
        self.reset()

    def handle_get_action(self, state: Sequence[int]) -> tuple[int, int]:
        from_flat = getattr(self.game, "from_flat", None)
        if from_flat is None:
            raise TypeError(f"the OHT interface needs a game with flat states; {self.game.name} has none")
        game_state = from_flat(state)
        if self.game.is_final(game_state):
            raise ValueError(f"the game in this state is over (player {self.game.winner(game_state)} has won)")
        action = self.select_action(game_state)
        return divmod(int(action), self.game.size)

    def handle_game_over(self, winner: int, end_state: Sequence[int]) -> None:
        self.reset()

    def handle_series_over(self, stats: Any) -> None:
        pass

    def handle_tournament_over(self, score: Any) -> None:
        pass


class RandomActor(Actor):
    """Uniformly random legal moves."""

    kind = "random"

    def __init__(self, game: Game, seed: int | None = None):
        super().__init__(game)
        self.rng = random.Random(seed)

    def select_action(self, state: State) -> Action:
        return self.rng.choice(self.game.legal_actions(state))


class MCTSActor(Actor):
    """MCTS with a registered tree policy; plays the most visited move and keeps its subtree."""

    kind = "mcts"

    def __init__(
        self,
        game: Game,
        search_games: int | None = 1000,
        time_limit: float | None = None,
        c: float = 1.4,
        seed: int | None = None,
        tree_policy: str = "uct",
        default_policy: Callable[[State], Action] | None = None,
    ):
        super().__init__(game)
        from mctsfw import make_tree_policy

        if not search_games and not time_limit:
            raise ValueError("an mcts actor needs search_games > 0 or time_limit > 0")
        self.search_games = search_games
        self.time_limit = time_limit
        self.mcts = MCTS(game, make_tree_policy(tree_policy, c=c), default_policy, seed=seed)
        self.last_distribution = None

    @property
    def label(self) -> str:
        budget = f"{self.search_games} games" if self.search_games else f"{self.time_limit}s"
        return f"mcts({budget})"

    def select_action(self, state: State) -> Action:
        root = self.mcts.search(state, self.search_games, self.time_limit)
        self.last_distribution = self.mcts.visit_distribution(root)
        action = self.mcts.best_action(root)
        self.mcts.advance(action)
        return action

    def reset(self) -> None:
        self.mcts.reset()


class HumanActor(Actor):
    """A person at the terminal: asks until the typed move is readable and legal."""

    kind = "human"

    def __init__(self, game: Game, input_fn: Callable[[str], str] = input, output_fn: Callable[[str], None] = print):
        super().__init__(game)
        self.input_fn = input_fn
        self.output_fn = output_fn

    def select_action(self, state: State) -> Action:
        prompt = f"player {self.game.current_player(state)}, your move ({self.game.move_help}): "
        while True:
            text = self.input_fn(prompt)
            try:
                return self.game.parse_action(text, state)
            except IllegalMoveError as error:
                self.output_fn(f"refused: {error}")


ACTOR_KINDS = {"random": RandomActor, "mcts": MCTSActor, "human": HumanActor}


def make_actor(spec: str, game: Game, **params) -> Actor:
    """An agent for ``game``: spec ``"random"``, ``"mcts"`` or ``"human"``.

    ``mcts`` takes ``search_games``, ``time_limit`` (seconds), ``c``, ``seed`` and
    ``tree_policy``; ``random`` takes ``seed``.
    """
    cls = ACTOR_KINDS.get(spec)
    if cls is None:
        raise ValueError(f"unknown actor {spec!r}; available: {', '.join(sorted(ACTOR_KINDS))}")
    if cls is RandomActor:
        params = {k: v for k, v in params.items() if k == "seed"}
    return cls(game, **params)
