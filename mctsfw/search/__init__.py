"""The search: the compiled array tree (``arrays``), what a game gives it (``kernels``) and its loop (``engine``)."""
