"""Agents behind one interface: ``select_action(state) -> action``.

``make_actor`` builds one by kind (``random``, ``mcts``, ``human``), from the path of a
saved network, which it loads through the net registry (the core never imports
``nets/``): the raw network (``NetActor``) or MCTS with network rollouts, or from a spec
``NAME:ARGUMENT`` naming a registered actor kind (``gtp:COMMAND``: an outside GTP engine,
``plugins/gtp.py``).

An actor resigns by raising ``Resignation`` from ``select_action``; the match runner
records the game as lost by that player (``GameRecord.resigned``). A person asks the
runner for more by raising the other ``Request`` exceptions from it: ``TakeBack``
(undo), ``SwapRequest`` (the pie rule), ``Quit`` (end the session); the runner judges
each and answers through ``Actor.tell``. An actor that holds
something outside the process (an engine it started) lets it go in ``close``.

Actors move only; playing games and matches between them is ``mctsfw.match``'s, and
speaking a tournament server's protocol is an adapter's (``plugins/oht.py``).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hexzero.mctsfw.game import Action, Game, IllegalMoveError, State
from hexzero.mctsfw.evaluators import LeafEvaluator, NetRollouts, RandomRollouts, value_evaluator
from hexzero.mctsfw.search import SearchProgress, budget_problem
from hexzero.mctsfw.search.array_search import make_search
from hexzero.mctsfw.roles import POLICY_VALUE, PolicyNet, has_role
from hexzero.mctsfw.sampling import check_temperature, masked_policy, sample_action


class ActorError(ValueError):
    """An actor that cannot be built or that failed for reasons outside the program (an
    outside engine that is missing, died or answered nonsense): one line for the user."""


class Resignation(Exception):
    """Raised by ``select_action`` when the actor resigns: its player loses the game."""


class Request(Exception):
    """Raised by ``select_action`` when the player asks the game runner for something
    other than a move (``mctsfw.match.play_game`` judges it and asks for a move again,
    or ends the game): the subclasses say what."""


class TakeBack(Request):
    """Take back the asker's last move and every move after it (a person's ``undo``)."""


class SwapRequest(Request):
    """Take the pie rule's swap instead of a move (``Game.swapped``)."""


class Quit(Request):
    """End the session now: the game is left unfinished and no further game is played."""


class Actor:
    """Base class of all agents."""

    kind = "actor"

    def __init__(self, game: Game):
        self.game = game
        self._label: str | None = None

    @property
    def label(self) -> str:
        """A short name for tables and logs; set it to override the default."""
        return self._label or self.default_label()

    @label.setter
    def label(self, value: str | None) -> None:
        self._label = value

    def default_label(self) -> str:
        return self.kind

    def select_action(self, state: State) -> Action:
        raise NotImplementedError

    @property
    def deterministic(self) -> bool:
        """Whether the actor may choose the same move every time it meets a position: a
        search with nothing drawn at random (at a fixed budget, or nearly so at a time
        limit), a network's most probable move, an outside engine at fixed nodes. Two such
        players replay one game, so a match starts their pairs of games from openings
        (``mctsfw.match.Openings``). An actor that does not say is taken to: openings cost
        a match nothing."""
        return True

    def reset(self) -> None:
        """Forget anything kept from the previous game."""

    def watch(self, callback: "Callable[[SearchProgress], None] | None") -> bool:
        """Have ``callback`` see the actor think (``mctsfw.search.nodes.SearchProgress``, several
        times a move and once at its end); None stops it. False: this actor does not search."""
        return False

    def interrupt(self) -> bool:
        """Ask a search under way (on another thread) to end now, the move being the best
        found so far; a request made just before a search starts ends that one at once.
        False: this actor does not search."""
        return False

    def analyse(self, state: State) -> SearchProgress | None:
        """What the actor's search makes of ``state`` (the player to move there need not
        be this actor's): a person's hint reads it. None: this actor does not search."""
        return None

    def consider_swap(self, starting_player: int, moves: list[Action]) -> bool:
        """Whether to take the pie rule's swap (``Game.swapped``), offered now, after
        ``moves`` played from ``starting_player``'s start; the actor's player moves next
        if it does not. By default never: only an actor that can judge positions swaps."""
        return False

    def tell(self, message: str) -> None:
        """A message of the game runner to this player (a request refused with the
        reason, what the opponent did that is not a move): a person reads it; agents
        need not."""

    def opening_played(self, starting_player: int, moves: list[Action]) -> None:
        """The game goes on from recorded ``moves`` (``play --from``), played after
        ``reset`` from ``starting_player``'s start: an actor that follows the game move
        by move (an outside engine) learns them here. Most actors need not."""

    def judge(self, state: State) -> float | None:
        """The actor's own count of the finished position ``state``: the score for
        player 1 (> 0: player 1 won, 0: a draw), as an outside engine that scores Go
        (GTP ``final_score``) refers games; None: this actor does not score games."""
        return None

    def close(self) -> None:
        """Let go of what the actor holds outside the process (an engine it started);
        the actor is not used again. Most actors hold nothing."""


