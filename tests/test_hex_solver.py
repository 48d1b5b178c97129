"""The Hex solver (games/hex_solver.py) against plain minimax: the same verdicts and the
same winning moves on 3x3 and 4x4 positions, and the known winning openings."""

import random

import pytest

from hexzero import mctsfw
from hexzero.games.hex_solver import HexSolver


def minimax(game, state, memo):
    """Whether the player to move wins, by trying every move to the end."""
    if state not in memo:
        if game.is_final(state):
            memo[state] = game.winner(state) == game.current_player(state)
        else:
            memo[state] = any(not minimax(game, game.next_state(state, a), memo) for a in game.legal_actions(state))
    return memo[state]


def random_positions(game, count, fewest, most, seed):
    """Unfinished positions after ``fewest``..``most`` random moves, either player first."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        state = game.initial_state(rng.choice((1, 2)))
        for _ in range(rng.randint(fewest, most)):
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
            if game.is_final(state):
                break
        if not game.is_final(state):
            found.append(state)
    return found


@pytest.mark.parametrize("size, count, fewest, seed", [(3, 120, 0, 0), (4, 60, 5, 1)])
def test_verdicts_and_winning_moves_agree_with_minimax(size, count, fewest, seed):
    game = mctsfw.make_game("hex", size=size)
    memo = {}
    for state in random_positions(game, count, fewest, size * size - 1, seed):
        solver = HexSolver(game)  # a fresh table: each verdict is searched, not remembered
        expected = [a for a in game.legal_actions(state) if not minimax(game, game.next_state(state, a), memo)]
        assert solver.wins(state) == minimax(game, state, memo), game.render(state)
        assert sorted(solver.winning_moves(state)) == expected, game.render(state)
        move = solver.winning_move(state)
        assert move in expected if expected else move is None


def test_winning_openings_on_small_boards():
    """The first player wins 3x3 and 4x4 Hex; on 4x4 only the short diagonal wins. Player
    2 joins the other pair of sides: their winning openings are player 1's reflected in the
    long diagonal (a3 for c1)."""
    for size, openings in ((3, ["c1", "a2", "b2", "c2", "a3"]), (4, ["d1", "c2", "b3", "a4"])):
        game = mctsfw.make_game("hex", size=size)
        solver = HexSolver(game)
        reflected = [f"{chr(ord('a') + int(name[1:]) - 1)}{ord(name[0]) - ord('a') + 1}" for name in openings]
        for player, expected in ((1, openings), (2, reflected)):
            state = game.initial_state(player)
            assert solver.wins(state)
            assert sorted(game.cell_name(a) for a in solver.winning_moves(state)) == sorted(expected)


def test_finished_games_and_one_move_wins():
    game = mctsfw.make_game("hex", size=5)
    solver = HexSolver(game)
    state = game.initial_state(1)
    for action in (0, 1, 5, 6, 10, 11, 15, 16):  # player 1 holds a1..a4, player 2 b1..b4
        state = game.next_state(state, action)
    assert solver.wins(state) and 20 in solver.winning_moves(state)  # a5 joins player 1's column
    won = game.next_state(state, 20)
    assert game.winner(won) == 1 and not solver.wins(won) and solver.winning_moves(won) == []


def test_the_pie_rule_is_refused():
    with pytest.raises(ValueError, match="pie rule"):
        HexSolver(mctsfw.make_game("hex", size=4, swap=True))


def test_the_perfect_play_benchmark_scores_moves_by_the_solver():
    """benchmarks/hex_perfect.py: a perfect agent keeps every won position it meets; a
    random one lets some slip, and wins fewer games."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from hex_perfect import kept_share

    from hexzero.mctsfw.actors import Actor, RandomActor

    game = mctsfw.make_game("hex", size=4)
    solver = HexSolver(game)

    class Perfect(Actor):
        def select_action(self, state):
            move = solver.winning_move(state)
            return random.choice(game.legal_actions(state)) if move is None else move

    perfect = kept_share(Perfect(game), game, solver, games=30, opening=4, seed=0)
    won = sum(n for n, _ in perfect["counts"].values())
    assert won > 20 and all(n == kept for n, kept in perfect["counts"].values())
    randomly = kept_share(RandomActor(game, seed=0), game, solver, games=30, opening=4, seed=0)
    assert sum(kept for _, kept in randomly["counts"].values()) < sum(n for n, _ in randomly["counts"].values())
    assert sum(randomly["results"].values()) == 30 and randomly["results"]["wins"] < perfect["results"]["wins"]


def _blunders():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import hex_blunders

    return hex_blunders


