"""Built-in game plugins: one module per game, each a ``mctsfw.Game`` subclass."""
