#!/usr/bin/env bash
# kycc test driver for programs kycc must refuse: kycc fails, and its message names file:line and the
# reason.   check_bad.sh KYCC WORKDIR file.c line 'expected words'
set -u
kycc=$1 work=$2 src=$3 line=$4 words=$5
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
if "$kycc" -O2 -fopenmp "$src" -o prog > out.txt 2>&1; then
    echo "FAIL: kycc accepted $src"; exit 1
fi
cat out.txt
want="$(basename "$src"):$line:"
grep -q -- "$want" out.txt || { echo "FAIL: no '$want' in kycc's message"; exit 1; }
grep -qi -- "$words" out.txt || { echo "FAIL: no '$words' in kycc's message"; exit 1; }
echo "ok: kycc refused $(basename "$src") at line $line: $words"
