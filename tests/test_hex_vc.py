"""H-search (games/hex_vc.py) against the Hex solver: every connection it claims is real,
every must-play move set keeps every winning move, the templates a Hex player knows are
found, and a search with ``vc`` on plays what it proves."""

import pytest

from hexzero import mctsfw
from hexzero.games.hex_solver import HexSolver
from hexzero.games.hex_vc import CAPTURED, CAPTURED_BY_THEM, DEAD, connections
from hexzero.mctsfw.evaluators import RandomRollouts
from hexzero.mctsfw.search.array_search import array_problem
from tests.test_hex_solver import random_positions


@pytest.mark.parametrize("size, count, seed", [(4, 150, 0), (5, 120, 1)])
def test_claims_agree_with_perfect_play(size, count, seed):
    """A connection found for the player to move wins, and its first move keeps the win;
    a full connection of the opponent's loses; a move outside the must-play set loses.
    Each kind of claim is made often enough here to be tested."""
    game = mctsfw.make_game("hex", size=size, vc=True)
    solver = HexSolver(game)
    made = {"wins": 0, "lost": 0, "pruned": 0}
    for state in random_positions(game, count, 3, game.num_actions - 4, seed):
        line = game.forced_win(state)
        if line:
            made["wins"] += 1
            assert solver.wins(state), game.render(state)
            assert not solver.wins(game.next_state(state, line[0])), game.render(state)
        if connections(game, state, 3 - state[0]).sides("full"):
            made["lost"] += 1
            assert not solver.wins(state), game.render(state)
        must = game.threat_defences(state)
        if must is not None:
            for action in set(game.legal_actions(state)) - set(must):
                made["pruned"] += 1
                assert solver.wins(game.next_state(state, action)), (game.render(state), game.cell_name(action))
    assert min(made.values()) >= 20, made


def cell_names(game, cells):
    return sorted(game.cell_name(a) for a in cells)


@pytest.mark.parametrize("size, count, seed", [(4, 200, 2), (5, 200, 3)])
def test_filling_in_inferior_cells_keeps_the_winner(size, count, seed):
    """The board with every cell ``fill_in`` fills (dead ones as the opponent's, captured
    ones as their captor's) has the winner of the board as it is, for the player to move;
    each kind of cell is filled often enough here to be tested."""
    game = mctsfw.make_game("hex", size=size)
    solver = HexSolver(game)
    made = {DEAD: 0, CAPTURED: 0, CAPTURED_BY_THEM: 0}
    for state in random_positions(game, count, 3, game.num_actions - 3, seed):
        for player in (1, 2):
            found = connections(game, state, player)
            cells = {what: found.filled(what) for what in made}
            if not any(cells.values()):
                continue
            stones = [state[0], state[1], state[2], 0]
            stones[player] |= cells[CAPTURED]
            stones[3 - player] |= cells[DEAD] | cells[CAPTURED_BY_THEM]
            for what, bits in cells.items():
                made[what] += bits.bit_count()
            joined = [who for who in (1, 2) if game._connects(stones[who], who)]
            wins = joined == [state[0]] if joined else solver.wins(tuple(stones))
            assert wins == solver.wins(state), (game.render(state), player, cells)
    assert min(made.values()) >= 20, made


@pytest.mark.parametrize("size, count, seed, vc", [(4, 200, 4, False), (5, 150, 5, True)])
def test_pruning_the_filled_cells_keeps_a_winning_move(size, count, seed, vc):
    """With ``prune``, the moves a search keeps (``Hex.threat_defences``, else every empty
    cell) are some of those kept without it, and hold a winning move wherever the player
    to move wins; winning moves are left out often enough here to be tested."""
    game = mctsfw.make_game("hex", size=size, vc=vc, prune=True)
    plain = mctsfw.make_game("hex", size=size, vc=vc)
    solver = HexSolver(game)
    made = {"pruned": 0, "winning pruned": 0}
    for state in random_positions(game, count, 3, game.num_actions - 3, seed):
        before = set(plain.threat_defences(state) or game.legal_actions(state))
        kept = set(game.threat_defences(state) or game.legal_actions(state))
        assert kept and kept <= before
        made["pruned"] += len(before - kept)
        winning = set(solver.winning_moves(state))
        if winning:
            assert kept & winning, (game.render(state), cell_names(game, kept), cell_names(game, winning))
            made["winning pruned"] += len(winning - kept)
    assert min(made.values()) >= 20, made


