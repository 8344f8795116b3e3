#!/usr/bin/env bash
# CI check of the asv suite, against the current Python environment (no build, no internet):
#   1. asv check: every benchmark module imports and every benchmark is well formed;
#   2. a smoke run: a small subset, each benchmark once (--quick), arrays <= 2**20 (the corpus
#      scripts at their preset L), nothing saved.
# asv exits non-zero if a benchmark fails. About a minute on the 2-core CI machine.
#
#   bash benchmarks/ci_check.sh            (lazyarr and the [bench] extra installed)
set -euo pipefail
cd "$(dirname "$0")/.."
# asv drops PYTHONPATH for its benchmark processes; if this Python cannot import lazyarr
# (not installed), point asv at this checkout instead.
if ! (cd / && python -c "import lazyarr") > /dev/null 2>&1; then
    export ASV_PYTHONPATH="$PWD${ASV_PYTHONPATH:+:$ASV_PYTHONPATH}"
fi
conf=asv.existing.conf.json
machine=${ASV_MACHINE:-ci}
asv machine --yes --machine "$machine" > /dev/null
asv check --config "$conf"
LAZYARR_BENCH_MAX_SIZE=${LAZYARR_BENCH_MAX_SIZE:-1048576} \
    asv run --config "$conf" --machine "$machine" --quick --dry-run --show-stderr \
    -b '^bench_elementwise\.(Headline|ChainLength)|^bench_reductions\.SumSquares|^bench_overhead\.(CachedCall|GraphBuild|Import)|^bench_workloads|^bench_corpus'
# --dry-run saves no results, but asv still writes .asv/results/<machine>/machine.json: drop it
if ! ls ".asv/results/$machine"/*-*.json > /dev/null 2>&1; then rm -rf ".asv/results/$machine"; fi
echo "asv ci check: ok"
