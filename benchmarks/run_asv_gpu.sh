#!/usr/bin/env bash
# Run the asv suite's GPU rows on the GPU machine (H200) against its existing Python: no build,
# no internet. About 6 minutes of device time; results come back under $OUT/results.
#
#   here:  bash ../shared/device/fetch-wheels.sh          # once: numpy 2.4.6, numba, asv -> .whl/
#   GPU:   bash benchmarks/run_asv_gpu.sh                 # through the run tool, carry [".whl"]
#   here:  cp -r <files_at>/results/h200 .asv/results/ && python tools/perf_page.py
#          (with WITH_PEERS=1 it also runs gpu_peers.py first: cp <files_at>/gpu_peers.json
#           docs/_static/perf/ before perf_page.py)
#
# Several small asv runs in priority order (headline numbers first), each saving its results,
# under one deadline (ASV_GPU_BUDGET_S, default 330 s from the start): a run cut by the deadline
# loses only its own group. CPU rows are skipped there (LAZYARR_BENCH_DEVICES=cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/asv-gpu-out}
mkdir -p "$OUT"
LOG="$OUT/run_asv_gpu.log"
exec > >(tee -a "$LOG") 2>&1
t0=$(date +%s)
budget=${ASV_GPU_BUDGET_S:-330}
say() { echo "[run_asv_gpu $(( $(date +%s) - t0 ))s] $*"; }

# 1. the wheels that fix numpy/numba there, and asv (../shared/device/README.md)
if [ "${LAZYARR_WHEELS_AT:-}" = /tmp/site ]; then
    # gpu_session.sh installed the same wheels a moment ago (10-20 s of device time saved)
    say "wheels: installed by the caller (/tmp/site)"
elif ls .whl/*.whl > /dev/null 2>&1; then
    # (.whl-asv holds asv and its own: a --target --upgrade install replaces /tmp/site/bin
    # whole, so every wheel goes in one install, tools/device/README.md)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl $(ls .whl-asv/*.whl 2>/dev/null) || { say "wheel install failed"; exit 1; }
    export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
else
    say "no .whl/ (run ../shared/device/fetch-wheels.sh here and carry .whl); using the image as is"
    export PYTHONPATH=$PWD
fi
export ASV_PYTHONPATH=$PYTHONPATH          # asv drops PYTHONPATH for its benchmark processes
export LAZYARR_BENCH_DEVICES=cuda          # the CPU rows belong to the CPU machine's history
# the kernel cache in a folder of this user only (lazyarr refuses one others could write)
export LAZYARR_CACHE_DIR=${LAZYARR_CACHE_DIR:-${HOME:-/root}/.cache/lazyarr/asv}
mkdir -p -m 700 "$LAZYARR_CACHE_DIR"

# 2. what we are about to benchmark
commit=${ASV_COMMIT:-$(git rev-parse HEAD 2>/dev/null)} || { say "no git checkout here: cannot tag results"; exit 1; }
say "commit $commit"
python3 - <<'EOF' || { echo "lazyarr/cupy not usable: stopping"; exit 1; }
import cupy, numpy, lazyarr as la
from lazyarr import backends
print("numpy", numpy.__version__, "cupy", cupy.__version__, "lazyarr", la.__version__,
      "cuda_available", la.cuda_available(), "backends", backends.available())
x = la.asarray(cupy.arange(1 << 20, dtype=cupy.float32))
print("smoke: sum(abs(x)) =", float(la.sum(abs(x))), "kernels:", len(la.explain(abs(x) * 2).kernels))
EOF

# 3. forkserver (fast) only if importing the suite leaves CUDA uninitialized for forked children;
#    first try with CuPy and the cuda backend imported up front (saves ~1 s per combination)
fork_ok() {
python3 - <<'EOF'
import os, pkgutil, importlib, sys
import benchmarks
for m in pkgutil.iter_modules(benchmarks.__path__):
    if m.name.startswith("bench_"):
        importlib.import_module("benchmarks." + m.name)
pid = os.fork()
if pid == 0:
    try:
        import cupy
        os._exit(0 if int(cupy.arange(4).sum()) == 6 else 1)
    except BaseException:
        os._exit(1)
_, status = os.waitpid(pid, 0)
sys.exit(0 if status == 0 else 1)
EOF
}
launch=forkserver
export LAZYARR_BENCH_PREIMPORT=1
if ! fork_ok; then
    unset LAZYARR_BENCH_PREIMPORT
    fork_ok || launch=spawn
fi
say "asv launch method: $launch, preimport: ${LAZYARR_BENCH_PREIMPORT:-0}"

# the card names the machine (an H100 lent for an H200 call gets its own history)
ASV_MACHINE=${ASV_MACHINE:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -q H100 && echo h100 || echo h200)}
say "asv machine: $ASV_MACHINE"
asv machine --yes --machine "$ASV_MACHINE" > "$OUT/asv_machine.log" 2>&1 || say "asv machine failed"

# optional: the peer comparison of the same session, for the docs page (WITH_PEERS=1, ~1-2 min)
if [ "${WITH_PEERS:-0}" = 1 ] && [ -f tools/peers/gpu_peers.py ]; then
    say "gpu_peers.py"
    timeout 150 python3 tools/peers/gpu_peers.py --json "$OUT/gpu_peers.json" > "$OUT/gpu_peers.md" 2>&1
    say "gpu_peers.py: exit $?"; tail -25 "$OUT/gpu_peers.md"
fi

# 4. the suite, in priority order; one round per combination to fit the budget
groups=(
    "Headline"
    "GpuEvents|CachedCall"
    "SumSquares|GpuPool"
    "ChainLength"
    "ColdStart|Import"
    "Workloads|Broadcast"
    "Reductions|GraphBuild"
)
# ASV_GROUPS="CachedCall;DaskChain|Normalize" runs those groups instead (';'-separated)
if [ -n "${ASV_GROUPS:-}" ]; then IFS=';' read -ra groups <<< "$ASV_GROUPS"; fi
i=0
for g in "${groups[@]}"; do
    i=$((i + 1))
    left=$(( budget - ($(date +%s) - t0) ))
    if [ "$left" -lt 20 ]; then say "no time left for group $i ($g)"; continue; fi
    say "group $i: $g (up to ${left}s)"
    timeout --signal=INT "$left" asv run --config asv.existing.conf.json --set-commit-hash "$commit" \
        --machine "$ASV_MACHINE" --launch-method "$launch" -a rounds=1 -b "$g" > "$OUT/asv_group$i.log" 2>&1
    say "group $i: exit $? ; $(grep -c 'failed' "$OUT/asv_group$i.log") lines mention failures"
    grep -E '^\[.*(ok|failed)' "$OUT/asv_group$i.log" | tail -8
    mkdir -p "$OUT/results" && cp -r .asv/results/. "$OUT/results/"
done

say "done; results in \$OUT/results/$ASV_MACHINE:"
ls -la "$OUT/results/$ASV_MACHINE" 2>/dev/null
