#!/usr/bin/env bash
# One device call: wheels, build, then the steps named in $STEPS (probe, gpu-tests, peers, demo,
# asv, script: $SCRIPTS run in turn) under one deadline. Logs and results under $OUT. Development tool (tools/device/README.md).
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
# Logs go to a work folder; at the end $OUT gets logs.tgz and kcache.txz.NN (the kernel cache),
# plus asv's h200 results as files (the device tool brings back at most 8 files).
FINAL_OUT=${OUT:-/tmp/gpu-session}; OUT=/tmp/gpu-session-work; mkdir -p "$OUT" "$FINAL_OUT"
t0=$(date +%s)
say() { echo "[gpu_session $(( $(date +%s) - t0 ))s] $*"; }
# The device's copy of the repo may carry an old .git (seen: asv then rejects this commit).
# Here: `git bundle create lazyarr.bundle main` (untracked, so it travels); there: HEAD := it.
if [ -f lazyarr.bundle ]; then
    # (main itself moves: asv benchmarks the branch main, and a detached HEAD there left it
    # at an old commit, so asv labelled this tree's results with that commit: 2026-12-04c #6)
    git fetch -q lazyarr.bundle main && git update-ref refs/heads/main FETCH_HEAD \
        && git symbolic-ref HEAD refs/heads/main && git reset -q --soft main \
        && say "HEAD $(git rev-parse --short HEAD) from lazyarr.bundle"
