"""``la.random`` (issue 17, item 2): NumPy's streams on the CPU, LazyArray results that fuse
with what follows, NumPy's errors, writes into arrays (``shuffle``)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers import assert_same

import lazyarr as la

DRAWS = [
    ("random", (5,), {}), ("random", ((2, 3),), {"dtype": np.float32}),
    ("standard_normal", (7,), {}), ("normal", (1.5, 2.0, (3, 2)), {}),
    ("uniform", (-1, 1), {"size": 4}), ("integers", (0, 10, 6), {}),
    ("integers", (5,), {"size": (2, 2), "dtype": np.int8}), ("exponential", (2.0, 3), {}),
    ("binomial", (10, 0.3, 5), {}), ("poisson", (4.0, 5), {}), ("choice", (10, 4), {}),
    ("choice", ([1.5, 2.5, 3.5],), {"size": 5, "p": [0.2, 0.3, 0.5]}),
    ("permutation", (8,), {}), ("gamma", (2.0,), {"size": 3}), ("beta", (2.0, 3.0, 3), {}),
    ("standard_normal", ((),), {}), ("random", (0,), {}),
]


@pytest.mark.parametrize("method, args, kwargs", DRAWS, ids=lambda v: str(v)[:24])
def test_generator_draws_numpys_stream(method, args, kwargs, mode):
    got = getattr(la.random.default_rng(1234), method)(*args, **kwargs)
    want = getattr(np.random.default_rng(1234), method)(*args, **kwargs)
    assert isinstance(got, la.LazyArray) and got.is_materialized
    assert_same(got, want)


def test_a_stream_continues_across_calls_and_scalars_are_numpys():
    rng, ref = la.random.default_rng(7), np.random.default_rng(7)
    for _ in range(3):
        assert_same(rng.random(4), ref.random(4))
    value = rng.random()                        # NumPy: a Python float, drawn from the stream
    assert type(value) is float and value == ref.random()
    assert int(rng.integers(100)) == int(ref.integers(100))
    assert_same(rng.normal(size=3), ref.normal(size=3))


def test_draws_fuse_with_what_follows():
    # Monte Carlo pi: the draws are computed arrays, the test and the mean one fused kernel
    n = 100_000
    rng, ref = la.random.default_rng(0), np.random.default_rng(0)
    inside = rng.random(n) ** 2 + rng.random(n) ** 2 < 1
    assert not inside.is_materialized
    assert len(la.explain(inside).kernels) == 1
    u, v = ref.random(n), ref.random(n)
    assert float(la.mean(inside)) == float(np.mean(u ** 2 + v ** 2 < 1))


def test_legacy_functions_are_numpys_global_stream():
    la.random.seed(3)
    got = [la.random.rand(3), la.random.randn(2, 2), la.random.randint(0, 5, 4),
           la.random.normal(0, 2, 3), la.random.uniform(size=2)]
    np.random.seed(3)
    want = [np.random.rand(3), np.random.randn(2, 2), np.random.randint(0, 5, 4),
            np.random.normal(0, 2, 3), np.random.uniform(size=2)]
    for g, w in zip(got, want):
        assert_same(g, w)


def test_shuffle_writes_into_the_array_as_numpy():
    x = la.arange(10.0)
    view = x[2:5]
    before = x * 1                               # pending: keeps the values it read
    la.random.default_rng(5).shuffle(x)
    a = np.arange(10.0)
    np.random.default_rng(5).shuffle(a)
    assert_same(x, a)
    assert_same(view, a[2:5])
    assert_same(before, np.arange(10.0))


def test_array_arguments_and_generators_as_seeds():
    x = la.arange(6) * 2                         # pending: computed first
    assert_same(la.random.default_rng(9).choice(x, 3), np.random.default_rng(9).choice(np.arange(6) * 2, 3))
    assert_same(la.random.default_rng(9).permutation(x), np.random.default_rng(9).permutation(np.arange(6) * 2))
    rng = la.random.default_rng(np.random.default_rng(11))
    assert_same(rng.random(3), np.random.default_rng(11).random(3))
    assert la.random.default_rng(rng) is rng


@pytest.mark.parametrize("call, error", [
    (lambda r: r.normal(0, -1.0), ValueError), (lambda r: r.integers(5, 2), ValueError),
    (lambda r: r.choice(3, 5, replace=False), ValueError), (lambda r: r.random(-1), ValueError),
    (lambda r: r.random(dtype=np.int8), TypeError), (lambda r: r.not_a_method, AttributeError),
])
def test_bad_arguments_raise_numpys_errors(call, error):
    with pytest.raises(error):
        call(la.random.default_rng(0))
    with pytest.raises(error):
        call(np.random.default_rng(0))


def test_generator_pickles_with_its_state():
    rng = la.random.default_rng(21)
    rng.random(3)
    copy = pickle.loads(pickle.dumps(rng))
    assert_same(copy.random(4), rng.random(4))
    assert repr(rng) == "Generator(PCG64, device='cpu')"


def test_numpy_names_table_marks_the_native_random_names():
    from lazyarr._numpy_names import status

    assert status("random.default_rng")[0] == "native"
    assert status("random.Generator")[0] == "native"
    assert status("random.rand") == ("fallback", "")


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_generator_on_cuda_draws_there():
    rng = la.random.default_rng(0, device="cuda")
    x = rng.standard_normal(1000, dtype=np.float32)
    assert x.device == "cuda" and x.dtype == np.float32 and x.shape == (1000,)
    assert abs(float(la.mean(x))) < 0.2 and 0.8 < float(la.std(x)) < 1.2
    with pytest.raises(ValueError, match="generator was given"):
        la.random.default_rng(0, device="cpu").choice(x, 2)
