"""Where the user's code is on the call stack: warnings name the user's line, not lazyarr's."""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_imaginary_discarded() -> None:
    """NumPy's ComplexWarning of a complex -> real conversion, at the user's line."""
    warnings.warn("Casting complex values to real discards the imaginary part",
                  np.exceptions.ComplexWarning, stacklevel=user_stacklevel())


def user_stacklevel() -> int:
    """The ``stacklevel`` (for ``warnings.warn`` called by this function's caller) of the
    first frame outside lazyarr (and NumPy's dispatch), so the warning names the user's line."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1    # type: ignore[assignment]
    return level
