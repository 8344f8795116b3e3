"""Gravitational n-body: all pairwise accelerations by broadcasting (n, n, 3) differences, a few
leapfrog steps, the kinetic energy."""
import numpy as np

PRESETS = {"S": {"n": 64, "steps": 3}, "L": {"n": 400, "steps": 3}}


def init(n, steps):
    rng = np.random.default_rng(37)
    return rng.standard_normal((n, 3)), 0.1 * rng.standard_normal((n, 3)), rng.random(n) + 0.5, steps


def accel(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d**2).sum(axis=2) + 0.01
    inv3 = r2 ** -1.5
    return (d * (mass[None, :] * inv3)[:, :, None]).sum(axis=1)


def kernel(pos, vel, mass, steps):
    dt = 0.01
    a = accel(pos, mass)
    for _ in range(steps):
        vel = vel + 0.5 * dt * a
        pos = pos + dt * vel
        a = accel(pos, mass)
        vel = vel + 0.5 * dt * a
    kinetic = 0.5 * (mass * (vel**2).sum(axis=1)).sum()
    return pos, vel, kinetic
