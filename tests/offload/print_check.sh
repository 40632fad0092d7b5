#!/bin/sh
# tests/offload: KY_OFFLOAD_PRINT's compile-time messages for probe.c, in order, must be this back end's
# column of the table (`offload_test --table`).
#   print_check.sh OFFLOAD_TEST COMPILER PROBE_C [FLAGS...]
# FLAGS: the back end's (-DKY_OFFLOAD_BACKEND=..., -fopenacc or -fopenmp) and the include directories.
set -eu
test_bin=$1 cc=$2 probe=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# LC_ALL=C: GCC quotes the message with ASCII quotes then
if ! LC_ALL=C "$cc" "$@" -DKY_OFFLOAD_PRINT -fsyntax-only "$probe" >"$work/log" 2>&1; then
    cat "$work/log"
    echo "print_check: $cc could not compile $probe"
    exit 1
fi
# GCC:   note: '#pragma message: ky_offload[acc_kernels]: acc kernels loop'
# Clang: warning: ky_offload[acc_kernels]: acc kernels loop [-W#pragma-messages]
sed -n 's/.*ky_offload\[[a-z_]*\]: \(.*\)$/\1/p' "$work/log" |
    sed "s/ \[-W#pragma-messages\]\$//; s/'\$//" >"$work/printed"
"$test_bin" --table >"$work/table"
if ! diff -u "$work/table" "$work/printed" >"$work/diff"; then
    echo "print_check: printed directives (+) differ from the table (-):"
    cat "$work/diff"
    exit 1
fi
echo "print_check: $(wc -l <"$work/printed") directives printed as the table says"
