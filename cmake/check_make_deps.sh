#!/bin/sh
# make deps-apt on a machine whose package manager cannot install anything (no registry, as on the GPU
# machine): a missing optional package is a warning and exit 0, a missing required one an error and exit 1.
# apt-get is a stand-in on PATH that fails (nothing is installed for real); the log goes to a scratch folder.
#   check_make_deps.sh SOURCE_DIR
set -u
src=$1
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin"
printf '#!/bin/sh\necho "apt-get $*: no registry (test stand-in)"\nexit 100\n' >"$t/bin/apt-get"
# sudo: the stand-in runs what it is given (non-root runs go through it)
printf '#!/bin/sh\nexec "$@"\n' >"$t/bin/sudo"
chmod +x "$t/bin/apt-get" "$t/bin/sudo"
fail=0
run() { # expected-status expected-text checks
    out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$t/bin:$PATH" make --no-print-directory -C "$src" deps-apt DEPS_DIR="$t/deps" DEPS_CHECKS="$3" 2>&1)
    rc=$?
    if [ "$rc" -ne "$1" ] || ! printf '%s' "$out" | grep -q "$2"; then
        echo "FAIL: checks '$3': exit $rc (expected $1), output:"
        echo "$out"
        fail=1
    else
        echo "ok: checks '$3': exit $rc, $(printf '%s' "$out" | grep "$2" | head -1)"
    fi
}
run 0 "could not install the optional fake-optional-pkg" "false # ?fake-optional-pkg"
run 2 "failed to install  fake-required-pkg" "false # fake-required-pkg"
run 2 "failed to install  fake-required-pkg" "false # fake-required-pkg
false # ?fake-optional-pkg"
run 0 "deps: all present" "true # ?fake-optional-pkg"
exit $fail
