"""Go rules: captures, suicide, ko and positional superko, area scoring, passes and the
cut-off, move text, symmetries and planes, playouts, refused moves.

Positions are reached through ``next_state`` only (``setup`` places the stones of each
colour by moves, the other side passing when it has no stone left to place). A naive
Tromp-Taylor scorer on a 2D grid is the reference the bitboard scoring is held to.
"""

import random

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import IllegalMoveError


@pytest.fixture(scope="module")
def go9():
    return mctsfw.make_game("go", size=9)


@pytest.fixture(scope="module")
def go5():
    return mctsfw.make_game("go", size=5)


def setup(game, black, white, to_move=1):
    """The state with the stones ``black`` and ``white`` (vertices like "C3"), placed by
    alternating moves from the empty board (a side out of stones passes; no two passes in
    a row), then one pass if needed so that ``to_move`` moves."""
    state = game.initial_state()
    black, white = list(black), list(white)
    while black or white:
        for stones in (black, white):
            action = game.text_to_action(stones.pop(0)) if stones else game.pass_action
            state = game.next_state(state, action)
    if game.current_player(state) != to_move:
        state = game.next_state(state, game.pass_action)
    assert not game.is_final(state)
    return state


def stones(game, state, colour):
    """The vertices holding ``colour``'s stones, sorted."""
    board = game.board(state).reshape(-1)
    return sorted(game.action_to_text(a) for a in range(game.pass_action) if board[a] == colour)


def play(game, state, *moves):
    for text in moves:
        state = game.next_state(state, game.parse_action(text, state))
    return state


# ---- numbering and text ---------------------------------------------------------------------
def test_actions_are_numbered_from_a1_at_the_bottom(go9):
    assert go9.num_actions == 82 and go9.pass_action == 81
    assert go9.text_to_action("A1") == 0
    assert go9.text_to_action("J1") == 8  # the letters skip I
    assert go9.text_to_action("A2") == 9
    assert go9.text_to_action("J9") == 80
    assert go9.text_to_action("pass") == go9.text_to_action("PASS") == 81
    assert go9.text_to_action("3 2") == 29 and go9.action_to_text(29) == "C4"
    assert go9.grid_cell(0) == (8, 0) and go9.grid_cell(80) == (0, 8) and go9.grid_cell(81) is None
    go19 = mctsfw.make_game("go", size=19)
    assert go19.text_to_action("T19") == 360 and go19.action_to_text(360) == "T19"
    for game in (go9, go19, mctsfw.make_game("go", size=13)):
        for a in range(game.num_actions):
            text = game.action_to_text(a)
            assert "I" not in text
            assert game.text_to_action(text) == game.text_to_action(text.lower()) == a
            cell = game.grid_cell(a)
            if cell is not None:
                assert game.grid_action(*cell) == a


@pytest.mark.parametrize("text, reason", [
    ("I5", "skip the letter I"), ("K1", "off the 9x9 board"), ("A10", "off the 9x9 board"),
    ("A0", "off the 9x9 board"), ("9 0", "off the 9x9 board"), ("hello", "cannot read"), ("", "cannot read"),
])
def test_unreadable_or_off_board_text_is_refused(go9, text, reason):
    with pytest.raises(IllegalMoveError, match=reason):
        go9.parse_action(text, go9.initial_state())


def test_illegal_moves_are_refused_with_a_reason_and_the_state_is_unchanged(go5):
    state = setup(go5, ["C3"], ["A2", "B1"])
    before = tuple(state)
    for text, reason in [("C3", "C3 is already occupied"), ("A1", "A1 is suicide")]:
        with pytest.raises(IllegalMoveError, match=reason):
            go5.parse_action(text, state)
        with pytest.raises(IllegalMoveError, match=reason):
            go5.next_state(state, go5.text_to_action(text))
    for action in (-1, 26, 2.0, True, "3"):
        with pytest.raises(IllegalMoveError, match="off the 5x5 board"):
            go5.next_state(state, action)
    assert tuple(state) == before
    assert go5.legal_actions(state) == [a for a in range(26) if a not in (0, 1, 5, 12)]


# ---- captures and suicide ---------------------------------------------------------------------
def test_a_surrounded_stone_is_captured(go9):
    state = setup(go9, ["D5", "E6", "F5"], ["E5"])
    state = play(go9, state, "E4")
    assert stones(go9, state, 2) == [] and stones(go9, state, 1) == ["D5", "E4", "E6", "F5"]
    assert go9.board(state)[4, 4] == 0  # E5 is empty again


