#!/usr/bin/env bash
# Everything a device call carries besides the tree, rebuilt in a fresh checkout (run from the
# repository root; all of it is git-ignored): .whl (numpy 2.4.6 + numba for the GPU image:
# ../shared/device/README.md), .whl-asv (asv and its own, carried for STEPS=asv only), .whl-extra
# (Dask, Hypothesis, the conformance suite's and pytest's needs, so test_dask.py,
# test_consumers.py and the conformance suite run on cuda), .aat (a copy of
# ../shared/array-api-tests, which the device does not get). tools/device/README.md says what
# to carry for which call. .npb: a copy of ../shared/npbench (the NPBench kernels on the GPU).
set -euo pipefail
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64
      --platform any)
get() {  # get DEST [--no-deps] REQUIREMENT...: wheels for the device's Python 3.12
    local dest=$1; shift; mkdir -p "$dest"
    python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
        "${plat[@]}" -d "$dest" "$@"
}
get .whl --no-deps numpy==2.4.6 numba==0.68.1
get .whl-asv --no-deps asv==0.6.6 asv-runner==0.3.2 json5 importlib-metadata==8.7.0 pympler \
    virtualenv distlib platformdirs
get .whl-extra "dask[array,distributed]>=2025.1" array-api-compat "hypothesis>=6.151" \
    "ndindex>=1.8" pytest-json-report pytest-xdist pytest psutil
# The resolver pulls a newer numpy and importlib-metadata; .whl and .whl-asv pin theirs.
rm -f .whl-extra/numpy-* .whl-extra/importlib_metadata-*
rm -rf .aat && cp -r ../shared/array-api-tests .aat && rm -rf .aat/.git
rm -rf .npb && cp -r ../shared/npbench .npb    # (tools/peers/npbench_gpu.py: LAZYARR_NPBENCH=.npb)
du -sh .whl .whl-asv .whl-extra .aat .npb
