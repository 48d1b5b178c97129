"""Keras network plugins (the ANET policy MLP) and their fast numpy inference paths."""

if __name__ != "hexzero.nets":  # in a checkout the folder is also importable as plain nets: one copy only
    raise ImportError("nets is part of hexzero: import hexzero.nets")