class FollowingActor(Actor):
    """An agent that keeps a position of its own (an outside engine, another library's
    state) and must be told every move. It knows which position it holds (``state``) and
    finds the moves between that and the position it is asked about by comparing states
    (one or two moves: the opponent's, or a pass and a move). A subclass starts a game in
    ``new_game`` and takes moves in ``play_moves``."""

    def __init__(self, game: Game):
        super().__init__(game)
        self.state: State | None = None  # the position held, None before a game's first move

    def new_game(self) -> None:
        """Set up the empty board of a new game."""
        raise NotImplementedError

    def play_moves(self, moves: list[tuple[State, Action]]) -> None:
        """Take these moves, each with the position it was played in."""
        raise NotImplementedError

    def reset(self) -> None:
        self.state = None
        self.new_game()

    def moves_to(self, state: State) -> list[tuple[State, Action]]:
        """(state before, action) for each move from the position held to ``state``."""
        game = self.game
        if self.state is None:
            starts = [game.initial_state(p) for p in (1, 2)]
            if state in starts:
                return []
        else:
            if self.state == state:
                return []
            starts = [self.state]
        for depth in (1, 2):
            for start in starts:
                found = self._path(start, state, depth)
                if found is not None:
                    return found
        raise ActorError(
            f"{self.label}: cannot tell which moves led to this position from its own (more than two moves "
            "away: a position set up without telling the player, see Actor.opening_played)"
        )

    def _path(self, start: State, goal: State, depth: int) -> list[tuple[State, Action]] | None:
        if self.game.is_final(start):
            return None
        for action in self.game.legal_actions(start):
            after = self.game.next_state(start, action)
            if depth == 1:
                if after == goal:
                    return [(start, action)]
            else:
                rest = self._path(after, goal, depth - 1)
                if rest is not None:
                    return [(start, action), *rest]
        return None

    def sync(self, state: State) -> None:
        """Take the moves that lead from the position held to ``state``."""
        self.play_moves(self.moves_to(state))
        self.state = state

    def opening_played(self, starting_player: int, moves: list[Action]) -> None:
        """A game continued from a record: the moves are taken one by one."""
        state, played = self.game.initial_state(starting_player), []
        for action in moves:
            played.append((state, action))
            state = self.game.next_state(state, action)
        self.play_moves(played)
        self.state = state


class RandomActor(Actor):
    """Uniformly random legal moves."""

    kind = "random"

    def __init__(self, game: Game, seed: int | None = None):
        super().__init__(game)
        self.rng = random.Random(seed)

    @property
    def deterministic(self) -> bool:
        return False

    def select_action(self, state: State) -> Action:
        return self.rng.choice(self.game.legal_actions(state))


