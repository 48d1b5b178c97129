"""Tic-tac-toe as a hexzero game plugin: the complete example of docs/plugins.md."""

import numpy as np

from hexzero import mctsfw

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class TicTacToe(mctsfw.Game):
    name = "tictactoe"
    description = "noughts and crosses on 3x3 (an example plugin)"
    num_actions = 9
    move_help = "a cell number 0-8, row by row"

    # a state: (player_to_move, cells) with cells a tuple of 0 (empty), 1 or 2
    def initial_state(self, starting_player=1):
        return (starting_player, (0,) * 9)

    def current_player(self, state):
        return state[0]

    def legal_actions(self, state):
        return [] if self.is_final(state) else [a for a in range(9) if state[1][a] == 0]

    def next_state(self, state, action):
        if action not in self.legal_actions(state):
            raise mctsfw.IllegalMoveError(f"cell {action} is taken or off the board, or the game is over")
        cells = list(state[1])
        cells[action] = state[0]
        return (3 - state[0], tuple(cells))

    def winner(self, state):
        cells = state[1]
        for a, b, c in LINES:
            if cells[a] and cells[a] == cells[b] == cells[c]:
                return cells[a]
        return None

    def is_final(self, state):
        return self.winner(state) is not None or all(state[1])  # a full board is a draw

    def encode(self, state):
        cells = np.array(state[1])
        return np.concatenate([cells == 1, cells == 2, [state[0] == 1, state[0] == 2]]).astype(np.float32)

    def render(self, state):
        marks = ".XO"
        rows = [" ".join(marks[v] for v in state[1][r * 3 : r * 3 + 3]) for r in range(3)]
        return "\n".join(rows)


@mctsfw.hookimpl
def mctsfw_register_games():
    return [TicTacToe]
