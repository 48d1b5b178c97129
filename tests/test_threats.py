"""Threats declared by the games (``Game.forcing_actions``) agree with brute force by the
game's own rules, in positions reached by random play (games/gomoku.py, connect4.py, hex.py)."""

import random

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.game import Forcing

GAMES = {
    "gomoku 9x9": ("gomoku", {"size": 9}),
    "gomoku 15x15": ("gomoku", {"size": 15}),
    "gomoku exactly five": ("gomoku", {"size": 9, "exactly_five": True}),
    "gomoku connect 4": ("gomoku", {"size": 7, "connect": 4}),
    "connect4": ("connect4", {}),
    "connect4 5x4": ("connect4", {"rows": 4, "columns": 5}),
    "hex 3x3": ("hex", {"size": 3}),
    "hex 5x5": ("hex", {"size": 5}),
    "hex 7x7": ("hex", {"size": 7}),
}


def brute_forcing(game, state) -> Forcing | None:
    """What ``forcing_actions`` must say, by trying every move with ``next_state``: the moves
    that win now; else the moves that the opponent, were it their turn, would win with."""
    player = game.current_player(state)
    legal = game.legal_actions(state)
    wins = [a for a in legal if game.winner(game.next_state(state, a)) == player]
    if wins:
        return Forcing(tuple(sorted(wins)), True)
    passed = (3 - player, *state[1:])  # the same stones, the opponent to move
    blocks = [a for a in legal if game.winner(game.next_state(passed, a)) == 3 - player]
    return Forcing(tuple(sorted(blocks)), False) if blocks else None


def positions(game, games, seed):
    rng = random.Random(seed)
    for _ in range(games):
        state = game.initial_state(rng.choice([1, 2]))
        while not game.is_final(state):
            yield state
            state = game.next_state(state, rng.choice(game.legal_actions(state)))


@pytest.mark.parametrize("name", GAMES)
def test_forcing_actions_agree_with_brute_force(name):
    game_name, params = GAMES[name]
    game = mctsfw.make_game(game_name, **params)
    seen = {True: 0, False: 0, None: 0}
    for state in positions(game, 40, seed=hash(name) % 1000):
        declared = game.forcing_actions(state)
        assert declared == brute_forcing(game, state), game.render(state)
        seen[None if declared is None else declared.wins] += 1
    assert all(seen.values()), seen  # each kind met: wins, blocks and quiet positions


def test_a_game_that_declares_no_threats_says_none():
    nim = mctsfw.make_game("nim", piles=[1, 2])
    assert nim.forcing_actions(nim.initial_state()) is None