class MCTSActor(Actor):
    """MCTS with a registered tree policy and a leaf evaluator; keeps its subtree between moves.

    It plays the most visited move, or with ``temperature`` > 0 a move drawn with
    probability ~ visits ** (1 / temperature) (``mctsfw.sampling``). The evaluator is
    random rollouts unless given (``mctsfw.evaluators``; ``playouts="tactical"``: rollouts
    that take a win at once and stop the opponent's). ``solver`` and ``threats`` as for
    ``MCTS`` (both on: off is the search as it was before them). ``c`` sets the tree policy's
    exploration constant, whatever the policy calls it (``TreePolicy.exploration_param``);
    the policy's parameters not given are the game's (``Game.tree_policy_defaults``), else
    the policy's own. A player's search has no root noise: that is for self-play alone.
    ``engine``: where the search runs (``mctsfw.search.array_search.make_search``): "auto" on the
    compiled array tree where the game offers kernels and the search can run there, else on
    the object tree; "arrays" or "objects" to choose. Bad parameters raise ValueError here,
    naming the problem.
    """

    kind = "mcts"

    def __init__(
        self,
        game: Game,
        search_games: int | None = 1000,
        time_limit: float | None = None,
        c: float | None = None,
        seed: int | None = None,
        tree_policy: str = "uct",
        evaluator: LeafEvaluator | None = None,
        temperature: float = 0.0,
        policy_params: dict[str, Any] | None = None,
        batch_size: int | None = None,
        playouts: str = "random",
        solver: bool = True,
        threats: bool = True,
        engine: str = "auto",
    ):
        super().__init__(game)
        from hexzero.mctsfw import default_registries, make_tree_policy

        problem = budget_problem(search_games, time_limit)
        if problem:
            raise ValueError(f"an mcts actor: {problem}")
        params = {**game.tree_policy_defaults.get(tree_policy, {}), **(policy_params or {})}
        if c is not None:
            params[default_registries().tree_policies.get(tree_policy).exploration_param] = c
        self.search_games = search_games
        self.time_limit = time_limit
        self.temperature = check_temperature(temperature)
        self.rng = np.random.default_rng(seed)
        if evaluator is None:
            evaluator = RandomRollouts(game, seed=seed, playouts=playouts)
        self.mcts = make_search(game, make_tree_policy(tree_policy, **params), evaluator, seed=seed,
                                batch_size=batch_size, solver=solver, threats=threats, engine=engine)
        self.last_distribution = None

    def default_label(self) -> str:
        budget = f"{self.search_games} games" if self.search_games else f"{self.time_limit}s"
        return f"mcts({budget})"

    @property
    def deterministic(self) -> bool:
        return self.temperature == 0 and not self.mcts.draws_at_random

    def select_action(self, state: State) -> Action:
        root = self.mcts.search(state, self.search_games, self.time_limit)
        self.last_distribution = self.mcts.visit_distribution(root)
        if self.temperature > 0:
            action = sample_action(self.last_distribution, self.temperature, self.rng)
        else:
            action = self.mcts.best_action(root)
        self.mcts.advance(action)
        return action

    def reset(self) -> None:
        self.mcts.reset()

    def watch(self, callback: Callable[[SearchProgress], None] | None) -> bool:
        self.mcts.on_progress = callback
        return True

    def interrupt(self) -> bool:
        self.mcts.stop_requested = True
        return True

    def analyse(self, state: State) -> SearchProgress:
        """A search of ``state`` with the actor's budget; the tree is kept, so the move
        that follows reuses it (a hint on the position the actor left makes it think ahead)."""
        started = time.perf_counter()
        self.mcts.search(state, self.search_games, self.time_limit)
        return self.mcts.progress(self.mcts.last_search_games, time.perf_counter() - started)

    def consider_swap(self, starting_player: int, moves: list[Action]) -> bool:
        """Swap when the search expects more from the swapped position than from answering.
        A watcher does not see these two searches: their win estimates are of two
        different players to move, and neither search chooses a move."""
        watcher, self.mcts.on_progress = self.mcts.on_progress, None
        try:
            return swap_pays(self.game, starting_player, moves, lambda state: self.analyse(state).win_estimate)
        finally:
            self.mcts.on_progress = watcher