def test_corner_and_group_captures(go9):
    state = setup(go9, ["B1"], ["A1"])
    state = play(go9, state, "A2")  # A1 has lost its last liberty
    assert stones(go9, state, 2) == [] and stones(go9, state, 1) == ["A2", "B1"]
    # a group of three on the edge, captured by its last liberty
    state = setup(go9, ["C1", "C2", "D3", "E3", "F1"], ["D1", "D2", "E2", "E1"])
    state = play(go9, state, "F2")
    assert stones(go9, state, 2) == []
    assert stones(go9, state, 1) == ["C1", "C2", "D3", "E3", "F1", "F2"]


def test_one_move_captures_two_groups(go9):
    # white A1 and white C1 each have their last liberty at B1
    state = setup(go9, ["A2", "C2", "D1"], ["A1", "C1"])
    state = play(go9, state, "B1")
    assert stones(go9, state, 2) == []
    assert stones(go9, state, 1) == ["A2", "B1", "C2", "D1"]


def test_suicide_is_illegal_but_taking_the_last_liberty_with_a_capture_is_not(go9):
    # A1 for black: no liberty, captures nothing -> suicide
    state = setup(go9, ["E5"], ["A2", "B1"])
    with pytest.raises(IllegalMoveError, match="suicide"):
        go9.next_state(state, 0)
    assert 0 not in go9.legal_actions(state)
    # a group suicide: black B1+A1 with white around
    state = setup(go9, ["B1"], ["A2", "B2", "C1"])
    with pytest.raises(IllegalMoveError, match="suicide"):
        play(go9, state, "A1")
    # the same point is legal when it captures: white A2 is in atari with B2 black... below
    state = setup(go9, ["B2", "A3", "E5"], ["A2", "B1"])
    state = play(go9, state, "A1")  # takes A2's last liberty: A2 is captured, A1 lives
    assert stones(go9, state, 2) == ["B1"] and "A1" in stones(go9, state, 1)


# ---- ko and superko ----------------------------------------------------------------------------
KO_BLACK = ["C4", "D5", "D3"]  # around D4, with E4 the contested point of white's stone
KO_WHITE = ["E5", "E3", "F4", "D4"]


def test_a_ko_cannot_be_retaken_at_once_but_after_a_threat_elsewhere(go9):
    state = setup(go9, KO_BLACK, KO_WHITE)
    state = play(go9, state, "E4")  # black takes D4
    assert "D4" not in stones(go9, state, 2)
    with pytest.raises(IllegalMoveError, match="repeat an earlier whole-board position"):
        play(go9, state, "D4")
    assert go9.text_to_action("D4") not in go9.legal_actions(state)
    state = play(go9, state, "A9", "J1")  # elsewhere, both
    state = play(go9, state, "D4")  # the board differs from every earlier one now
    assert "E4" not in stones(go9, state, 1) and "D4" in stones(go9, state, 2)


def test_positional_superko_beyond_simple_ko(go9):
    """Two kos: black takes the first, white the second, black passes, white retakes the
    first; black retaking the second would bring back the board of five moves before
    (not the one just before white's move, so simple ko does not catch it)."""
    # ko 1 around D4/E4 on rows 3-5 (white holds D4); ko 2, the same shape on rows 6-8,
    # around D7/E7 (black holds E7: white takes it by D7, black takes back by E7)
    black = KO_BLACK + ["C7", "D8", "D6", "E7"]
    white = KO_WHITE + ["E8", "E6", "F7"]
    start = setup(go9, black, white)
    state = play(go9, start, "E4", "D7")  # black takes D4; white takes E7
    state = play(go9, state, "pass", "D4")  # black passes; white takes E4 back (a new board)
    with pytest.raises(IllegalMoveError, match="positional superko"):
        play(go9, state, "E7")  # would take D7 and restore the board of `start`
    assert go9.text_to_action("E7") not in go9.legal_actions(state)
    # the same capture is legal where the board it makes is new
    state = play(go9, start, "E4", "D7", "A9", "J1", "E7")
    assert "D7" not in stones(go9, state, 2) and "E7" in stones(go9, state, 1)


