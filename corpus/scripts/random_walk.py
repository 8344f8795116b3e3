"""Random walks drawn with np.random inside the script: final positions, farthest excursions and
how many walkers ever went past a barrier."""
import numpy as np

PRESETS = {"S": {"walkers": 100, "steps": 200}, "L": {"walkers": 2000, "steps": 2000}}


def init(walkers, steps):
    return walkers, steps


def kernel(walkers, steps):
    rng = np.random.default_rng(7)
    moves = rng.choice(np.array([-1, 1]), size=(walkers, steps))
    pos = np.cumsum(moves, axis=1)
    farthest = np.abs(pos).max(axis=1)
    crossed = np.any(pos >= 20, axis=1).sum()
    return pos[:, -1], farthest, crossed
