"""Build the Cython extensions (the fused CPU backend) when the package is built.

Everything else is in pyproject.toml; setuptools reads ext_modules from here.
The extension is compiled once, at install time: users never need a compiler at run time.
"""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def _thread_flags() -> tuple[list[str], list[str]]:
    """The VM's thread pool is plain pthreads (no OpenMP runtime to ship or clash with)."""
    if sys.platform == "win32":
        return [], []
    return ["-pthread"], ["-pthread"]


_thr_cflags, _thr_ldflags = _thread_flags()
_np_lib = os.path.join(os.path.dirname(np.get_include()), "lib")

EXTENSIONS: list = cythonize(
    [
        Extension(
            "lazyarr.backends._cpu_vm",
            ["lazyarr/backends/_cpu_vm.pyx"],
            include_dirs=[np.get_include(), "lazyarr/backends"],
            library_dirs=[_np_lib],
            libraries=["npymath"],  # npy_half conversions, exactly as NumPy's casts round
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            # -ffp-contract=off: no FMA contraction, so every CPU computes the same bits;
            # -fno-math-errno: sqrt is the instruction (the VM never reads errno)
            extra_compile_args=(["-O3", "-ffp-contract=off", "-fno-math-errno",
                                 "-Wno-misleading-indentation", *_thr_cflags]
                                if sys.platform != "win32" else []),
            extra_link_args=_thr_ldflags,
            depends=["lazyarr/backends/_cpu_vm.h", "lazyarr/backends/_cpu_pool.h"],
            # a platform where it does not compile still installs: lazy mode on cpu then
            # uses the reference backend (tests/test_cpu_fused.py fails loudly in that case)
            optional=True,
        ),
        # Philox4x32-10 as a NumPy ufunc: the fused random draws (lazyarr/_random_fused.py)
        Extension(
            "lazyarr._philox",
            ["lazyarr/_philox.pyx"],
            include_dirs=[np.get_include(), "lazyarr"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=["-O3"] if sys.platform != "win32" else [],
            depends=["lazyarr/_philox.h"],
        ),
        # expression nodes: built for every op a user writes (lazyarr/_node.pyx)
        Extension(
            "lazyarr._node",
            ["lazyarr/_node.pyx"],
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            depends=["lazyarr/_node.pxd"],
            extra_compile_args=["-O3"] if sys.platform != "win32" else [],
        ),
        # the operators of a computed 0-d CPU value and the element read x[i]: the loop over
        # elements (lazyarr/_value.py)
        Extension(
            "lazyarr._value_ops",
            ["lazyarr/_value_ops.pyx"],
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            depends=["lazyarr/_node.pxd"],
            extra_compile_args=["-O3"] if sys.platform != "win32" else [],
        ),
    ],
    compiler_directives={"language_level": "3"},
)

setup(ext_modules=EXTENSIONS)