# ---- scoring -----------------------------------------------------------------------------------
def naive_area_score(grid, komi):
    """Tromp-Taylor on grid[r][c] (0 empty, 1 black, 2 white): each colour's stones plus the
    empty regions whose border holds only that colour; black minus white minus komi."""
    n = len(grid)
    area = {1: 0, 2: 0}
    seen = set()
    for r in range(n):
        for c in range(n):
            if grid[r][c]:
                area[grid[r][c]] += 1
            elif (r, c) not in seen:
                region, border, todo = [], set(), [(r, c)]
                seen.add((r, c))
                while todo:
                    rr, cc = todo.pop()
                    region.append((rr, cc))
                    for nr, nc in ((rr + 1, cc), (rr - 1, cc), (rr, cc + 1), (rr, cc - 1)):
                        if 0 <= nr < n and 0 <= nc < n:
                            if grid[nr][nc]:
                                border.add(grid[nr][nc])
                            elif (nr, nc) not in seen:
                                seen.add((nr, nc))
                                todo.append((nr, nc))
                if len(border) == 1:
                    area[border.pop()] += len(region)
    return area[1] - area[2] - komi


def test_area_scoring_by_hand(go5):
    assert go5.score(go5.initial_state()) == -7.5  # nobody's area
    assert go5.score(setup(go5, ["C3"], [])) == 25 - 7.5  # one stone owns the board
    wall = setup(go5, ["C1", "C2", "C3", "C4", "C5"], ["D1", "D2", "D3", "D4", "D5"])
    assert go5.areas(wall) == (15, 10) and go5.score(wall) == -2.5
    # a neutral column between the walls counts for nobody
    dame = setup(go5, ["B1", "B2", "B3", "B4", "B5"], ["D1", "D2", "D3", "D4", "D5"])
    assert go5.areas(dame) == (10, 10) and go5.score(dame) == -7.5
    half = mctsfw.make_game("go", size=5, komi=0.5)
    assert half.score(wall) == 4.5


def test_scoring_agrees_with_a_naive_count_on_random_positions(go9):
    rng = random.Random(3)
    for _ in range(40):
        state = go9.initial_state()
        for _ in range(rng.randrange(0, 140)):
            if go9.is_final(state):
                break
            state = go9.next_state(state, rng.choice(go9.legal_actions(state)[:-1] or [go9.pass_action]))
        grid = go9.board(state).tolist()
        assert go9.score(state) == naive_area_score(grid, 7.5)


# ---- the end: passes and the cut-off -------------------------------------------------------------
def test_two_passes_in_a_row_end_the_game_and_the_score_decides(go5):
    state = setup(go5, ["C1", "C2", "C3", "C4", "C5"], ["D1", "D2", "D3", "D4", "D5"])
    state = play(go5, state, "pass")
    assert not go5.is_final(state) and go5.winner(state) is None
    state = play(go5, state, "E5", "pass")  # a stone between the passes: they are not in a row
    assert not go5.is_final(state)
    state = play(go5, state, "pass")
    assert go5.is_final(state) and go5.legal_actions(state) == []
    assert go5.winner(state) == 2  # 15 - 10 - 7.5
    with pytest.raises(IllegalMoveError, match="the game is over \\(both players passed\\)"):
        go5.parse_action("B1", state)
    assert "game over" in go5.render(state) and "W+2.5" in go5.render(state)


def test_the_cut_off_scores_the_position_as_it_stands(go5):
    game = mctsfw.make_game("go", size=5, max_moves=3)
    state = play(game, game.initial_state(), "C3", "pass", "D4")
    assert game.is_final(state) and game.winner(state) == 1  # 25 - 0 - 7.5
    with pytest.raises(IllegalMoveError, match="cut-off of 3 moves"):
        game.next_state(state, game.pass_action)
    assert go5.max_moves == 50 and mctsfw.make_game("go", size=19).max_moves == 722


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="size"):
        mctsfw.make_game("go", size=4)
    with pytest.raises(ValueError, match="size"):
        mctsfw.make_game("go", size=20)
    game = mctsfw.make_game("go", size=13, komi=6.5, max_moves=400, history=5)
    assert game.params() == {"size": 13, "komi": 6.5, "max_moves": 400, "history": 5}
    assert game.num_actions == 170 and game.max_moves == 400


# ---- networks: planes, flat encoding, symmetries --------------------------------------------------
def random_game(game, rng, length):
    state = game.initial_state()
    states = [state]
    for _ in range(length):
        if game.is_final(state):
            break
        legal = game.legal_actions(state)
        state = game.next_state(state, rng.choice(legal[:-1]) if len(legal) > 1 else legal[0])
        states.append(state)
    return states


