"""Built-in game plugins: one module per game, each a ``mctsfw.Game`` subclass."""

if __name__ != "hexzero.games":  # in a checkout the folder is also importable as plain games: one copy only
    raise ImportError("games is part of hexzero: import hexzero.games")
