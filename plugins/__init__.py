"""Built-in non-game plugins: tree policies, displays, evaluators, the OHT adapter."""
