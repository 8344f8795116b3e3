"""SciPy and scikit-learn on lazyarr arrays through ``array_api_compat`` (issue 19, item 4).

Both libraries find lazyarr as the namespace of its arrays (``x.__array_namespace__()``) and
call its functions; the results must be LazyArrays equal to what the same call gives on NumPy
arrays. SciPy needs ``SCIPY_ARRAY_API=1`` set before it is imported, so the calls run in a
fresh process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("array_api_compat", reason="array-api-compat (the test extra)")
pytest.importorskip("sklearn", reason="scikit-learn (the test extra)")

SCRIPT = textwrap.dedent('''
    import json
    import numpy as np
    import array_api_compat, sklearn
    import lazyarr as la
    from scipy import signal, special, stats
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    rng = np.random.default_rng(0)
    v = np.linspace(-2, 2, 9)
    X, y = rng.standard_normal((60, 4)), (rng.random(60) > 0.5).astype(np.int64)
    calls = {
        "special.logsumexp": lambda m, a: special.logsumexp(a),
        "special.softmax": lambda m, a: special.softmax(a),
        "special.ndtr": lambda m, a: special.ndtr(a),
        "special.erf": lambda m, a: special.erf(a),
        "stats.zscore": lambda m, a: stats.zscore(a),
        "stats.moment": lambda m, a: stats.moment(a, order=3),
        "signal.convolve": lambda m, a: signal.convolve(a, a),
    }
    out = {"namespace": ["LazyArray", array_api_compat.array_namespace(la.asarray(v)) is la]}
    for name, call in calls.items():
        want = call(np, v)
        got = call(la, la.asarray(v))
        kind = "LazyArray" if isinstance(got, la.LazyArray) else type(got).__name__   # (an element too)
        out[name] = [kind, bool(np.allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12))]
    with sklearn.config_context(array_api_dispatch=True):
        for name, make in [("sklearn.PCA", lambda Xa, ya: PCA(n_components=2, svd_solver="full").fit_transform(Xa)),
                           ("sklearn.LinearDiscriminantAnalysis", lambda Xa, ya: LinearDiscriminantAnalysis().fit(Xa, ya).predict_proba(Xa))]:
            want = make(X, y)
            got = make(la.asarray(X), la.asarray(y))
            out[name] = [type(got).__name__, bool(np.allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10))]
    print("RESULT " + json.dumps(out))
''')


def test_scipy_and_sklearn_run_on_lazyarr_arrays():
    repo = Path(__file__).parent.parent
    env = dict(os.environ, SCIPY_ARRAY_API="1", LAZYARR_DEVICE="cpu",
               PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout[-2000:] + proc.stderr[-3000:]
    results = json.loads(lines[0][7:])
    wrong = {name: r for name, r in results.items() if r != ["LazyArray", True]}
    assert not wrong, f"calls not returning LazyArrays equal to NumPy's: {wrong}"
    assert len(results) == 10
