#!/usr/bin/env bash
# Kyoyu benchmarks: every suite that is built (comm: pingpong and halo; coll, dsm and stencil once they
# exist), each case on its ranks with the environment that selects its path, through kybench. The cases
# are listed once, in tools/kybench_lib/suites.py; this script only hands over (docs/benchmarks.md).
#
#   bench/run_all.sh [BUILD_DIR]          (default: $BUILD or build)
#
# Results: bench/results/<kind>/<UTC date>/<case>.jsonl and all.log, kind = $KY_BENCH_MACHINE, default
# `hostname`. Host cases always run; GPU cases when nvidia-smi lists at least 2 GPUs. Without GPUs the host
# cases use short ranges (BENCH_FULL=1 for the full ones). BENCH_PINGPONG_ARGS, BENCH_HALO_ARGS, ... are
# appended to every run of that program. Same as: tools/kybench run all --build BUILD_DIR
set -u
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${BUILD:-$root/build}}"
exec "$root/tools/kybench" run all --build "$build"
