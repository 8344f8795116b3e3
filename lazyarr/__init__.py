"""lazyarr: NumPy-style arrays whose elementwise chains fuse into one kernel.

>>> import lazyarr as la
>>> x = la.linspace(-1, 1, 5, dtype=la.float32)
>>> float(la.sum(la.sqrt(abs(x * 2 + 1.5))))
7.0...
"""
from __future__ import annotations

import math as _math

import numpy as _np

from ._api import ALIASES as _ALIASES
from ._api import FUNCTIONS as _FUNCTIONS
from ._api import explain
from ._array import (
    LazyArray,
    arange,
    asarray,
    empty,
    empty_like,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._config import Config, config, get_config, set_config
from ._devices import cuda_available
from ._plan import Kernel, Plan
from ._registry import OPS, OpDef

__version__ = "0.1.0"

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan

globals().update(_FUNCTIONS)
globals().update({alias: _FUNCTIONS[name] for alias, name in _ALIASES.items()})

__all__ = [
    "LazyArray", "Plan", "Kernel", "Config", "OpDef", "OPS",
    "asarray", "zeros", "ones", "full", "empty", "arange", "linspace",
    "zeros_like", "ones_like", "full_like", "empty_like",
    "config", "set_config", "get_config", "explain", "cuda_available",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "pi", "e", "inf", "nan",
    *_FUNCTIONS, *_ALIASES,
]