# ---- Gomoku's threat-space search: victory by continuous fours (Gomoku.forced_win) -------------------
def quiet_gomoku_positions(game, count, seed):
    """Positions of random play near the centre where nobody can complete a line at once
    (where ``forced_win`` applies)."""
    rng = random.Random(seed)
    centre = game.size // 2
    found = 0
    while found < count:
        state = game.initial_state()
        for _ in range(rng.randint(6, 50)):
            if game.is_final(state):
                break
            near = [a for a in game.legal_actions(state)
                    if abs(a // game.size - centre) <= 4 and abs(a % game.size - centre) <= 4]
            state = game.next_state(state, rng.choice(near or game.legal_actions(state)))
        if not game.is_final(state) and game.forcing_actions(state) is None:
            found += 1
            yield state


def wins_at_once(game, state) -> bool:
    return any(game.winner(game.next_state(state, a)) == game.current_player(state) for a in game.legal_actions(state))


def wins_against_every_reply(game, state, line) -> bool:
    """Brute force: the winner's moves of ``line`` win whatever the defender plays: every
    reply but the line's leaves a win at once, the line's reply wins nothing, and after the
    last move every reply leaves a win at once."""
    attacker = game.current_player(state)
    for i in range(0, len(line), 2):
        state = game.next_state(state, line[i])
        for reply in game.legal_actions(state):
            after = game.next_state(state, reply)
            if game.winner(after) == 3 - attacker:
                return False
            if (i + 1 == len(line) or reply != line[i + 1]) and (game.is_final(after) or not wins_at_once(game, after)):
                return False
        if i + 1 < len(line):
            state = game.next_state(state, line[i + 1])
    return True


@pytest.mark.parametrize("size", [9, 15])
def test_four_cells_are_the_cells_that_make_a_line_completable(size):
    game = mctsfw.make_game("gomoku", size=size)
    for state in quiet_gomoku_positions(game, 60, seed=size):
        player, ones, twos, _, _ = state
        own, other = (ones, twos) if player == 1 else (twos, ones)
        empty = game.full & ~(ones | twos)
        brute = sum(b for b in game._bits(empty) if game.completing_cells(own | b, empty & ~b))
        assert game.four_cells(own, other, empty) == brute, game.render(state)


def test_every_victory_by_continuous_fours_wins_against_every_reply():
    game = mctsfw.make_game("gomoku", size=15)
    lines = [line for state in quiet_gomoku_positions(game, 150, seed=3) if (line := game.forced_win(state))
             and wins_against_every_reply(game, state, line) or (line and pytest.fail(game.render(state)))]
    assert len(lines) >= 20 and any(len(line) >= 3 for line in lines)  # some longer than one move


@pytest.mark.parametrize("size,budget", [(9, 200), (15, 200), (15, 12), (20, 200)])
def test_the_compiled_threat_search_gives_the_python_ones_answers(size, budget):
    """``games/gomoku_threats`` (numba) against the search on the bitboards
    (``Gomoku.continuous_fours``, ``continuous_threats``, ``threat_defences``): the same
    line (or none) by fours and by threes in every position, also where the budget of
    positions cuts the search short (the same positions counted in the same order), and
    the same answers to every three."""
    from hexzero.games.gomoku import compiled_threats, python_threats

    assert compiled_threats() is not None, "numba is a dependency (pyproject.toml): the compiled search must load"
    game = mctsfw.make_game("gomoku", size=size)
    states = list(quiet_gomoku_positions(game, 150, seed=size + budget))
    def answers(state):
        return (game.forced_win(state, positions=budget), game.threat_defences(state),
                game.forced_win(state, positions=budget, three_positions=budget))

    compiled = [answers(state) for state in states]
    with python_threats():
        reference = [answers(state) for state in states]
    assert compiled == reference
    lines = [line for line, _, _ in compiled if line is not None]
    assert len(lines) >= 20 and any(len(line) >= 5 for line in lines)
    assert sum(defences is not None for _, defences, _ in compiled) >= 10
    by_threes = [thorough for line, _, thorough in compiled if line is None and thorough is not None]
    if budget >= 200:  # (12 positions find none)
        assert any(len(line) >= 3 for line in by_threes)  # wins by threes the fours missed, longer than a move


def test_the_wins_in_three_are_all_found_in_one_move():
    """Every position brute force calls a win in 3 (a move after which every reply leaves
    a win at once) has a one-move victory by fours, one of the position's solutions."""
    from hexzero.mctsfw.tactics import collect, play_positions, random_players

    game = mctsfw.make_game("gomoku", size=15)
    found = collect(game, play_positions(game, random_players(game), 200, seed=7), 15, kinds=("win in 3",))
    assert len(found["win in 3"]) == 15
    for tactic in found["win in 3"]:
        line = game.forced_win(tactic.state)
        assert line is not None and len(line) == 1 and line[0] in tactic.solutions, tactic.moves


def test_the_search_proves_a_victory_by_fours_at_once():
    """A position of random play with a victory by fours of two moves or more: the search
    proves the root with one simulation and plays the line's first move."""
    game = mctsfw.make_game("gomoku", size=15)
    line = None
    for state in quiet_gomoku_positions(game, 300, seed=11):
        line = game.forced_win(state)
        if line and len(line) >= 3:
            break
    assert line and len(line) >= 3
    mcts = mctsfw.MCTS(game, mctsfw.make_tree_policy("uct"), seed=1)
    root = mcts.search(state, search_games=1)
    assert root.proven == 0.0 and root.depth == len(line) + 2  # won for the player to move, in that many plies
    assert mcts.best_action(root) == line[0]
    assert mctsfw.make_actor("mcts", game, search_games=1, seed=1).select_action(state) == line[0]
    freestyle_only = mctsfw.make_game("gomoku", size=15, exactly_five=True)
    assert freestyle_only.forced_win(state) is None  # an overline may not win: no claim made


class PreferLowCells:
    """A stand-in policy net: probabilities falling with the cell number."""

    def __init__(self, num_actions):
        self.probs = np.linspace(1.0, 0.1, num_actions, dtype=np.float32)

    def forward(self, x):
        return np.tile(self.probs / self.probs.sum(), (len(x), 1))


# ---- Gomoku's threes: the defences against a threat of an open four (Gomoku.threat_defences) -------------
def every_reply_loses_at_once(game, state) -> bool:
    """Brute force on ``state`` (the defender to move): whatever it plays, the attacker
    then wins at once (``forcing_actions`` wins, checked against brute force above)."""
    defender = game.current_player(state)
    for reply in game.legal_actions(state):
        after = game.next_state(state, reply)
        if game.winner(after) == defender:
            return False
        forcing = None if game.is_final(after) else game.forcing_actions(after)
        if forcing is None or not forcing.wins:
            return False
    return True


def loses_to_a_threat(game, state, action) -> bool:
    """Brute force: after ``action`` the opponent has a move after which every reply loses."""
    after = game.next_state(state, action)
    return not game.is_final(after) and any(
        not game.is_final(threat := game.next_state(after, move)) and every_reply_loses_at_once(game, threat)
        for move in game.legal_actions(after))


@pytest.mark.parametrize("size, positions", [(9, 6), (15, 2)])
def test_threat_defences_are_the_moves_that_do_not_lose_to_a_three(size, positions):
    """Every move left out loses to the opponent's open four; every listed move that makes
    no four (a stop) leaves the opponent none, unless every move loses."""
    game = mctsfw.make_game("gomoku", size=size)
    checked = 0
    for state in quiet_gomoku_positions(game, 400, seed=20 + size):
        defences = game.threat_defences(state)
        if defences is None or game.forced_win(state):
            continue
        player, ones, twos, _, _ = state
        own, other = (ones, twos) if player == 1 else (twos, ones)
        fours = set(game._bits(game.four_cells(own, other, game.full & ~(ones | twos))))
        loses = {action: loses_to_a_threat(game, state, action) for action in game.legal_actions(state)}
        assert all(loses[action] for action in loses if action not in defences), game.render(state)
        stops = [action for action in defences if game.bit[action] not in fours]
        if not all(loses.values()):  # (where every move loses, the cells of the threats are listed)
            assert not any(loses[action] for action in stops), game.render(state)
        checked += 1
        if checked == positions:
            break
    assert checked == positions


def test_a_three_is_met_by_the_search_and_by_the_raw_network():
    """Facing an open three, the search expands only the defences (and, facing two that
    cross, the opponent's open-four cells, and proves the position lost); a raw network's
    move is one of them."""
    from hexzero.mctsfw.actors import NetActor

    game = mctsfw.make_game("gomoku", size=9)
    centre = 4 * 9 + 4
    # black: an open three across the centre row (.. X X X ..); white, to move: two stones in corners
    state = game.state_after([centre - 1, 0, centre, 8, centre + 1])
    defences = game.threat_defences(state)
    assert defences == (centre - 2, centre + 2)  # a far end does not hold: black plays the other side
    root = mctsfw.MCTS(game, mctsfw.make_tree_policy("uct"), seed=1).search(state, search_games=200)
    assert {child.action for child in root.children} == set(defences)
    assert NetActor(game, PreferLowCells(game.num_actions)).select_action(state) == centre - 2  # not cell 1
    # a second three, down the centre column, crossing the first: no defence holds
    double = game.state_after([centre - 1, 0, centre, 8, centre + 1, 72, centre - 9, 80, centre + 9])
    assert game.threat_defences(double) == (centre - 18, centre - 2, centre + 2, centre + 18)
    root = mctsfw.MCTS(game, mctsfw.make_tree_policy("uct"), seed=1).search(double, search_games=50)
    assert root.proven == 1.0 and root.depth == 4  # lost: the open four, a block, five
    assert {child.action for child in root.children} <= set(game.threat_defences(double))


# ---- Gomoku's victory by continuous threats, fours and threes (forced_win thorough) ----------------------
def attacker_keeps_a_win(game, state, attacker_moves: int = 8) -> bool:
    """Brute force over every reply: the attacker (to move) wins at once, or blocks the
    defender's four, or plays the first move of its thorough threat search (which must
    find one), and after each of the defender's legal replies does so again, till it wins."""
    forcing = game.forcing_actions(state)
    if forcing is not None and (forcing.wins or len(forcing.actions) > 1):
        return forcing.wins
    if attacker_moves == 0:
        return False
    move = forcing.actions[0] if forcing is not None else (game.forced_win(state, thorough=True) or [None])[0]
    if move is None:
        return False
    after = game.next_state(state, move)
    return all(not game.is_final(reply_state := game.next_state(after, reply))
               and attacker_keeps_a_win(game, reply_state, attacker_moves - 1)
               for reply in game.legal_actions(after))


def test_every_victory_by_threes_wins_against_every_defence():
    """Positions where fours alone do not win and the thorough search finds a victory by
    threes: the attacker wins against every reply, at every move."""
    game = mctsfw.make_game("gomoku", size=15)
    lines = []
    for state in quiet_gomoku_positions(game, 400, seed=8):
        if game.forced_win(state) is None and (line := game.forced_win(state, thorough=True)):
            lines.append(line)
            assert attacker_keeps_a_win(game, state), game.render(state)
            if len(lines) == 8:
                break
    assert len(lines) == 8 and any(len(line) >= 3 for line in lines)


def test_the_search_and_the_raw_network_play_a_victory_by_threes():
    """The thorough threat search runs once a move at the root: the search proves a win by
    threes with one simulation; a raw network plays its first move."""
    from hexzero.mctsfw.actors import NetActor

    game = mctsfw.make_game("gomoku", size=15)
    state = next(s for s in quiet_gomoku_positions(game, 400, seed=8)
                 if game.forced_win(s) is None and game.forced_win(s, thorough=True))
    line = game.forced_win(state, thorough=True)
    root = mctsfw.MCTS(game, mctsfw.make_tree_policy("uct"), seed=1).search(state, search_games=1)
    assert root.proven == 0.0 and root.depth == len(line) + 2
    assert mctsfw.make_actor("mcts", game, search_games=1, seed=1).select_action(state) == line[0]
    assert NetActor(game, PreferLowCells(game.num_actions)).select_action(state) == line[0]