fi
# .whl: what the tests need; .whl-asv (asv, virtualenv, ...): carried only for STEPS=asv, to keep
# a call with the kernel cache under the device tool's 64 MiB
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl $(ls .whl-asv/*.whl .whl-extra/*.whl 2>/dev/null) || { say "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
export LAZYARR_WHEELS_AT=/tmp/site   # benchmarks/run_asv_gpu.sh then skips its own install
# The probes and peer scripts time warm kernels after a warm-up call: that call waits for its
# compile (no op-by-op calls while it compiles: backends/cuda/first_calls.py). A script that
# measures the background compile sets la.config(compile=...) itself (first_result.py).
export LAZYARR_COMPILE=${LAZYARR_COMPILE:-wait}
# .whl-extra (dask, array-api-compat, hypothesis, ndindex, ...: tests/test_dask.py,
# test_consumers.py and the conformance suite skip without them) and .aat (a copy of
# ../shared/array-api-tests, which the device does not get): carry both for those tests
[ -d .aat/array_api_tests ] && export LAZYARR_ARRAY_API_TESTS=$PWD/.aat
# lazyarr runs from this checkout (PYTHONPATH), not installed: give it the installed package's
# metadata, so entry points resolve (Dask's array.backend = "lazyarr", pyproject.toml)
mkdir -p /tmp/site/lazyarr-0.1.0.dist-info
printf 'Metadata-Version: 2.1\nName: lazyarr\nVersion: 0.1.0\n' > /tmp/site/lazyarr-0.1.0.dist-info/METADATA
printf '[dask.array.backends]\nlazyarr = lazyarr._dask:backend_entrypoint\n' > /tmp/site/lazyarr-0.1.0.dist-info/entry_points.txt
python3 setup.py build_ext --inplace -q > "$OUT/build.log" 2>&1 || { say "build failed"; tail -30 "$OUT/build.log"; }
# The kernel cache travels: .kcache/ is ignored by git; the device tool carries it here
# (carry: [".kcache"]) holding cuda.txz.NN (or an older cuda.tgz), the packed cache of the last
# call, and this call packs the cache into $OUT/kcache.txz.NN at the end: xz, split in 15 MiB
# parts, as the device tool brings back no file over 16 MiB (docs/testing.rst, "The GPU suite").
export LAZYARR_CACHE_DIR=$PWD/.kcache/cuda
mkdir -p .kcache && chmod 0700 .kcache && mkdir -p -m 0700 "$LAZYARR_CACHE_DIR" && chmod 0700 "$LAZYARR_CACHE_DIR"
if ls .kcache/cuda.txz.* > /dev/null 2>&1 || [ -f .kcache/cuda.tgz ]; then
    { if ls .kcache/cuda.txz.* > /dev/null 2>&1; then cat .kcache/cuda.txz.* | xz -dc; else gzip -dc .kcache/cuda.tgz; fi; } \
        | tar x -C "$LAZYARR_CACHE_DIR" --no-same-owner --no-same-permissions \
        && find "$LAZYARR_CACHE_DIR" -maxdepth 1 -type f -exec chmod 0600 {} + \
        && say "kernel cache: $(ls "$LAZYARR_CACHE_DIR" | wc -l) entries unpacked" || say "kernel cache: unpack failed"
else
    say "kernel cache: cold (no .kcache/cuda.txz.NN carried)"
fi
# CuPy's own kernel cache (eager mode and CuPy's reductions compile with NVRTC) travels too,
# as .kcache/cupy.tgz: a fresh machine otherwise recompiles every CuPy kernel the suite uses.
export CUPY_CACHE_DIR=$PWD/.kcache/cupy
mkdir -p "$CUPY_CACHE_DIR"
[ -f .kcache/cupy.tgz ] && tar xzf .kcache/cupy.tgz -C "$CUPY_CACHE_DIR" --no-same-owner 2>/dev/null \
    && say "cupy cache: $(ls "$CUPY_CACHE_DIR" | wc -l) entries unpacked"
# The driver's own JIT cache: lazyarr's cache holds PTX for most kernels, which the driver
# compiles to SASS at every load on a fresh machine (docs/notes/gpu.rst, 2026-12-03f: the
# suite's slow tests were as slow with every kernel in lazyarr's cache). NV_CACHE=1 keeps the
# driver's cache in .kcache/nv and brings it back as nv.txz (carried like the rest of .kcache).
if [ "${NV_CACHE:-0}" = 1 ]; then
    export CUDA_CACHE_PATH=$PWD/.kcache/nv CUDA_CACHE_MAXSIZE=4294967296
    mkdir -p "$CUDA_CACHE_PATH"
    [ -f .kcache/nv.txz ] && xz -dc .kcache/nv.txz | tar x -C "$CUDA_CACHE_PATH" --no-same-owner \
        && say "driver cache: $(du -sh "$CUDA_CACHE_PATH" | cut -f1) unpacked"
fi
# The entries this call read or wrote (a read sets an entry's mtime: compile.read_cache) are
# newer than this marker; with PACK_USED=1 only those travel back (the cache otherwise keeps
# every kernel of every older commit: 45,865 entries, 26 MB packed, on 2026-12-03).
touch "$OUT/session-start"
pack_cache() {   # the entries only (no directory entry: the folder keeps its 0700 there too)
    rm -f "$FINAL_OUT"/kcache.txz.*
    # (only a call that ran the whole suite drops what it did not use: a probe's call used a
    # hundred kernels, and its cache carried to the next suite made that one cold: 2026-12-03d)
    newer=""; [ "${PACK_USED:-0}" = 1 ] && [[ " ${STEPS:-} " == *" gpu-tests "* ]] \
        && [ -z "${TESTS:-}" ] && [ -z "${TESTS_K:-}" ] && newer="-newer $OUT/session-start"
    (cd "$LAZYARR_CACHE_DIR" && find . -maxdepth 1 -type f -name '*.bin' $newer -printf '%P\n' \
        | tar c -T - | xz -T0 -6 | split -d -b 15M - "$FINAL_OUT/kcache.txz.") 2>/dev/null
    tar czf "$FINAL_OUT/cupy.tgz" -C "$CUPY_CACHE_DIR" . 2>/dev/null
    if [ "${NV_CACHE:-0}" = 1 ]; then   # (one file of at most 15 MiB, or none: say so)
        tar c -C "$CUDA_CACHE_PATH" . 2>/dev/null | xz -T0 -6 > "$OUT/nv.txz"
        if [ "$(stat -c %s "$OUT/nv.txz")" -le $((15 * 1024 * 1024)) ]; then cp "$OUT/nv.txz" "$FINAL_OUT/"
        else say "driver cache: $(du -sh "$OUT/nv.txz" | cut -f1) packed, too big to bring back"; fi
    fi
}
say "built; nvidia-smi: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader)"
collect() {   # after every step: a cut call still brings back what is done
    tar czf "$FINAL_OUT/logs.tgz" -C "$OUT" --exclude=./results . 2>/dev/null
    pack_cache
    for m in h200 h100; do [ -d "$OUT/results/$m" ] || continue
        # only this commit's results (and machine.json): the tool returns at most 8 files, and
        # the older commits' files, copied in for asv's comparison, crowded it out (2026-12-02e #5)
        head=$(git rev-parse HEAD | cut -c1-8)
        mkdir -p "$FINAL_OUT/$m" && cp "$OUT"/results/$m/"$head"*.json "$FINAL_OUT/$m/" 2>/dev/null
        cp "$OUT/results/benchmarks.json" "$FINAL_OUT/" 2>/dev/null
    done
}
for step in ${STEPS:-probe gpu-tests peers demo}; do
    say "step $step"
    case $step in
    probe) timeout ${PROBE_S:-150} python3 tools/device/gpu_probe.py --out "$OUT" ${PROBE_ARGS:-} 2>&1 | tee "$OUT/probe.log" | grep -v "^\s*$" | head -${PROBE_LINES:-200} ;;
    gpu-tests)   # select with TESTS_K (a -k expression): TESTS with several node ids collected nothing there (2026-12-03e #3)
        nx=""; python3 -c "import xdist" 2>/dev/null && nx="-n ${NWORKERS:-12}"
        LAZYARR_TEST_STATS="$OUT/kernel-stats" timeout -s INT ${TESTS_S:-300} python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE --tb=line $nx --maxfail=300 --durations=${DURATIONS:-30} \
            --junitxml="$OUT/gpu-tests.xml" -o junit_family=xunit1 ${TESTS_K:+-k "$TESTS_K"} ${TESTS:-tests} > "$OUT/gpu-tests.log" 2>&1
        say "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.log" | cut -c1-400 | head -80; sed -n "/slowest/,/^$/p" "$OUT/gpu-tests.log" | head -34; tail -3 "$OUT/gpu-tests.log"
        python3 tools/device/gpu_durations.py --stats "$OUT/kernel-stats" --top ${STATS_TOP:-15} 2>&1 | cut -c1-170 ;;
    profile)   # one process, no xdist, under cProfile: where a slow test's time goes (TESTS, TESTS_K)
        timeout -s INT ${PROFILE_S:-200} python3 -m cProfile -o "$OUT/profile.out" -m pytest -m gpu -q -p no:cacheprovider \
            -p no:benchmark -p no:xdist --tb=line ${TESTS_K:+-k "$TESTS_K"} ${TESTS:-tests} > "$OUT/profile.log" 2>&1
        say "profile exit $?"; tail -3 "$OUT/profile.log"
        python3 -c "import pstats; pstats.Stats('$OUT/profile.out').sort_stats('cumulative').print_stats(45)" \
            2>&1 | grep -v "^\s*$" | cut -c1-160 | tail -50 ;;
    peers) timeout ${PEERS_S:-180} python3 tools/peers/gpu_peers.py --json "$OUT/gpu_peers.json" > "$OUT/gpu_peers.md" 2>&1
        say "peers exit $?"; sed -n '/^| work/,$p' "$OUT/gpu_peers.md" ;;
    script)   # SCRIPTS="tools/device/a.py --x 1;tools/peers/b.py": each in turn, output in scripts.log
        IFS=';' read -ra scripts <<< "${SCRIPTS:-}"
        for sc in "${scripts[@]}"; do
            sc=${sc//'$OUT'/$OUT}     # (a literal $OUT in SCRIPTS: this call's output folder)
            say "script $sc"
            timeout ${SCRIPT_S:-150} python3 $sc 2>&1 | tee -a "$OUT/scripts.log" | tail -${SCRIPT_LINES:-80}
        done ;;
    diag) timeout 90 python3 tools/device/gpu_diag.py 2>&1 | tee "$OUT/diag.log" | head -150 ;;
    demo) timeout 120 python3 -m lazyarr demo 2>&1 | tee "$OUT/demo.log" | tail -25 ;;
    asv) ASV_GPU_BUDGET_S=${ASV_S:-300} OUT=$OUT bash benchmarks/run_asv_gpu.sh > /dev/null 2>&1
        grep -v "^\s*$" "$OUT/run_asv_gpu.log" | tail -40 ;;
    esac
    collect
done
collect
say "done"