class HumanActor(Actor):
    """A person at the terminal: asks until the typed move is readable and legal, and
    understands the commands of ``COMMANDS`` (``help`` lists them). ``hint(state, swap)``, when
    given, answers ``hint`` with a line of text (``cli.py play`` asks a searching agent);
    ``undo``, ``swap`` and ``quit`` go to the game runner as ``Request`` exceptions, which
    it judges (``mctsfw.match.play_game``), ``resign`` is a ``Resignation``."""

    kind = "human"

    #: the commands a person may type instead of a move, and what each does
    COMMANDS = {
        "help": "this list",
        "undo": "take back your last move and the answer to it",
        "hint": "a search's suggestion for your move, with its share of the visits and your win estimate",
        "swap": "the pie rule, when offered: take your opponent's first move as yours",
        "resign": "give up this game (recorded as lost by you)",
        "quit": "end the session now (the game so far is kept by --record)",
    }

    def __init__(self, game: Game, input_fn: Callable[[str], str] = input, output_fn: Callable[[str], None] = print,
                 hint: Callable[[State, tuple[int, list[Action]] | None], str] | None = None):
        super().__init__(game)
        self.input_fn = input_fn
        self.output_fn = output_fn
        #: ``hint(state, swap)``: the advice for the person to move in ``state``; ``swap`` is
        #: (starting player, moves) when the swap is offered there, else None
        self.hint = hint
        self._swap_offer: tuple[int, list[Action]] | None = None

    @property
    def deterministic(self) -> bool:
        return False

    def help_text(self) -> str:
        return "\n".join([f"a move: {self.game.move_help}", "or one of these commands:"]
                         + [f"  {name:<7} {what}" for name, what in self.COMMANDS.items()])

    def consider_swap(self, starting_player: int, moves: list[Action]) -> bool:
        """A person decides at the move prompt (``swap``): told here that they may."""
        self._swap_offer = (starting_player, list(moves))
        return False

    def tell(self, message: str) -> None:
        self.output_fn(message)

    def select_action(self, state: State) -> Action:
        offer, self._swap_offer = self._swap_offer, None
        if offer:
            self.output_fn("you may swap (the pie rule): type swap to take the first move as yours, or play a move")
        # short, so that it never wraps: how to type a move is said once, and again by help
        prompt = f"player {self.game.current_player(state)}, your move (or help): "
        while True:
            try:
                text = self.input_fn(prompt)
            except EOFError:  # Ctrl-D, or the end of piped input: as quit, the game so far kept
                self.output_fn("\nno more input: the session ends (as quit)")
                raise Quit() from None
            command = text.strip().lower()
            if not command:  # an empty line (Enter alone): asked again
                continue
            if command in ("help", "?"):
                self.output_fn(self.help_text())
            elif command == "hint":
                self.output_fn(self.hint(state, offer) if self.hint else "refused: no hint here (nothing to search with)")
            elif command == "undo":
                raise TakeBack()
            elif command == "swap":
                raise SwapRequest()
            elif command == "resign":
                raise Resignation(f"player {self.game.current_player(state)} resigns")
            elif command in ("quit", "exit"):
                raise Quit()
            else:
                try:
                    return self.game.parse_action(text, state)
                except IllegalMoveError as error:
                    self.output_fn(f"refused: {error} (help lists the commands)")


class NetActor(Actor):
    """A policy network playing on its own, no search: its most probable legal move
    (``selection="greedy"``) or a move drawn from its policy (``"sample"``, seeded), with
    probability ~ policy^(1/``temperature``): 1 the policy itself, below 1 sharper."""

    kind = "net"
    SELECTIONS = ("greedy", "sample")

    def __init__(self, game: Game, net: PolicyNet, selection: str = "greedy", seed: int | None = None,
                 temperature: float = 1.0):
        super().__init__(game)
        if selection not in self.SELECTIONS:
            raise ValueError(f"selection is one of {', '.join(self.SELECTIONS)}, not {selection!r}")
        if not (isinstance(temperature, (int, float)) and 0 < temperature < float("inf")):
            raise ValueError(f"a sampling network's temperature is a number > 0, not {temperature!r}")
        self.net = net
        self.selection = selection
        self.temperature = float(temperature)
        self.rng = np.random.default_rng(seed)

    def default_label(self) -> str:
        return f"net({self.selection})"

    @property
    def deterministic(self) -> bool:
        return self.selection == "greedy"

    def policy(self, state: State) -> np.ndarray:
        """The network's probabilities of the legal moves (illegal ones 0, summing to 1)."""
        encode = getattr(self.net, "encode", self.game.encode)  # a net may read planes instead
        probs = self.net.forward(encode(state)[None])[0]
        return masked_policy(probs, self.game.legal_mask(state))

    def select_action(self, state: State) -> Action:
        """Its move, never past a win at once or an open loss: where the game declares
        forcing moves (``Game.forcing_actions``), the network chooses among them; where
        there are none and the game's threat search finds a forced win
        (``Game.forced_win``), its first move; else, facing a threat of one
        (``Game.threat_defences``), the network chooses among the defences."""
        policy = self.policy(state)
        game = self.game
        forcing = game.forcing_actions(state)
        if forcing is not None:
            allowed = forcing.actions
        elif line := game.forced_win(state, thorough=True):
            return line[0]
        else:
            allowed = game.threat_defences(state)
        if allowed:
            forced = np.zeros_like(policy)
            forced[list(allowed)] = 1.0
            policy = masked_policy(policy, forced)
        return sample_action(policy, 0.0 if self.selection == "greedy" else self.temperature, self.rng)

    def consider_swap(self, starting_player: int, moves: list[Action]) -> bool:
        """A policy-and-value network swaps when its value head prefers the swapped
        position; a policy network alone cannot judge, and never swaps."""
        if not has_role(self.net, POLICY_VALUE):
            return False
        encode = getattr(self.net, "encode", self.game.encode)
        return swap_pays(self.game, starting_player, moves,
                         lambda state: float(self.net.evaluate(encode(state)[None])[1].reshape(-1)[0]))


