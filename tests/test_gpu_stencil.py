"""Stencils of a pending array on cuda: the value read at several shifts is computed once per
element in shared-memory tiles (lazyarr/backends/cuda/stencil.py). Checked against NumPy on
shapes with partial tiles, every real dtype the fields take, with and without floating-point
checks, several arrangements of one program, and the flags."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from helpers import assert_same

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")]


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@pytest.fixture
def stencils(monkeypatch):
    """The stencils of the kernels rendered while the test runs (None: a kernel without)."""
    from lazyarr.backends.cuda import render as R
    seen = []
    render = R.render

    def spy(program, spec, *args, **kwargs):
        seen.append(spec.stencil)
        return render(program, spec, *args, **kwargs)
    monkeypatch.setattr(R, "render", spy)
    for backend in _backends():
        monkeypatch.setattr(backend, "_entries", {})
    return seen


def _backends():
    from lazyarr.backends.cuda import backend as B
    from lazyarr.backends.cuda.simulate import BACKEND as SIM
    return (B.BACKEND, SIM)


def _quiet(checked):
    return warnings.catch_warnings() if checked else la.errstate(all="ignore")


SHAPES = [(70, 70), (130, 45), (66, 34), (5, 200), (200, 6), (3, 3)]


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_jacobi_of_a_pending_array_matches_numpy(shape, dtype, checked, stencils, rng):
    wn = rng.uniform(0, 4, shape).astype(dtype)
    ref = jacobi(np.sqrt(wn))
    with la.config(device="cuda", mode="lazy"), _quiet(checked):
        w = la.asarray(wn)
        got = np.asarray(jacobi(la.sqrt(w)).compute())
        total = float(la.sum(jacobi(la.sqrt(w))))
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got, ref)                  # the same ops in the same order
    np.testing.assert_allclose(total, ref.sum(dtype=np.float64), rtol=1e-3 if dtype == np.float16 else 1e-5)
    assert len(stencils) == 2
    if min(shape) > 3:                                       # (a 1x1 result collapses to 0-d)
        assert all(s is not None and len(s.fields) == 1 for s in stencils)
        assert {(di, dj) for _, di, dj in stencils[0].fields[0].tops} == \
            {(0, 0), (1, -1), (1, 0), (1, 1), (2, 0)}


def test_strided_and_transposed_buffers_and_other_inputs_match_numpy(stencils, rng):
    big = rng.uniform(0.5, 2, (150, 190))
    z = rng.standard_normal((48, 61))
    row = rng.standard_normal(61)
    cases = {
        "strided": lambda xp, b, z, row: jacobi(xp.exp(b[::3, 1::3])) * z + row,
        "transposed": lambda xp, b, z, row: jacobi(xp.log(b.T[:50, :63])) - 2.5,
        "field and its input": lambda xp, b, z, row: jacobi(xp.sqrt(b[:50, :63])) + b[1:49, 1:62],
    }
    with la.config(device="cuda", mode="lazy"):
        for name, fn in cases.items():
            got = np.asarray(fn(la, *(la.asarray(a) for a in (big, z, row))).compute())
            # (exp and log: libdevice's are within an ulp of NumPy's; sqrt is exact in both)
            assert_same(got, fn(np, big, z, row), exact=name == "field and its input")
    assert len(stencils) == 3 and all(s is not None for s in stencils)


def test_each_arrangement_of_one_program_gets_its_own_kernel(stencils, rng):
    """``u[a] + u[b]`` for two pairs of views: the same program over the same layout, other
    shifts. A kernel compiled for one pair must not serve the other."""
    wn = rng.uniform(0, 4, (40, 90)).astype(np.float32)
    pairs = [((slice(None, -2), slice(1, -1)), (slice(2, None), slice(1, -1))),
             ((slice(1, -1), slice(None, -2)), (slice(1, -1), slice(2, None))),
             ((slice(None, -2), slice(None, -2)), (slice(2, None), slice(2, None)))]
    with la.config(device="cuda", mode="lazy"):
        w = la.asarray(wn)
        for _ in range(2):                                  # (again: from the kernel cache)
            for a, b in pairs:
                u = la.sqrt(w)
                np.testing.assert_array_equal(np.asarray((u[a] + u[b]).compute()),
                                              np.sqrt(wn)[a] + np.sqrt(wn)[b])
    assert len(stencils) == 3
    assert len({s.fields[0].tops for s in stencils}) == 3


def test_two_fields_and_an_integer_field(stencils, rng):
    an = rng.uniform(0, 4, (60, 70))
    bn = rng.uniform(-1, 1, (60, 70))
    kn = rng.integers(-1000, 1000, (60, 70), dtype=np.int32)
    with la.config(device="cuda", mode="lazy"):
        a, b, k = la.asarray(an), la.asarray(bn), la.asarray(kn)
        got = np.asarray((jacobi(la.sqrt(a)) + jacobi(la.exp(b))).compute())
        assert_same(got, jacobi(np.sqrt(an)) + jacobi(np.exp(bn)), exact=False)
        q = k // 7
        got = np.asarray((q[:-2, 1:-1] + q[2:, 1:-1] - q[1:-1, :-2] * q[1:-1, 2:]).compute())
        qn = kn // 7
        np.testing.assert_array_equal(got, qn[:-2, 1:-1] + qn[2:, 1:-1] - qn[1:-1, :-2] * qn[1:-1, 2:])
    assert len(stencils[0].fields) == 2
    assert stencils[1].fields[0].dtype == np.int32


def test_cheap_fields_and_negative_strides_keep_the_flat_kernel(stencils, rng):
    wn = rng.uniform(0, 4, (50, 60))
    with la.config(device="cuda", mode="lazy"):
        w = la.asarray(wn)
        np.testing.assert_array_equal(np.asarray(jacobi(w * 2.0).compute()), jacobi(wn * 2.0))
        np.testing.assert_array_equal(np.asarray(jacobi(la.sqrt(w[::-1])).compute()),
                                      jacobi(np.sqrt(wn[::-1])))
    assert stencils == [None, None]


@pytest.mark.parametrize("bad", [(40, 20), (30, 66), (68, 10)], ids=["whole-tile", "right-edge", "bottom-edge"])
def test_floating_point_errors_are_numpys(bad, rng):
    """An element the views read raises the op's warning once, as NumPy's one call does,
    in a whole tile and in the tiles at the array's edges (70x70: 68x68 outputs, tiles of
    64x32); an element no view reads (the corner) raises none on cuda (what a view of a
    pending array computes: docs/views-and-writes.rst)."""
    wn = rng.uniform(0, 4, (70, 70)).astype(np.float32)
    wn[bad] = -1.0
    with la.config(device="cuda", mode="lazy"):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            total = float(la.sum(jacobi(la.sqrt(la.asarray(wn)))))
        assert np.isnan(total)
        assert [str(w.message) for w in got] == ["invalid value encountered in sqrt"]
        with warnings.catch_warnings(record=True) as got:     # (a map's failed tile, again)
            warnings.simplefilter("always")
            step = np.asarray(jacobi(la.sqrt(la.asarray(wn))).compute())
        assert [str(w.message) for w in got] == ["invalid value encountered in sqrt"]
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(step, jacobi(np.sqrt(wn)))
        with la.errstate(invalid="raise"), pytest.raises(FloatingPointError):
            jacobi(la.sqrt(la.asarray(wn))).compute()
        wn[bad] = 1.0
        wn[0, 0] = -1.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = np.asarray(jacobi(la.sqrt(la.asarray(wn))).compute())
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, jacobi(np.sqrt(wn)))


@pytest.mark.parametrize("shape", [(100, 80), (70, 20), (200, 40)], ids=str)
def test_a_small_grid_walks_every_tile(shape, stencils, monkeypatch, rng):
    """Two blocks for more tiles than that: each block's next tile is carried forward (its
    tile column wrapping into the next row), never divided out."""
    from lazyarr.backends.cuda import render as R
    monkeypatch.setattr(R, "GRID_THREADS_PER_SM", dict(R.GRID_THREADS_PER_SM, map=256, full=256))
    wn = rng.uniform(0, 4, shape).astype(np.float32)
    with la.config(device="cuda", mode="lazy"):
        w = la.asarray(wn)
        np.testing.assert_array_equal(np.asarray(jacobi(la.sqrt(w)).compute()), jacobi(np.sqrt(wn)))
        np.testing.assert_allclose(float(la.sum(jacobi(la.sqrt(w)))),
                                   jacobi(np.sqrt(wn)).sum(dtype=np.float64), rtol=1e-5)
    assert len(stencils) == 2 and all(s is not None for s in stencils)


def test_find_takes_only_families_whose_offsets_fit_and_shifts_are_unique():
    """stencil.find on a lowered Jacobi program with made-up layouts: the five views of a
    row stride that keeps a tile's offsets within int32 form one field; a row stride past
    that, or one too short to tell rows from columns apart, forms none."""
    from lazyarr._program import Instr
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda import stencil

    f4 = np.dtype(np.float32)
    chain = [Instr("scalar", f4, (), 0)]
    adds = None
    for k in range(5):
        chain += [Instr("input", f4, (), (k, 2)), Instr("sqrt", f4, (len(chain),), None)]
        if k:
            chain.append(Instr("add", f4, (adds if adds is not None else len(chain) - 3, len(chain) - 1), None))
            adds = len(chain) - 1
    chain.append(Instr("multiply", f4, (0, adds), None))
    shifts = [(1, 1), (0, 1), (2, 1), (1, 0), (1, 2)]      # jacobi's views of u
    inputs = [np.zeros(1, f4)] * 5
    owner = object()

    def found(s0):
        addresses = [(4 * (di * s0 + dj), owner) for di, dj in shifts]
        return stencil.find(chain, len(chain) - 1, "sssss", [(s0, 1)] * 5, inputs, addresses,
                            R.HEAVY_OPS)
    st = found(4096)
    assert st is not None and len(st.fields) == 1
    assert sorted((di, dj) for _, di, dj in st.fields[0].tops) == [(0, 0), (1, -1), (1, 0), (1, 1), (2, 0)]
    assert found(2 ** 31 // 60) is None          # offsets past int32
    assert found(3) is None                      # (1, 0) and (0, 3): rows and columns ambiguous


FIELDS = {"sqrt": (lambda xp, u: xp.sqrt(u), True), "divide": (lambda xp, u: 1.0 / (u + 2.0), True),
          "exp": (lambda xp, u: xp.exp(u), False), "sin": (lambda xp, u: xp.sin(u), False)}


@pytest.mark.parametrize("seed", range(24))
def test_random_stencils_match_numpy(seed, stencils):
    """Random 2-d stencils of a pending field: 2-5 distinct shifts within two rows and
    columns, weights, a shape with partial tiles, a map or a sum, an extra input or not,
    checked or not; the stencil kernel runs each (IEEE ops exact, libdevice's within tolerance)."""
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(3, 90)), int(rng.integers(3, 80))
    dtype = [np.float32, np.float64][seed % 2]
    name = list(FIELDS)[seed % 4]
    field, exact = FIELDS[name]
    shifts = [tuple(int(v) for v in s) for s in rng.permutation([(i, j) for i in range(3) for j in range(3)])]
    shifts = shifts[:int(rng.integers(2, 6))]
    weights = rng.choice([1.0, -1.0, 0.5, 2.0], len(shifts))
    wn = rng.uniform(0.1, 3, (rows, cols)).astype(dtype)
    zn = rng.uniform(-1, 1, (rows - 2, cols - 2)).astype(dtype)
    extra, reduce, checked = bool(seed % 3), bool(seed % 5 < 2), seed % 7 != 3

    def step(xp, w, z):
        u = field(xp, w)
        out = sum(c * u[di:rows - 2 + di, dj:cols - 2 + dj] for c, (di, dj) in zip(weights, shifts))
        return out * z if extra else out
    want = step(np, wn, zn)
    with la.config(device="cuda", mode="lazy"), _quiet(checked):
        got = step(la, la.asarray(wn), la.asarray(zn))
        got = float(la.sum(got)) if reduce else np.asarray(got.compute())
    if reduce:
        np.testing.assert_allclose(got, want.sum(dtype=np.float64), rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=1e-3 if dtype == np.float32 else 1e-9)
    elif exact:
        assert_same(got, want)
    else:       # libdevice's exp/sin are within an ulp or two of NumPy's in the field's dtype,
        # and float64 weights make the output float64: compare at the field's precision
        assert got.dtype == want.dtype and got.shape == want.shape
        tol = 8 * np.finfo(dtype).eps
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max()))
    # (rows of at most 2 * MAX_SHIFT elements make shifts ambiguous: the flat kernel then;
    # a sum of a held pending step may store the step first)
    if rows > 3 and cols > 8:
        assert any(s is not None for s in stencils)
