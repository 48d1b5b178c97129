"""NIM: players take turns removing stones from one pile.

Normal play: who takes the last stone wins; with ``misere = true`` who takes the
last stone loses. ``max_take`` caps the stones taken in one move (0: no cap).

An action is ``pile * cap + (take - 1)`` where ``cap`` is ``max_take`` or, without a
cap, the largest starting pile, so the action space is fixed. A state is the tuple
``(player_to_move, piles)``.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.game import Game, IllegalMoveError, compiled_module
from hexzero.mctsfw.schema import Parameters, Setting

NimState = tuple  # (player_to_move, (pile_0, pile_1, ...))

MAX_PILES, MAX_STONES = 10, 100


class Nim(Game):
    name = "nim"
    description = "NIM with one or more piles, an optional cap per move, normal or misère play"

    #: bounds that keep a game drawable and searchable: at most MAX_PILES piles of MAX_STONES
    #: stones, so at most 1,000 actions and games of at most 1,000 moves (a pile is drawn as
    #: one mark per stone; the action space is piles x the largest take)
    parameters = Parameters(
        Setting("piles", [3, 4, 5], "stones in each pile at the start",
                items=Setting("pile", 1, "stones", low=1, high=MAX_STONES), min_items=1, max_items=MAX_PILES),
        Setting("max_take", 0, "most stones taken in one move; 0 = no cap", low=0, high=MAX_STONES),
        Setting("misere", False, "true: who takes the last stone loses"),
    )

    def __init__(self, piles: list[int] | tuple[int, ...] = parameters.default("piles"),
                 max_take: int = parameters.default("max_take"), misere: bool = parameters.default("misere")):
        problems = self.param_problems({"piles": piles, "max_take": max_take, "misere": misere})
        if problems:
            raise ValueError("; ".join(problems))
        self.piles = tuple(int(p) for p in piles)
        self.max_take = int(max_take)
        self.misere = bool(misere)
        self.cap = self.max_take or max(self.piles)
        self.num_actions = len(self.piles) * self.cap
        self.move_help = (
            f"the pile (1-{len(self.piles)}) and how many stones to take"
            + (f" (at most {self.max_take})" if self.max_take else "")
            + ", like '2 3'"
        )

    def params(self) -> dict[str, Any]:
        return {"piles": list(self.piles), "max_take": self.max_take, "misere": self.misere}

    def kernels(self):
        """The compiled kernels of the array search (``games.nim_kernels``; None without numba)."""
        module = compiled_module("hexzero.games.nim_kernels")
        return None if module is None else module.NimKernels(self)

    # ---- the rules ------------------------------------------------------------------------
    def initial_state(self, starting_player: int = 1) -> NimState:
        if starting_player not in (1, 2):
            raise ValueError(f"starting_player is 1 or 2, not {starting_player!r}")
        return (starting_player, self.piles)

    def current_player(self, state: NimState) -> int:
        return state[0]

    def action(self, pile: int, take: int) -> int:
        return pile * self.cap + take - 1

    def legal_actions(self, state: NimState) -> list[int]:
        cap = self.cap
        return [i * cap + t for i, p in enumerate(state[1]) for t in range(min(p, cap))]

    def next_state(self, state: NimState, action: int) -> NimState:
        self.check_legal(state, action)
        pile, take = divmod(int(action), self.cap)
        piles = list(state[1])
        piles[pile] -= take + 1
        return (3 - state[0], tuple(piles))

    def check_legal(self, state: NimState, action: int) -> None:
        if self.is_final(state):
            raise IllegalMoveError(f"the game is over: player {self.winner(state)} has won")
        if not (isinstance(action, (int, np.integer)) and 0 <= action < self.num_actions):
            raise IllegalMoveError(f"action {action!r} is not in 0..{self.num_actions - 1}")
        pile, take = divmod(int(action), self.cap)
        take += 1
        if take > state[1][pile]:
            raise IllegalMoveError(f"pile {pile + 1} has {state[1][pile]} stones; cannot take {take}")

    def is_final(self, state: NimState) -> bool:
        return not any(state[1])

    def winner(self, state: NimState) -> int | None:
        if any(state[1]):
            return None
        # the player to move faces an empty table: the other player took the last stone
        last_taker = 3 - state[0]
        return 3 - last_taker if self.misere else last_taker

    def playout(self, state: NimState, rng: random.Random, choose=None) -> int | None:
        """The base class's random playout without a list of moves and a legality check a
        move: each (pile, stones) move is drawn with the same chance as there."""
        if choose is not None:
            return super().playout(state, rng, choose)
        player, piles, cap = state[0], list(state[1]), self.cap
        moves = [min(p, cap) for p in piles]  # the moves each pile offers
        total = sum(moves)
        while total:
            k = int(rng.random() * total)
            pile = 0
            while k >= moves[pile]:
                k -= moves[pile]
                pile += 1
            piles[pile] -= k + 1
            total -= moves[pile]
            moves[pile] = min(piles[pile], cap)
            total += moves[pile]
            player = 3 - player
        return self.winner((player, tuple(piles)))

    def encode(self, state: NimState) -> np.ndarray:
        """Each pile's size divided by its starting size, then two bits for who moves."""
        out = np.zeros(len(self.piles) + 2, dtype=np.float32)
        out[: len(self.piles)] = np.divide(state[1], self.piles)
        out[len(self.piles) + state[0] - 1] = 1.0
        return out

    # ---- people ----------------------------------------------------------------------------
    def action_to_text(self, action: int, state: NimState | None = None) -> str:
        pile, take = divmod(int(action), self.cap)
        return f"take {take + 1} from pile {pile + 1}"

    def parse_action(self, text: str, state: NimState) -> int:
        match = re.fullmatch(r"\s*(\d+)[\s,:]+(\d+)\s*", text)
        if not match:
            raise IllegalMoveError(f"cannot read {text!r}: type {self.move_help}")
        pile, take = int(match.group(1)), int(match.group(2))
        if not 1 <= pile <= len(self.piles):
            raise IllegalMoveError(f"there is no pile {pile}: piles are numbered 1 to {len(self.piles)}")
        if take < 1:
            raise IllegalMoveError("take at least one stone")
        if self.max_take and take > self.max_take:
            raise IllegalMoveError(f"at most {self.max_take} stones may be taken in one move")
        if take > state[1][pile - 1]:
            raise IllegalMoveError(f"pile {pile} has only {state[1][pile - 1]} stones")
        action = self.action(pile - 1, take)
        self.check_legal(state, action)
        return action

    def render(self, state: NimState) -> str:
        width = max(self.piles)
        lines = [f"pile {i + 1}: {'o ' * p}{'. ' * (width - p)} ({p})" for i, p in enumerate(state[1])]
        rule = "who takes the last stone loses" if self.misere else "who takes the last stone wins"
        cap = f", at most {self.max_take} a move" if self.max_take else ""
        lines.append(f"({rule}{cap})")
        if self.is_final(state):
            lines.append(f"player {self.winner(state)} has won")
        else:
            lines.append(f"player {state[0]} to move")
        return "\n".join(lines)