def swap_pays(game: Game, starting_player: int, moves: list[Action], win_estimate: Callable[[State], float]) -> bool:
    """Whether the player to move after ``moves`` does better by swapping, by
    ``win_estimate(state)`` (the expected result for the player to move there, 1 a win):
    answering leaves them to move; after the swap their opponent moves."""
    answer = win_estimate(game.state_after(moves, starting_player))
    swapped_start, swapped_moves = game.swapped(starting_player, moves)
    return 1.0 - win_estimate(game.state_after(swapped_moves, swapped_start)) > answer


ACTOR_KINDS = {"random": RandomActor, "mcts": MCTSActor, "human": HumanActor}

#: what ``make_actor`` accepts with a model path
MODEL_ACTOR_PARAMS = (
    "search_games", "time_limit", "c", "seed", "tree_policy", "epsilon", "selection", "temperature", "policy_params",
    "value_weight", "playouts", "engine",
)


def registered_actor_kind(spec: Any) -> tuple[type, str] | None:
    """(class, argument) for a spec ``NAME:ARGUMENT`` whose NAME is a registered actor
    kind (``gtp:gnugo --mode gtp``), else None."""
    if not isinstance(spec, str) or ":" not in spec:
        return None
    from hexzero.mctsfw import default_registries

    name, argument = spec.split(":", 1)
    actors = default_registries().actors
    return (actors.get(name), argument) if name in actors else None


def actor_spec_problem(spec: Any) -> str | None:
    """None for a player spec ``make_actor`` can build (as far as can be told before
    loading anything), else why not."""
    if spec in ACTOR_KINDS or registered_actor_kind(spec) or is_model_path(spec):
        return None
    from hexzero.mctsfw import default_registries

    prefixes = "".join(f", {name}:..." for name in default_registries().actors.names())
    return f"must be human, random, mcts{prefixes} or the path of a saved model (.keras), not {spec!r}"


def is_model_path(spec: Any) -> bool:
    """Whether an actor spec names a saved model: an existing file or a ``.keras`` name."""
    if not isinstance(spec, (str, os.PathLike)) or spec in ACTOR_KINDS or registered_actor_kind(spec):
        return False
    path = Path(spec)
    return path.suffix == ".keras" or path.is_file()


def make_actor(spec: str | os.PathLike, game: Game, **params) -> Actor:
    """An agent for ``game``: a kind (``"random"``, ``"mcts"``, ``"human"``) or a saved model's path.

    - ``random`` takes ``seed`` (other parameters are ignored);
    - ``mcts`` takes ``search_games``, ``time_limit`` (seconds), ``c``, ``seed``,
      ``tree_policy``, ``policy_params`` (more tree-policy parameters) and ``temperature``
      (0: the most visited move; > 0: drawn with probability ~ visits ** (1/temperature),
      ``mctsfw.sampling.sample_action``; a temperature that is not a finite number >= 0
      raises ValueError saying so);
    - a model path (an existing file, or any name ending in ``.keras``) is loaded by the
      registered net that recognises it (``mctsfw.checkpoints.load_net``; a missing,
      broken or mismatched file raises ``ModelFileError``). With ``search_games=0`` (the
      default) the raw network plays: ``selection="greedy"`` (its most probable legal
      move) or ``"sample"``, seeded by ``seed``. With ``search_games > 0`` (or a
      ``time_limit``) it searches, judging leaves by the net's role: a policy network
      (ANET) by its rollouts (UCT by default), a random legal move with probability
      ``epsilon`` (default 0); a policy-and-value network by its value head, priors from
      its policy head (PUCT by default), mixed with random rollouts when ``value_weight``
      (lambda, also read from ``policy_params``) < 1 (``playouts="tactical"``: rollouts
      that take a win at once and stop the opponent's). Any ``tree_policy`` works with
      either. ``c`` (the tree policy's exploration constant), ``seed``,
      ``policy_params`` and ``temperature`` as for ``mcts``. Whatever of ``tree_policy``,
      ``policy_params``, ``value_weight`` and ``playouts`` is not given comes from the
      search settings the file carries (``mctsfw.checkpoints.play_settings``), so a
      network plays as its run or its report recorded it; a parameter given wins. The
      label is the file's stem, plus the tree policy and its budget when searching
      (``+puct(400)``, ``+uct(1s)``);
    - ``NAME:ARGUMENT`` where NAME is a registered actor kind (``mctsfw_register_actors``)
      is built by that class's ``from_spec(ARGUMENT, game, **params)``: ``gtp:COMMAND``
      starts the GTP engine COMMAND (``plugins/gtp.py``); it ignores search parameters.
    """
    registered = registered_actor_kind(spec)
    if registered:
        cls, argument = registered
        return cls.from_spec(argument, game, **params)
    if "temperature" in params:  # refused here for every kind, before anything is built or loaded
        params["temperature"] = check_temperature(params["temperature"])
    cls = ACTOR_KINDS.get(spec) if isinstance(spec, str) else None
    if cls is None:
        if is_model_path(spec):
            unknown = sorted(set(params) - set(MODEL_ACTOR_PARAMS))
            if unknown:
                raise ValueError(
                    f"unknown parameter(s) of a model actor: {', '.join(unknown)} (known: {', '.join(MODEL_ACTOR_PARAMS)})"
                )
            return model_actor(spec, game, **params)
        from hexzero.mctsfw import default_registries

        registered = default_registries().actors
        prefixes = "".join(f", or {name}:... ({registered.get(name).description or 'a registered kind'})"
                           for name in registered.names())
        raise ValueError(
            f"unknown actor {spec!r}; available: {', '.join(sorted(ACTOR_KINDS))}, "
            f"or the path of a saved model file (.keras){prefixes}"
        )
    if cls is RandomActor:
        params = {k: v for k, v in params.items() if k == "seed"}
    return cls(game, **params)


