#!/bin/sh
# CTest tools.help: every program a user runs answers --help with its usage on stdout and exit status 0,
# without a launcher or a GPU (a newcomer's first command).   usage: check_help.sh PROGRAM...
fail=0
for p in "$@"; do
    name="$(basename "$p")"
    out="$(timeout 60 "$p" --help 2>/tmp/check_help.$$.err)"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL $name --help: exit status $rc"; cat /tmp/check_help.$$.err; fail=1
    elif ! printf '%s\n' "$out" | grep -q -- "$name"; then
        echo "FAIL $name --help: stdout does not name the program:"; printf '%s\n' "$out" | head -5; fail=1
    else
        echo "ok   $name --help: $(printf '%s\n' "$out" | head -n 1)"
    fi
done
rm -f /tmp/check_help.$$.err
[ "$fail" = 0 ] && echo "tools.help: PASS" || echo "tools.help: FAIL"
exit "$fail"
