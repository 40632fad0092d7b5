#!/usr/bin/env bash
# Build and run a public OpenSHMEM test suite (fetched by tools/fetch-shmem-tests, never committed) against
# include/shmem.h and one build's libkyoyu, one test at a time, and print one line per test:
#   NAME<TAB>pass|fail|n/a<TAB>detail
# n/a: the test does not compile because it uses a call include/shmem.h does not declare (the first such
# name is the detail); fail: it compiled and exited non-zero, timed out, or failed to compile for another
# reason. Exit status 0 when nothing failed.
#   run-suite.sh -b BUILD -s SUITE_DIR [-n RANKS] [-l LIST] [-t TIMEOUT_S] [-o WORKDIR] [-D DEFINE]
# SUITE_DIR is .scratch/shmem-tests/tests-sos (its test/unit) or .../tests-uh (its feature_tests/C). LIST
# is a file of test names (one a line, # comments) to run instead of all. Extra environment (KY_NODE_SPLIT,
# KY_PATH_HOST ...) passes through kyrun to every rank.
set -u
export LC_ALL=C
build="" suite="" np=2 list="" tmo=60 work="" defs=()
while getopts "b:s:n:l:t:o:D:" o; do
    case $o in
    b) build=$OPTARG ;; s) suite=$OPTARG ;; n) np=$OPTARG ;; l) list=$OPTARG ;; t) tmo=$OPTARG ;;
    o) work=$OPTARG ;; D) defs+=("-D$OPTARG") ;; *) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 2 ;;
    esac
done
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
[ -n "$build" ] && [ -n "$suite" ] || { sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 2; }
build=$(cd "$build" && pwd)
if [ -d "$suite/test/unit" ]; then srcdir="$suite/test/unit"; incs=(-I"$suite/test/include")
elif [ -d "$suite/feature_tests/C" ]; then srcdir="$suite/feature_tests/C"; incs=()
else echo "run-suite: no test/unit or feature_tests/C under $suite" >&2; exit 2; fi
work=${work:-$(mktemp -d)}
mkdir -p "$work"
kyrun="$build/bin/kyrun"
cflags=(-O1 -g -pthread -I"$root/include" "${incs[@]}" "${defs[@]}" -L"$build/lib" -Wl,-rpath,"$build/lib")
libs=(-lkyoyu -lm)

names=()
if [ -n "$list" ]; then
    while read -r n _; do case "$n" in ''|\#*) ;; *) names+=("$n") ;; esac; done < "$list"
else
    shopt -s nullglob
    for f in "$srcdir"/*.c "$srcdir"/*.cpp; do
        n=$(basename "${f%.*}")
        case "$n" in mt_lock) continue ;; esac # a part of mt_lock_test
        names+=("$n")
    done
fi

# The first name a failed compile or link says is missing, if it is a SHMEM name.
missing() {
    grep -oE "implicit declaration of function '[A-Za-z0-9_]+'|'[A-Za-z0-9_]+' (undeclared|was not declared)|undefined reference to \`[A-Za-z0-9_]+'|unknown type name '[A-Za-z0-9_]+'|'[A-Za-z0-9_]+' has not been declared|no matching function for call to '[A-Za-z0-9_]+" "$1" \
        | grep -oE "[\`'][A-Za-z0-9_]+" | tr -d "\`'" | grep -E '^_?(shmemx?_|SHMEMX?_|pshmem_|start_pes|shmalloc|shrealloc|shfree|shmemalign)' | head -1
}

nfail=0
for n in "${names[@]}"; do
    src="$srcdir/$n.c" cc=${CC:-cc} std=-std=gnu11
    [ -f "$src" ] || { src="$srcdir/$n.cpp"; cc=${CXX:-c++}; std=-std=gnu++17; }
    extra=()
    [ "$n" = mt_lock_test ] && extra=("$srcdir/mt_lock.c")
    [ "$n" = query_thread_funneled ] && { src="$srcdir/query_thread.c"; extra=(-DENABLE_THREADS); }
    if [ ! -f "$src" ]; then printf '%s\tfail\tno source\n' "$n"; nfail=$((nfail + 1)); continue; fi
    # built before from the same source against the same header: reuse it (libkyoyu is linked dynamically)
    if [ "$work/$n" -nt "$src" ] && [ "$work/$n" -nt "$root/include/shmem.h" ]; then
        :
    elif ! $cc $std "${cflags[@]}" -o "$work/$n" "$src" "${extra[@]}" "${libs[@]}" > "$work/$n.cc.log" 2>&1; then
        rm -f "$work/$n"
        m=$(missing "$work/$n.cc.log")
        # a type-generic call on a complex type: complex reductions are not in shmem.h
        [ -z "$m" ] && grep -q "_Generic' selector of type '_Complex" "$work/$n.cc.log" && m="complex reductions (C11 generic)"
        # a C11 generic called on a type the standard does not list for it (another implementation's extension)
        [ -z "$m" ] && t=$(grep -m1 -oE "_Generic' selector of type '[^']+'" "$work/$n.cc.log" | sed "s/.*type '//; s/'$//") \
            && [ -n "$t" ] && m="a C11 generic on $t (not a type the standard lists for it)"
        if [ -n "$m" ]; then printf '%s\tn/a\tuses %s\n' "$n" "$m"
        else printf '%s\tfail\tcompile: %s\n' "$n" "$(grep -m1 -E 'error' "$work/$n.cc.log" | cut -c1-160)"; nfail=$((nfail + 1)); fi
        continue
    fi
    # tests-uh states an expected exit code for some tests ("ExitCode99" in test_parameters.conf)
    want=0
    conf="$srcdir/test_parameters.conf"
    if [ -f "$conf" ]; then
        e=$(grep -E "^$n\.x," "$conf" | grep -oE 'ExitCode[0-9]+' | grep -oE '[0-9]+')
        [ -n "$e" ] && want=$e
    fi
    t0=$(date +%s.%N)
    timeout -k 5 "$tmo" "$kyrun" -n "$np" "$work/$n" > "$work/$n.run.log" 2>&1
    rc=$?
    dt=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ $rc -eq "$want" ]; then printf '%s\tpass\t%.1f s%s\n' "$n" "$dt" "$([ "$want" = 0 ] || echo " (exit $want, as the suite expects)")"
    else
        why="exit $rc"; [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timeout ${tmo} s"
        printf '%s\tfail\t%s: %s\n' "$n" "$why" "$(grep -m1 -iE 'error|fail|fatal|abort' "$work/$n.run.log" | cut -c1-160)"
        nfail=$((nfail + 1))
    fi
done
[ $nfail -eq 0 ]