@mctsfw.hookimpl
def mctsfw_register_games():
    return [Nim]


@mctsfw.hookimpl
def mctsfw_board_svg(game, state, last_action, heat):
    """The piles as rows of stones: a click on a stone takes it and every stone to its right
    (when the cap allows that many); the heat marks sit on the first stone a move takes."""
    if not isinstance(game, Nim):
        return None
    from hexzero.mctsfw import svg

    step, margin = 34.0, 20.0
    label = 70.0
    width = label + margin + step * max(game.piles)
    height = 2 * margin + step * len(game.piles)
    body, centres = [], {}
    for i, (start, left) in enumerate(zip(game.piles, state[1])):
        y = margin + (i + 0.5) * step
        body.append(f'<text {svg.attrs(x=margin, y=f"{y + 5:.1f}", font_size=14)}>pile {i + 1}</text>')
        for k in range(start):
            x = label + (k + 0.5) * step
            if k >= left:  # taken
                body.append(f'<circle {svg.attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=4, fill="#bbbbbb")}/>')
                continue
            body.append(svg.stone(x, y, step * 0.38, "#8c6d46"))
            take = left - k
            if take <= game.cap:
                action = game.action(i, take)
                centres[action] = (x, y)
                body.append(f'<circle {svg.attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{step * 0.45:.1f}", fill="transparent", class_="cell", data_action=action)}/>')
    # heat marks let clicks through (pointer-events none), so they may lie over the targets
    return svg.document(width, height, body + svg.heat_layer(heat, centres, step * 0.38), "NIM")
