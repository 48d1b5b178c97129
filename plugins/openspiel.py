"""OpenSpiel's MCTS as an opponent (spec ``openspiel:SIMULATIONS``): a peer nobody here wrote.

    python scripts/strength_report.py models/hex7/pv_mlp_gen0300.keras --game hex --size 7 \\
        --search-games 400 --opponents openspiel:10000 --games 40

The player is OpenSpiel's C++ ``MCTSBot`` (``pip install -e ".[differential]"``) as its
examples set it up: UCT with uct_c = 2, one random rollout a simulation, and its solver
(proven wins and losses backed up). ``openspiel:1000`` searches 1,000 simulations a move;
``openspiel:1000,nosolve`` leaves the solver out. It plays on OpenSpiel's own state of the
game, told every move (``FollowingActor``): Hex, Connect Four, Gomoku (freestyle) and Go,
whose boards and actions are OpenSpiel's (docs/design.md, the game contract).

OpenSpiel's player 0 always opens. When our player 2 opens, Connect Four and Gomoku are
the same game with the colours renamed, and Hex is the same game on the board
mirrored in its long diagonal (the mirror turns a top-to-bottom chain into a
left-to-right one), so the actions are mirrored; Go, where black opens, refuses it.
"""

from __future__ import annotations

import re
from typing import Any

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError, FollowingActor
from hexzero.mctsfw.game import Action, Game, State

#: OpenSpiel's examples: UCT constant 2, a random rollout a simulation
UCT_C = 2.0
MEMORY_MB = 1000
SPEC = re.compile(r"^\s*(\d+)\s*(?:,\s*(solve|nosolve)\s*)?$")


def openspiel_game(game: Game) -> tuple[str, dict[str, Any]]:
    """OpenSpiel's name and parameters for ``game``, or ActorError saying why there are none."""
    name, p = game.name, game.params()
    if name == "hex":
        return "hex", {"board_size": p["size"]}
    if name == "connect4":
        return "connect_four", {"rows": p["rows"], "columns": p["columns"]}
    if name == "gomoku":
        if p.get("exactly_five"):
            raise ActorError("OpenSpiel's gomoku is freestyle (five or more wins), not exactly five")
        return "gomoku", {"size": p["size"], "connect": p["connect"]}
    if name == "go":
        return "go", {"board_size": p["size"], "komi": float(p["komi"])}
    raise ActorError(f"OpenSpiel's MCTS plays hex, connect4, gomoku and go here, not {name}")


class OpenSpielActor(FollowingActor):
    """OpenSpiel's C++ MCTS with random rollouts (spec ``openspiel:SIMULATIONS[,nosolve]``)."""

    kind = "openspiel"
    name = "openspiel"
    description = "OpenSpiel's C++ MCTS: openspiel:10000 (simulations a move; openspiel:10000,nosolve: no solver)"

    @classmethod
    def from_spec(cls, argument: str, game: Game, seed: int | None = None, **params: Any) -> "OpenSpielActor":
        """``make_actor("openspiel:10000", game, seed=...)``: other search settings are ignored."""
        found = SPEC.match(argument)
        if not found or int(found.group(1)) < 1:
            raise ActorError(f"openspiel:{argument}: give the simulations a move, e.g. openspiel:1000 "
                             "or openspiel:1000,nosolve")
        return cls(game, int(found.group(1)), solve=found.group(2) != "nosolve", seed=seed or 0)

    def __init__(self, game: Game, simulations: int, solve: bool = True, seed: int = 0):
        super().__init__(game)
        name, params = openspiel_game(game)
        try:
            import pyspiel
        except ImportError:
            raise ActorError('OpenSpiel is not installed: pip install -e ".[differential]"') from None
        self.pyspiel = pyspiel
        self.spiel = pyspiel.load_game(name, params)
        self.simulations, self.solve, self.seed = simulations, solve, seed
        self.games = 0
        self.reset()

    @property
    def deterministic(self) -> bool:
        return False  # random rollouts, a seed a game

    def default_label(self) -> str:
        return f"OpenSpiel MCTS({self.simulations}{'' if self.solve else ', no solver'})"

    def new_game(self) -> None:
        self.spiel_state = self.spiel.new_initial_state()
        self.mirrored = False
        self.games += 1
        # MCTSBot(game, evaluator, uct_c, max_simulations, max_memory_mb, solve, seed, verbose); a seed a game
        seed = self.seed * 1000003 + self.games
        self.bot = self.pyspiel.MCTSBot(self.spiel, self.pyspiel.RandomRolloutEvaluator(1, seed), UCT_C,
                                        self.simulations, MEMORY_MB, self.solve, seed, False)

    def _theirs(self, action: Action) -> int:
        """Our action as OpenSpiel's (mirrored in the long diagonal when Hex's player 2 opened)."""
        if not self.mirrored:
            return int(action)
        size = self.game.params()["size"]
        row, col = divmod(int(action), size)
        return col * size + row

    def _before_move(self, state: State) -> None:
        """Before OpenSpiel's first move, whether our player 2 opens decides the mirror."""
        if self.spiel_state.move_number() == 0 and self.game.current_player(state) == 2:
            if self.game.name == "go":
                raise ActorError(f"{self.label}: in OpenSpiel's Go black (our player 1) opens")
            self.mirrored = self.game.name == "hex"

    def play_moves(self, moves: list[tuple[State, Action]]) -> None:
        for before, action in moves:
            self._before_move(before)
            theirs = self._theirs(action)
            if theirs not in self.spiel_state.legal_actions():
                raise ActorError(f"{self.label}: {self.game.action_to_text(action, before)} is illegal in "
                                 "OpenSpiel's game (the rules disagree)")
            self.spiel_state.apply_action(theirs)

    def select_action(self, state: State) -> Action:
        self.sync(state)
        self._before_move(state)
        theirs = self.bot.step(self.spiel_state)
        self.spiel_state.apply_action(theirs)
        action = self._theirs(theirs)  # the mirror is its own inverse
        self.state = self.game.next_state(state, action)
        return action


@mctsfw.hookimpl
def mctsfw_register_actors():
    return [OpenSpielActor]
