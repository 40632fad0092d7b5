#!/usr/bin/env bash
# CTest shmem.suite.*: run the tests of tests/shmem/suite.list from the fetched tests-sos suite on N ranks.
#   suite-test.sh BUILD_DIR SUITE_DIR LIST N WORKDIR
# Exit 77 (skipped) with a message when the suite has not been fetched (tools/fetch-shmem-tests).
set -u
build="$1" suite="$2" list="$3" n="$4" work="$5"
if [ ! -d "$suite/test/unit" ]; then
    echo "SKIP: the OpenSHMEM test suite is not at $suite (run tools/fetch-shmem-tests)"
    exit 77
fi
mkdir -p "$work"
out=$("$(dirname "$0")/run-suite.sh" -b "$build" -s "$suite" -l "$list" -n "$n" -o "$work" -t 60)
rc=$?
echo "$out"
echo "$(echo "$out" | grep -c "	pass	") passed, $(echo "$out" | grep -c "	fail	") failed, $(echo "$out" | grep -c "	n/a	") n/a"
# every listed test must pass: an n/a here means the list names a test shmem.h cannot build
if echo "$out" | grep -q "	n/a	"; then exit 1; fi
exit $rc
