#!/bin/sh
# CTest kyrun: the launcher's command line (dry run), its errors, --info, and a real 2-rank run.
#   usage: check_kyrun.sh BIN_DIR      (BIN_DIR holds kyrun, kyinfo and hello_put)
set -u
bin="$1"
kyrun="$bin/kyrun"
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }

cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"
big=$((cores + 1))
out="$(KY_DEMO_SETTING=7 KYRUN_DRYRUN=1 "$kyrun" -n "$big" --gpus-per-rank 2 --node-split -- prog a "b c")"
echo "dry run: $out"
case "$out" in *mpirun*|*mpiexec*) ok "finds a launcher" ;; *) bad "no launcher in '$out'" ;; esac
if "$kyrun" --help >/dev/null 2>&1 && [ -n "$(KYRUN_DRYRUN=1 "$kyrun" -n 1 true 2>/dev/null)" ]; then ok "--help"; else bad "--help"; fi
if has "$out" "Open MPI" || mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    has "$out" "-x KY_DEMO_SETTING" && ok "passes KY_* with -x" || bad "KY_DEMO_SETTING not passed"
    has "$out" "-x KY_GPUS_PER_RANK" && ok "KY_GPUS_PER_RANK passed" || bad "KY_GPUS_PER_RANK not passed"
    has "$out" "-x KY_NODE_SPLIT" && ok "KY_NODE_SPLIT passed" || bad "KY_NODE_SPLIT not passed"
    has "$out" "-x NCCL_NVLS_ENABLE" && ok "NVLS variables passed" || bad "NCCL_NVLS_ENABLE not passed"
    has "$out" "--oversubscribe" && ok "oversubscribes $big ranks on $cores cores" || bad "no --oversubscribe"
    small="$(KYRUN_DRYRUN=1 "$kyrun" -n 1 prog)"
    has "$small" "--oversubscribe" && bad "--oversubscribe for 1 rank" || ok "no --oversubscribe for 1 rank"
    if [ "$(id -u)" = 0 ]; then
        has "$out" "--allow-run-as-root" && ok "allows root" || bad "no --allow-run-as-root as root"
    fi
fi
has "$out" "prog a b\\ c" && ok "program and arguments kept" || bad "arguments mangled"

# a fake MPICH launcher: -genvlist instead of -x
fake="$(mktemp -d)"
printf '#!/bin/sh\necho "HYDRA build details:"\n' >"$fake/mpiexec"
chmod +x "$fake/mpiexec"
h="$(KY_X=1 KYRUN_MPIRUN="$fake/mpiexec" KYRUN_DRYRUN=1 "$kyrun" -n 2 prog)"
has "$h" "-genvlist" && has "$h" "KY_X" && ok "MPICH: -genvlist" || bad "MPICH command: $h"
rm -rf "$fake"

# errors
nompi="$(mktemp -d)"   # a PATH with a shell and basic tools but no MPI launcher
for t in bash env dirname readlink sed sort nproc id cat; do
    p="$(command -v "$t")" && ln -s "$p" "$nompi/$t"
done
msg="$(PATH="$nompi" KYRUN_MPIRUN= "$nompi/bash" "$kyrun" -n 2 prog 2>&1)"; rc=$?
rm -rf "$nompi"
[ "$rc" = 127 ] && has "$msg" "no MPI launcher found" && ok "no MPI: exit 127 with a message" \
    || bad "no MPI: rc $rc, '$msg'"
"$kyrun" -n zero prog >/dev/null 2>&1 && bad "-n zero accepted" || ok "-n zero refused"
"$kyrun" prog >/dev/null 2>&1 && bad "missing -n accepted" || ok "missing -n refused"

# --info runs kyinfo next to kyrun
info="$("$kyrun" --info 2>&1)"
has "$info" "KY_TIMEOUT" && has "$info" "KY_NODE_SPLIT" && ok "--info lists settings" || bad "--info: $info"

# a real run
if [ -x "$bin/hello_put" ]; then
    run="$("$kyrun" -n 2 "$bin/hello_put" 2>&1)"
    [ "$(echo "$run" | grep -c ': ok$')" = 2 ] && ok "kyrun -n 2 hello_put" || bad "hello_put run: $run"
fi
[ "$fail" = 0 ] && echo "kyrun: PASS" || echo "kyrun: FAIL"
exit "$fail"
