"""Conway's game of life on a torus: neighbour counts from np.roll, the rule in boolean logic,
a number of generations."""
import numpy as np

PRESETS = {"S": {"n": 64, "gens": 10}, "L": {"n": 1024, "gens": 10}}


def init(n, gens):
    rng = np.random.default_rng(67)
    return rng.random((n, n)) < 0.3, gens


def kernel(board, gens):
    for _ in range(gens):
        nb = sum(np.roll(np.roll(board, dy, axis=0), dx, axis=1).astype(np.uint8)
                 for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
        board = (nb == 3) | (board & (nb == 2))
    return board, board.sum()
