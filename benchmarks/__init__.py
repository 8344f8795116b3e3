"""lazyarr's airspeed-velocity suite: ``bench_*.py`` (benchmark classes), ``common.py`` (helpers).

asv imports every module of this package to discover benchmarks, so nothing else lives here:
the peer-comparison scripts (NumPy, numexpr, CuPy, torch.compile) are in ``tools/peers/``.
"""