def test_planes_hold_t_past_positions_of_each_colour_and_the_colour_to_move():
    game = mctsfw.make_game("go", size=9, history=2)
    states = random_game(game, random.Random(5), 30)
    assert game.encode_planes(states[0]).shape == (9, 9, 7)
    for k in (0, 1, 2, 5, 30):
        state = states[k]
        planes = game.encode_planes(state)
        player = game.current_player(state)
        for t in range(3):
            board = game.board(states[k - t]) if k - t >= 0 else np.zeros((9, 9))
            assert np.array_equal(planes[:, :, t], board == player)
            assert np.array_equal(planes[:, :, 3 + t], board == 3 - player)
        assert np.all(planes[:, :, 6] == (1.0 if player == 1 else 0.0))
    flat = game.encode(states[5])
    assert flat.shape == (164,) and flat[162:].tolist() == ([0, 1] if game.current_player(states[5]) == 2 else [1, 0])


@pytest.mark.parametrize("planes", [True, False])
def test_each_symmetry_is_the_encoding_of_the_transformed_game(go9, planes):
    """A symmetry maps every point to another; playing the mapped moves gives the mapped
    encoding, and the target moves with the points, its pass entry fixed."""
    rng = random.Random(7)
    states = random_game(go9, rng, 25)
    moves = states[-1][4]
    encode = go9.encode_planes if planes else go9.encode
    x = encode(states[-1])
    index = np.arange(go9.num_actions, dtype=np.float64)  # target[a] = a: shows where each point goes
    cases = go9.symmetries(x, index)
    assert len(cases) == 8 and cases[0][0] is x
    seen = set()
    for xx, tt in cases:
        assert tt[go9.pass_action] == go9.pass_action
        to_new = {int(old): new for new, old in enumerate(tt)}
        mapped = [to_new[a] for a in moves]
        assert np.array_equal(xx, encode(go9.state_after(mapped)))
        seen.add(tuple(tt))
    assert len(seen) == 8


# ---- playouts -----------------------------------------------------------------------------------
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
@pytest.mark.parametrize("size", [5, 9, 13])
def test_playouts_end_are_legal_and_never_fill_their_own_eyes(size, compiled):
    game = mctsfw.make_game("go", size=size)
    rng = random.Random(size)
    winners = set()
    playout = game.random_moves if compiled else game.random_moves_reference
    for k in range(12 if size < 13 else 3):
        start = random_game(game, rng, k)[-1]
        moves, winner = playout(start, rng)
        state = start
        for action in moves:
            if action != game.pass_action:
                assert not game.is_own_eye(state, action)
            else:  # a pass only when nothing but eyes is left
                assert all(game.is_own_eye(state, a) for a in game.legal_actions(state)[:-1])
            state = game.next_state(state, action)
        assert game.is_final(state) and game.winner(state) == winner
        assert len(moves) <= game.max_moves
        winners.add(winner)
        assert game.playout(start, random.Random(k)) in (1, 2)
    if size < 13:
        assert winners == {1, 2}


class Feed:
    """A ``random.Random`` stand-in whose ``random()`` gives the numbers of an array in turn."""

    def __init__(self, numbers):
        self.numbers = iter(numbers)

    def random(self):
        return next(self.numbers)