def model_actor(
    path: str | os.PathLike,
    game: Game,
    search_games: int | None = 0,
    time_limit: float | None = None,
    c: float | None = None,
    seed: int | None = None,
    tree_policy: str | None = None,
    epsilon: float = 0.0,
    selection: str = "greedy",
    temperature: float = 0.0,
    policy_params: dict[str, Any] | None = None,
    value_weight: float | None = None,
    playouts: str | None = None,
    engine: str = "auto",
) -> Actor:
    """The agent of a saved model (see ``make_actor``). The leaf evaluator follows the
    net's declared role: a policy-and-value net judges leaves with its value head (mixed
    with random rollouts, or tactical ones with ``playouts="tactical"``, when
    ``value_weight`` < 1; PUCT by default), a policy net with its rollouts (UCT by
    default). Any tree policy may be asked for. The search settings not given are the
    file's own (``net.play_settings``), where it carries them."""
    from hexzero.mctsfw.checkpoints import load_net

    problem = budget_problem(search_games or None, time_limit) if search_games or time_limit is not None else None
    if problem:
        raise ValueError(f"a model actor: {problem}")
    net = load_net(path, game)
    stem = Path(path).stem
    if not search_games and time_limit is None:  # temperature 0 (a search's "most visited") samples the policy itself
        actor: Actor = NetActor(game, net, selection=selection, seed=seed, temperature=temperature or 1.0)
        actor.label = stem if selection == "greedy" else f"{stem}(sample)"
        return actor
    saved = getattr(net, "play_settings", None) or {}
    tree_policy = tree_policy or saved.get("tree_policy")
    # the file's parameters are those of its own tree policy; the given ones win
    params = dict(saved.get("policy_params") or {}) if tree_policy == saved.get("tree_policy") else {}
    params.update(policy_params or {})
    playouts = playouts or saved.get("playouts", "random")
    weight = params.get("value_weight", 1.0) if value_weight is None else value_weight  # PUCT declares lambda
    if has_role(net, POLICY_VALUE):
        evaluator: LeafEvaluator = value_evaluator(game, net, weight, seed=seed, playouts=playouts,
                                                   random_symmetry=bool(params.get("random_symmetry", False)),
                                                   mean_symmetry=bool(params.get("mean_symmetry", False)))
        tree_policy = tree_policy or "puct"
    else:
        if weight != 1:
            raise ValueError(f"value_weight {weight!r} mixes a value head into rollouts; the {net.name} net has none")
        evaluator = NetRollouts(game, net, epsilon=epsilon, seed=seed)
        tree_policy = tree_policy or "uct"
    actor = MCTSActor(game, search_games or None, time_limit, c=c, seed=seed, tree_policy=tree_policy,
                      evaluator=evaluator, temperature=temperature, policy_params=params, engine=engine)
    actor.net = net
    actor.label = f"{stem}+{tree_policy}({search_games if search_games else f'{time_limit}s'})"
    return actor
