#!/bin/sh
# CTest exported_symbols: every function a public header declares with KY_API, and every variable it
# declares `extern KY_API` (sms.h's sms_rank ...), must be exported by the shared library (hidden visibility
# makes a definition whose file does not see the KY_API declaration silently private).
#   usage: check_exports.sh LIBKYOYU.so HEADER...
set -eu
lib="$1"; shift
declared="$(cat "$@" | tr '\n' ' ' | grep -oE 'KY_API[^;{]*\(' | grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\($' \
            | tr -d '( ' | grep '^ky_' | sort -u)"
variables="$(cat "$@" | tr '\n' ' ' | grep -oE 'extern KY_API [^;(){}]*;' | sed -E 's/^extern KY_API //; s/;$//' \
             | tr ',' '\n' | grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*$' | tr -d ' ' | sort -u)"
declared="$declared $variables"
exported="$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)"
missing=""
for f in $declared; do
    echo "$exported" | grep -qx "$f" || missing="$missing $f"
done
n="$(echo "$declared" | wc -w)"
if [ -n "$missing" ]; then
    echo "declared KY_API in include/ but not exported by $(basename "$lib"):$missing"
    echo "(does the defining .c file include the public header that declares it?)"
    exit 1
fi
echo "all $n KY_API functions and variables are exported"
