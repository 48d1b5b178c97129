"""The modules that make up the built-in plugins.

They register through the same hooks as third-party plugins; this list is the one
place where the core names them, by module path only (it never imports them itself).
"""

BUILTIN_PLUGINS = [
    "mctsfw.training",  # declares [train]
    "mctsfw.selfplay",  # declares [selfplay]
    "mctsfw.imitation",  # declares [imitate]
    "games.hex",
    "games.nim",
    "games.connect4",
    "games.gomoku",
    "games.go",
    "nets.anet",
    "nets.twohead",
    "plugins.uct",
    "plugins.puct",
    "plugins.rave",
    "plugins.gumbel",
    "plugins.display",
    "plugins.gif",
    "plugins.topp",
    "plugins.gtp",
    "plugins.pbrain",  # the Gomocup brain protocol: cli.py pbrain, pbrain:COMMAND players
    "plugins.openspiel",  # OpenSpiel's MCTS as an opponent (the differential extra)
    "plugins.web",  # declares [serve]; the web board of cli.py serve
]
