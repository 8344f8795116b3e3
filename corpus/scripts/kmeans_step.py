"""Lloyd's k-means: squared distances by broadcasting, labels by argmin, new centroids as the
masked means of each cluster, the inertia."""
import numpy as np

PRESETS = {"S": {"n": 1000, "k": 4, "steps": 3}, "L": {"n": 50_000, "k": 8, "steps": 3}}


def init(n, k, steps):
    rng = np.random.default_rng(41)
    centers = rng.uniform(-5, 5, (k, 2))
    x = centers[rng.integers(0, k, n)] + rng.standard_normal((n, 2))
    return x, x[:k].copy(), steps


def kernel(x, centroids, steps):
    k = centroids.shape[0]
    for _ in range(steps):
        d2 = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        labels = np.argmin(d2, axis=1)
        for j in range(k):
            members = x[labels == j]
            if members.shape[0] > 0:
                centroids[j] = members.mean(axis=0)
    inertia = d2.min(axis=1).sum()
    return labels, centroids, inertia