class _OurSolver:
    """``hex_blunders.Solver``'s answer from games/hex_solver.py: the winner of a position."""

    def __init__(self, game):
        self.solver = HexSolver(game)

    def winner(self, game, starter, moves):
        state = game.initial_state(starter)
        for action in moves:
            state = game.next_state(state, action)
        mover = game.current_player(state)
        return mover if self.solver.wins(state) else 3 - mover


def test_the_blunder_benchmark_finds_the_move_that_lost_a_won_position():
    """benchmarks/hex_blunders.py: each move from a solved position says whether its mover
    stood won and kept it; a won position thrown away is a slip at its stone count."""
    blunders = _blunders()
    game = mctsfw.make_game("hex", size=4)
    solver = HexSolver(game)
    rng = random.Random(3)
    state, moves = game.initial_state(1), []
    while not game.is_final(state):  # player 1 perfect until 6 stones, then at random; player 2 perfect
        perfect = game.current_player(state) == 2 or len(moves) < 6
        move = solver.winning_move(state) if perfect else None
        moves.append(rng.choice(game.legal_actions(state)) if move is None else move)
        state = game.next_state(state, moves[-1])
    winners = blunders.judged_game(game, _OurSolver(game), 1, moves, 0)
    found = blunders.slips(game, 1, moves, 0, winners)
    assert [m["stones"] for m in found] == list(range(len(moves)))
    assert [m["mover"] for m in found] == [1 + i % 2 for i in range(len(moves))]
    assert found[0]["won"]  # the empty 4x4 board is won for the player to move
    for i, move in enumerate(found):
        before = game.initial_state(1)
        for action in moves[:i]:
            before = game.next_state(before, action)
        after = game.next_state(before, moves[i])
        assert move["won"] == solver.wins(before)
        assert move["kept"] == (game.winner(after) == move["mover"] if game.is_final(after) else not solver.wins(after))
    slipped = [m for m in found if m["won"] and not m["kept"]]
    assert slipped and all(m["mover"] == 1 and m["stones"] >= 6 for m in slipped)  # only the random player's
    assert game.winner(state) == 2

    # --positions: the slips tried again, a perfect agent keeping each, one that throws wins away none
    from hexzero.mctsfw.actors import Actor

    class Perfect(Actor):
        def select_action(self, state):
            return solver.winning_move(state)

    class Careless(Actor):
        def select_action(self, state):
            return next(a for a in game.legal_actions(state) if a not in solver.winning_moves(state))

    data = {"games": [{"starting_player": 1, "moves": moves, "opening": 0, "network": 1, "winners": winners}]}
    positions = blunders.won_positions(game, data, every=False)
    assert [len(before) for _, before, _ in positions] == [m["stones"] for m in slipped]
    assert len(blunders.won_positions(game, data, every=True)) == sum(m["mover"] == 1 and m["won"] for m in found)
    assert blunders.retried(game, Perfect(game), _OurSolver(game), positions) == [True] * len(positions)
    assert blunders.retried(game, Careless(game), _OurSolver(game), positions) == [False] * len(positions)


@pytest.mark.skipif(_blunders().find_mohex() is None, reason="MoHex is not built (scripts/build_mohex.sh)")
def test_mohex_solver_agrees_with_ours():
    """MoHex's DFPN, the judge of benchmarks/hex_blunders.py, against games/hex_solver.py on
    random 5x5 positions: the same winner every time."""
    blunders = _blunders()
    game = mctsfw.make_game("hex", size=5)
    ours = _OurSolver(game)
    mohex = blunders.Solver(blunders.find_mohex(), 5, 5.0)
    rng = random.Random(0)
    try:
        for _ in range(12):
            state, moves = game.initial_state(1), []
            for _ in range(rng.randint(0, 8)):
                moves.append(rng.choice(game.legal_actions(state)))
                state = game.next_state(state, moves[-1])
            if game.is_final(state):
                continue
            assert mohex.winner(game, 1, moves) == ours.winner(game, 1, moves), moves
    finally:
        mohex.close()


def test_the_blunder_benchmark_refuses_a_file_that_is_not_its_games(tmp_path):
    blunders = _blunders()
    game = mctsfw.make_game("hex", size=9)
    cases = {"missing.json": None, "text.json": "moves", "other.json": '{"runs": []}',
             "size.json": '{"size": 11, "games": []}'}
    messages = {"missing.json": "No such file", "text.json": "not JSON",
                "other.json": "not the games hex_blunders.py --json writes", "size.json": "games of 11x11 Hex, not 9x9"}
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match=messages[name]):
            blunders.games_file(str(tmp_path / name), game)
    (tmp_path / "good.json").write_text('{"size": 9, "games": []}')
    assert blunders.games_file(str(tmp_path / "good.json"), game)["games"] == []
