"""Keras network plugins (the ANET policy MLP) and their fast numpy inference paths."""