@pytest.mark.parametrize("size", [5, 7, 9])
def test_the_compiled_playout_plays_the_reference_moves_for_the_same_random_numbers(size):
    """The compiled playout (games/go_playout.py) against the Python reference: from
    positions along random games (captures, kos and superko come up in their playouts),
    the same random numbers give the same moves and the same winner."""
    from hexzero.games.go import playout_kernel

    assert playout_kernel() is not None, "numba is a dependency: the compiled playout should load"
    game = mctsfw.make_game("go", size=size)
    rng = random.Random(size)
    compared = 0
    for trial in range(120):
        start = random_game(game, rng, rng.randrange(0, 3 * size * size // 4))[-1]
        if game.is_final(start):
            continue
        numbers = np.random.default_rng(trial).random(50_000)
        assert game.random_moves_compiled(start, np.uint64(trial), numbers) == \
            game.random_moves_reference(start, Feed(numbers)), f"trial {trial}"
        compared += 1
    assert compared > 60


@pytest.mark.parametrize("size", [5, 9, 13])
def test_the_compiled_legal_points_are_the_reference_moves(size):
    """``legal_actions`` (the compiled kernel) against ``legal_actions_reference`` (Python
    on the bitboards) at every position of random games, where suicides, captures, kos
    and superko come up."""
    game = mctsfw.make_game("go", size=size)
    rng = random.Random(size)
    refused = 0  # positions where an empty point is not legal: suicide or a repeated board
    for _ in range(12 if size < 13 else 3):
        for state in random_game(game, rng, 3 * size * size):
            if game.is_final(state):
                continue
            legal = game.legal_actions(state)
            assert legal == game.legal_actions_reference(state), game.render(state)
            refused += len(legal) - 1 < size * size - bin(state[1] | state[2]).count("1")
    assert refused > 10


def test_own_eyes_and_false_eyes(go9):
    # black's eye at A1 (B1, A2 black; B2 diagonal empty): an eye for black, not for white
    state = setup(go9, ["B1", "A2"], ["E5"])
    assert go9.is_own_eye(state, 0, 1) and not go9.is_own_eye(state, 0, 2)
    # on the edge one opponent stone on the diagonal makes it false
    state = setup(go9, ["B1", "A2"], ["B2"])
    assert not go9.is_own_eye(state, 0, 1)
    # in the middle one diagonal opponent is allowed, two are not
    around = ["D5", "F5", "E4", "E6"]
    assert go9.is_own_eye(setup(go9, around, ["D4"]), go9.text_to_action("E5"), 1)
    assert not go9.is_own_eye(setup(go9, around, ["D4", "F6"]), go9.text_to_action("E5"), 1)


def test_render_labels_columns_without_i_and_marks_the_last_stone(go9):
    state = play(go9, go9.initial_state(), "D4", "J9")
    picture = go9.render(state)
    lines = picture.splitlines()
    assert lines[0].split() == list("ABCDEFGHJ") and lines[10].split() == list("ABCDEFGHJ")
    assert lines[1].startswith("  9") and lines[9].startswith("  1")
    assert "(O)" in lines[1] and " X " in lines[6]  # J9 the last stone, D4 on row 4
    assert "player 1 (X, black) to move" in lines[-1]


# ---- states -------------------------------------------------------------------------------------
def test_legal_actions_are_exactly_the_moves_next_state_accepts(go5):
    """On long random 5x5 games (many captures, kos and repetitions), the fast listing
    agrees with trying every action, superko refusals included."""
    rng = random.Random(11)
    refused = set()
    for _ in range(15):
        state = go5.initial_state()
        while not go5.is_final(state):
            accepted = []
            for a in range(go5.num_actions):
                try:
                    go5.next_state(state, a)
                    accepted.append(a)
                except IllegalMoveError as error:
                    refused.add(str(error).split(" ", 1)[1].split(":")[0].split(" (")[0])
            assert go5.legal_actions(state) == accepted
            state = go5.next_state(state, go_move(rng, accepted, go5.pass_action))
    assert {"is already occupied", "is suicide", "would repeat an earlier whole-board position"} <= refused


def go_move(rng, legal, pass_action):
    points = [a for a in legal if a != pass_action]
    return rng.choice(points) if points and rng.random() > 0.03 else pass_action


def test_states_are_immutable_values_rebuilt_from_their_moves():
    game = mctsfw.make_game("go", size=9, history=1)
    states = random_game(game, random.Random(2), 60)
    last = states[-1]
    again = game.state_after(last[4])
    assert again == last and hash(again) == hash(last)
    assert len({*states}) == len(states)
    white_first = game.next_state(game.initial_state(2), game.text_to_action("E5"))
    assert game.current_player(white_first) == 1 and stones(game, white_first, 2) == ["E5"]
    with pytest.raises(ValueError, match="starting_player"):
        game.initial_state(3)


def test_states_between_captures_share_their_set_of_earlier_boards(go9):
    """``seen`` (the boards that may come back) is a new set only after a capture."""
    states = random_game(go9, random.Random(4), 150)
    captures = sum(1 for before, after in zip(states, states[1:])
                   if (before[1] | before[2]) & ~(after[1] | after[2]))
    assert captures > 0
    assert len({id(state[6]) for state in states}) == captures + 1


def test_a_search_passes_only_after_the_opponent_passed(go9):
    from hexzero.mctsfw.actors import make_actor

    start = go9.initial_state(1)
    assert go9.pass_action in go9.legal_actions(start)  # the rules allow it ...
    assert go9.search_actions(start) == go9.legal_actions(start)[:-1]  # ... a search does not consider it
    after_pass = go9.next_state(start, go9.pass_action)
    assert go9.search_actions(after_pass) == go9.legal_actions(after_pass)  # answering a pass may pass
    player = make_actor("mcts", go9, search_games=50, seed=0)
    state = start
    for _ in range(6):
        action = player.select_action(state)
        assert action != go9.pass_action
        state = go9.next_state(state, action)
