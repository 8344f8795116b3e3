"""lazyarr: NumPy-style arrays whose elementwise chains fuse into one kernel.

>>> import lazyarr as la
>>> x = la.linspace(-1, 1, 5, dtype=la.float32)
>>> float(la.sum(la.sqrt(abs(x * 2 + 1.5))))
7.0...
"""
from __future__ import annotations

import math as _math
from typing import Any as _Any

import numpy as _np

import sys as _sys

from . import _dask, _dispatch, _fallback
from . import _value  # noqa: F401  (loaded for what it installs: the element read, ScalarValue)
from ._array import LazyArray
from ._compile_thread import wait_compiles
from ._config import Config, config, get_config, set_config
from ._devices import cuda_available
from ._dtypes import SUPPORTED_DTYPES as _SUPPORTED_DTYPES
from ._fallback import FallbackError, FallbackWarning
from ._fft import namespace as fft  # noqa: F401 (a namespace, documented with lazyarr.random)
from ._jit import JitWarning, jit
from ._functions import ALIASES as _ALIASES
from ._functions import FUNCTIONS as _FUNCTIONS  # every public function, by group: _functions/
from ._functions._info import __array_api_version__, __array_namespace_info__
from ._functions._norms import linalg as linalg  # (a namespace: its norms are lazyarr's own)
from ._plan import Kernel, Plan
from ._random import random as random
from ._registry import OPS, OpDef

__version__ = "0.1.0"

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
euler_gamma = _np.euler_gamma
newaxis = None
ndarray = LazyArray        # isinstance(x, la.ndarray); la.ndarray(shape, dtype) as numpy.ndarray
dtype, finfo, iinfo = _np.dtype, _np.finfo, _np.iinfo


def _scalar_type_names() -> dict[str, type]:
    """NumPy's other names of the dtypes above (platform aliases such as intp, double, int_)."""
    names = {}
    for name in _np.__all__:
        t = vars(_np).get(name)     # (not getattr: that imports NumPy's lazy submodules, f2py,
        # ma, testing: ~40 ms of `import lazyarr`; the scalar types are module attributes)
        if isinstance(t, type) and issubclass(t, _np.generic) and not t.__subclasses__():
            if _np.dtype(t) in _SUPPORTED_DTYPES:
                names[name] = t
    return names


globals().update(_scalar_type_names())

globals().update(_FUNCTIONS)
globals().update({alias: _FUNCTIONS[name] for alias, name in _ALIASES.items()})
_fallback.install(globals())
_dispatch.PROTOCOLS["met_dask_collection"] = _dask.met_dask_collection
if "dask.array" in _sys.modules:    # imported after Dask: LazyArray is a Dask chunk type now
    _dask.register()


def __getattr__(name: str) -> _Any:
    """Every other public NumPy name: through the NumPy/CuPy fallback (lazyarr/_fallback.py),
    or an AttributeError saying why lazyarr does not provide it."""
    return _fallback.attribute(name)


__all__ = [
    "LazyArray", "Plan", "Kernel", "Config", "OpDef", "OPS",
    "config", "set_config", "get_config", "cuda_available", "wait_compiles",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "pi", "e", "inf", "nan", "euler_gamma", "newaxis", "ndarray",
    "dtype", "finfo", "iinfo", "FallbackWarning", "FallbackError", "jit", "JitWarning",
    "__array_api_version__", "__array_namespace_info__",
    *_FUNCTIONS, *_ALIASES, *_scalar_type_names(),
]
