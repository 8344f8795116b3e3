"""Log-sum-exp with the max trick, a float32 softmax and the cross-entropy of labelled rows."""
import numpy as np

PRESETS = {"S": {"n": 1000, "k": 10}, "L": {"n": 20_000, "k": 100}}


def init(n, k):
    rng = np.random.default_rng(31)
    return (3 * rng.standard_normal((n, k))).astype(np.float32), rng.integers(0, k, n)


def kernel(logits, labels):
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    e = np.exp(logits - m)
    probs = e / e.sum(axis=1, keepdims=True)
    logp = logits - lse[:, None]
    loss = -logp[np.arange(logits.shape[0]), labels].mean()
    return lse, probs, loss
