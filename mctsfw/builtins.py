"""The modules that make up the built-in plugins.

They register through the same hooks as third-party plugins; this list is the one
place where the core names them, by module path only (it never imports them itself).
"""

BUILTIN_PLUGINS = [
    "hexzero.mctsfw.training",  # declares [train]
    "hexzero.mctsfw.selfplay",  # declares [selfplay]
    "hexzero.mctsfw.imitation",  # declares [imitate]
    "hexzero.mctsfw.distill",  # declares [distill]
    "hexzero.games.hex",
    "hexzero.games.nim",
    "hexzero.games.connect4",
    "hexzero.games.gomoku",
    "hexzero.games.go",
    "hexzero.nets.anet",
    "hexzero.nets.twohead",
    "hexzero.plugins.uct",
    "hexzero.plugins.puct",
    "hexzero.plugins.rave",
    "hexzero.plugins.gumbel",
    "hexzero.plugins.display",
    "hexzero.plugins.gif",
    "hexzero.plugins.topp",
    "hexzero.plugins.gtp",
    "hexzero.plugins.pbrain",  # the Gomocup brain protocol: cli.py pbrain, pbrain:COMMAND players
    "hexzero.plugins.mohex",  # MoHex 2.0 (benzene) as a player: mohex:SIMULATIONS
    "hexzero.plugins.pachi",  # Pachi (no network) as a Go player: pachi:PLAYOUTS
    "hexzero.plugins.rapfi",  # Rapfi, a Gomocup brain, as a player: rapfi:NODES
    "hexzero.plugins.openspiel",  # OpenSpiel's MCTS as an opponent (the differential extra)
    "hexzero.plugins.web",  # declares [serve]; the web board of cli.py serve
]