def test_the_bridge_to_the_side_is_filled_in():
    """The two cells between a second-row stone and its side are captured: an intrusion
    into one is answered in the other. Filled in, the stone is on its side."""
    game = mctsfw.make_game("hex", size=9)
    cell = game.parse_action("e2", game.initial_state(1))
    found = connections(game, game.next_state(game.initial_state(1), cell), 1)
    assert cell_names(game, game_bits(found.filled(CAPTURED))) == ["e1", "f1"]
    assert found.point(cell) == found.START


def test_the_edge_templates_a_player_knows():
    """A stone on the second row holds the bridge to its side (two cells), one on the third
    row the ziggurat (eight cells, on either side), one on the fourth row a template of 19
    cells: H-search finds them without filling in. Each carrier found is checked by the
    solver: the stone joined to the far side by a column of stones, every cell outside the
    carrier the opponent's, the opponent to move still loses."""
    game = mctsfw.make_game("hex", size=9)
    empty = game.initial_state(1)
    for row, carriers in ((2, [["e1", "f1"]]),
                          (3, [["d1", "d2", "d3", "e1", "e2", "f1", "f2", "g1"],
                               ["e1", "e2", "f1", "f2", "f3", "g1", "g2", "h1"]]),
                          (4, [])):
        cell = game.parse_action(f"e{row}", empty)
        found = connections(game, game.next_state(empty, cell), 1, fill=False)
        held = found.between(found.START, found.point(cell), "full")
        assert held and all(carrier in [cell_names(game, game_bits(c)) for c in held] for carrier in carriers)
        column = sum(1 << (r * 9 + 4) for r in range(row - 1, 9))
        for carrier in held:
            assert not HexSolver(game).wins((2, column, game.full & ~column & ~carrier, 0)), \
                cell_names(game, game_bits(carrier))


def game_bits(carrier):
    return [a for a in range(carrier.bit_length()) if carrier >> a & 1]


def test_a_search_with_vc_proves_a_ziggurat_win_pairing_cannot():
    """On 5x5 a stone of player 1's on c3 holds a ziggurat to each side (one of them still
    after player 2's b2): a win for player 1 to move that no chain of bridges and
    second-row templates shows. With ``vc`` the game's threat search proves it, and a
    search of 8 games (on the array tree) plays a move that keeps it."""
    for vc in (False, True):
        game = mctsfw.make_game("hex", size=5, vc=vc, pairing=True)
        state = game.initial_state(1)
        for name in ("c3", "b2"):
            state = game.next_state(state, game.parse_action(name, state))
        assert (game.forced_win(state) is not None) == vc
    solver = HexSolver(game)
    assert solver.wins(state) and not solver.wins(game.next_state(state, game.forced_win(state)[0]))
    assert array_problem(game, mctsfw.make_tree_policy("uct"), RandomRollouts(game)) is None
    agent = mctsfw.make_actor("mcts", game, search_games=8, seed=0)
    assert not solver.wins(game.next_state(state, agent.select_action(state)))


def test_the_setting_is_named_in_the_game_only_when_on():
    assert mctsfw.make_game("hex", size=7).params() == {"size": 7}
    assert mctsfw.make_game("hex", size=7, vc=True).params() == {"size": 7, "vc": True}
    assert mctsfw.make_game("hex", size=7, prune=True).params() == {"size": 7, "prune": True}
