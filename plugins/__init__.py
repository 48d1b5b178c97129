"""Built-in non-game plugins: tree policies, displays, evaluators, the OHT adapter."""

if __name__ != "hexzero.plugins":  # in a checkout the folder is also importable as plain plugins: one copy only
    raise ImportError("plugins is part of hexzero: import hexzero.plugins")
