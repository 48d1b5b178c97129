"""The gif display: one frame per shown state, Hex drawn as a diamond, any game as text."""

from PIL import Image

from hexzero import mctsfw
from hexzero.mctsfw.match import play_game
from hexzero.plugins.gif import GifDisplay, hex_frame_size, winning_chain


def agents(game, seed=0):
    return {1: mctsfw.make_actor("mcts", game, search_games=30, seed=seed),
            2: mctsfw.make_actor("random", game, seed=seed + 1)}


def frames_of(path):
    with Image.open(path) as image:
        sizes = []
        for k in range(image.n_frames):
            image.seek(k)
            sizes.append(image.size)
        return image.n_frames, set(sizes), image.info.get("loop")


def test_the_gif_display_is_registered():
    assert mctsfw.default_registries().displays.get("gif") is GifDisplay


def test_a_hex_game_has_one_frame_per_state(tmp_path):
    game = mctsfw.make_game("hex", size=4)
    gif = GifDisplay(title="mcts vs random")
    record = play_game(game, agents(game), display=gif)
    path = gif.save(tmp_path / "hex.gif")
    count, sizes, loop = frames_of(path)
    assert count == len(record.states) == len(record.actions) + 1
    assert sizes == {hex_frame_size(4)}
    assert loop == 0  # loops forever
    assert hex_frame_size(7)[1] > hex_frame_size(4)[1]


def test_hex_frames_show_stones_sides_and_the_last_move():
    game = mctsfw.make_game("hex", size=4)
    gif = GifDisplay()
    play_game(game, agents(game, seed=3), display=gif)
    first, last = gif.frames()[0], gif.frames()[-1]
    colours = lambda im: {c for _, c in im.getcolors(1 << 16)}
    # the empty board already shows both players' side colours; the end shows both stone colours
    assert (214, 39, 40) in colours(first) and (31, 119, 180) in colours(first)
    assert (255, 200, 0) in colours(last)  # the winning chain is outlined
    assert first.tobytes() != last.tobytes()


def test_winning_chain_finds_the_connecting_group():
    # 3x3: player 1 joins row 0 to row 2 down column b; player 2's two stones touch one side only
    cells = [0, 1, 0,
             0, 1, 0,
             2, 1, 2]
    assert winning_chain(3, cells, 1) == {1, 4, 7}
    assert winning_chain(3, cells, 2) == set()


def test_a_nim_game_is_drawn_as_text(tmp_path):
    game = mctsfw.make_game("nim", piles=[2, 3])
    gif = GifDisplay()
    record = play_game(game, agents(game), display=gif)
    count, sizes, _ = frames_of(gif.save(tmp_path / "nim.gif"))
    assert count == len(record.states)
    assert len(sizes) == 1  # every frame padded to one size


def test_a_new_game_starts_a_new_recording_and_a_path_saves_at_the_end(tmp_path):
    game = mctsfw.make_game("hex", size=3)
    gif = GifDisplay(path=tmp_path / "auto.gif")
    play_game(game, agents(game), display=gif)
    second = play_game(game, agents(game, seed=5), display=gif)
    assert gif.num_frames == len(second.states)
    assert frames_of(tmp_path / "auto.gif")[0] == len(second.states)
    assert [p.name for p in tmp_path.iterdir()] == ["auto.gif"]  # no temporary file left behind


def test_go_is_drawn_as_stones_with_row_1_at_the_bottom(tmp_path):
    game = mctsfw.make_game("go", size=5, max_moves=12)
    gif = GifDisplay()
    record = play_game(game, {1: mctsfw.make_actor("random", game, seed=1),
                              2: mctsfw.make_actor("random", game, seed=2)}, display=gif)
    count, sizes, _ = frames_of(gif.save(tmp_path / "go.gif"))
    assert count == len(record.states) and len(sizes) == 1
    from hexzero.plugins.gif import draw_go
    state = game.next_state(game.initial_state(), game.text_to_action("A1"))
    image = draw_go(game, state, game.text_to_action("A1"), 1, 1)
    black = [(x, y) for y in range(image.height) for x in range(image.width)
             if image.getpixel((x, y)) == (20, 20, 20)]
    red = [(x, y) for y in range(image.height) for x in range(image.width)
           if image.getpixel((x, y)) == (214, 39, 40)]
    assert black and red  # the stone, and the dot of the last move on it
    ys = [y for _, y in black]
    xs = [x for x, _ in black]
    board_ys = [y for y in range(image.height) if image.getpixel((image.width // 2, y)) == (222, 184, 122)]
    assert min(ys) > (min(board_ys) + max(board_ys)) / 2  # A1 in the lower half
    assert max(xs) < image.width / 2  # and on the left
