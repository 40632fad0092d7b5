#!/usr/bin/env bash
# The io layer's work of one GPU-machine call (issue: HDF5 straight from GPU memory, seed 002): builds the io
# targets (Release, own build folder; HDF5 and cuFile as CMake finds them: a serial HDF5 takes the raw path, and
# where the machine has none, or only its runtime library, the copy of Debian's serial HDF5 1.10.8 carried in
# .scratch/hdf5-serial; cuFile beside CUDA or from the pip wheel nvidia-cufile), runs the io tests (CPU and
# GPU: bounce, cufile on 1-4 ranks, auto from a table, cufile against bounce), measures the KY_IO_TABLE table on
# /tmp and on the repository's disk when that is another file system (kybench io-tune), then kybench run io
# (the N-body snapshot, N = 1e3..1e8, every path beside plain HDF5, h5py and the raw O_DIRECT bandwidth) with
# that table. Each step under `timeout`, the whole call under IO_DEVICE_TOTAL seconds (420: later steps get what
# the earlier ones left; the benchmark stops before an N that would not fit). Everything lands in $OUT (or
# .scratch/io-device): summary.txt, one log per step, results/ (JSON lines, the tables), io-device.tgz.
#
#   bench/io_device.sh [--help] [--quick]     --quick: N up to 1e6 and sizes up to 64M (a dry run)
#
# Where the machine has no GoogleTest, carry a copy (.scratch/googletest, as tools/device-run says); where it has
# no HDF5 headers, carry .scratch/hdf5-serial (made here by tools/fetch-hdf5-serial).
set -u
case "${1:-}" in
    -h | --help)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
esac
quick=0
[ "${1:-}" = "--quick" ] && quick=1
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out io-device
mkdir -p "$out/results"
# the whole call within IO_DEVICE_TOTAL seconds (default 420): a step gets its nominal limit or what is left
# after the reserve the later steps need, whichever is less. The nominal limits and reserves are for 420 s; a
# smaller total scales both (a call of 250 s once gave the configure step 10 s, all a fixed reserve left it).
total=${IO_DEVICE_TOTAL:-420}
cap() { # nominal limit, nominal reserve -> seconds for this step (at least 10)
    local lim=$1 res=$2
    [ "$total" -lt 420 ] && lim=$((lim * total / 420)) res=$((res * total / 420))
    local left=$((total - SECONDS - res))
    [ $left -lt "$lim" ] && echo $((left < 10 ? 10 : left)) || echo "$lim"
}
finish() {
    note "total $SECONDS s"
    tar -C "$out" -czf "$out/io-device.tgz" --exclude io-device.tgz . 2>/dev/null
    exit "${1:-0}"
}
note "io_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -4 | tr '\n' ';')"
note "cpus $(nproc); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
note "disks:"
df -T /tmp "$root" 2>&1 | tee -a "$S"
# what cuFile will find: the kernel driver (without it: compatibility mode), the compat setting, gdscheck
note "nvidia_fs module: $(lsmod 2>/dev/null | grep -c '^nvidia_fs') loaded; /etc/cufile.json: $(grep -o '"allow_compat_mode"[^,]*' /etc/cufile.json 2>/dev/null || echo absent)"
if grep -q '"allow_compat_mode"[[:space:]]*:[[:space:]]*false' /etc/cufile.json 2>/dev/null; then
    # no nvidia-fs and compat mode off would make every cuFile call fail: a copy with it on, for this run only
    sed 's/"allow_compat_mode"[[:space:]]*:[[:space:]]*false/"allow_compat_mode": true/' /etc/cufile.json >"$out/cufile.json"
    export CUFILE_ENV_PATH_JSON="$out/cufile.json"
    note "cuFile: compat mode switched on for this run (CUFILE_ENV_PATH_JSON=$out/cufile.json)"
fi
for g in /usr/local/cuda/gds/tools/gdscheck /usr/local/cuda/gds/tools/gdscheck.py; do
    if [ -x "$g" ]; then
        timeout 30 "$g" -p >"$out/gdscheck.log" 2>&1
        grep -iE 'compat|nvidia-fs|NVMe|ext4|xfs|Platform verification' "$out/gdscheck.log" | head -12 | tee -a "$S"
        break
    fi
done

gt=""
[ -d /usr/src/googletest ] || [ ! -d "$root/.scratch/googletest" ] || gt="-DKY_GTEST_SOURCE=$root/.scratch/googletest"
# HDF5: what the machine has (the io layer takes a parallel one, else a serial one: the raw path), h5py's own
note "HDF5 here: pkg-config hdf5-openmpi $(pkg-config --modversion hdf5-openmpi 2>/dev/null || echo -), hdf5-serial" \
    "$(pkg-config --modversion hdf5-serial 2>/dev/null || echo -); headers $(ls -d /usr/include/hdf5/*/hdf5.h /usr/include/hdf5.h 2>/dev/null | tr '\n' ' ');" \
    "libraries $(ls /usr/lib/*/libhdf5*.so* /usr/lib64/libhdf5*.so* 2>/dev/null | tr '\n' ' ')"
note "h5py: $(python3 -c 'import h5py; print(h5py.__version__, "HDF5", h5py.version.hdf5_version)' 2>&1 | tail -1)"
hdf=()
kit="$root/.scratch/hdf5-serial"
if [ ! -f /usr/include/hdf5/serial/hdf5.h ] && [ ! -f /usr/include/hdf5/openmpi/hdf5.h ] &&
    [ ! -f /usr/include/hdf5.h ]; then
    # no headers: the carried copy's, with the machine's own serial library if it has one, else the copy's
    lib=$(ls /usr/lib/*/libhdf5_serial.so.103 2>/dev/null | head -1)
    if [ -z "$lib" ] && [ -f "$kit/lib/libhdf5_serial.so.103" ]; then
        # only the libraries the machine lacks, so that its own (newer) ones stay first
        mkdir -p "$out/hdf5-libs"
        ln -sf "$kit/lib/libhdf5_serial.so.103" "$out/hdf5-libs/"
        for l in "$kit"/lib/*.so*; do
            ldconfig -p | grep -q "/$(basename "$l")\$" || ln -sf "$l" "$out/hdf5-libs/"
        done
        lib="$out/hdf5-libs/libhdf5_serial.so.103"
        export LD_LIBRARY_PATH="$out/hdf5-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        note "HDF5: the carried serial HDF5 1.10.8 ($kit; from it: $(ls "$out/hdf5-libs" | tr '\n' ' '))"
    fi
    if [ -n "$lib" ] && [ -d "$kit/include" ]; then
        hdf=(-DKY_HDF5_INCLUDE="$kit/include" -DKY_HDF5_LIBRARY="$lib")
        export HDF5_DISABLE_VERSION_CHECK=2 # the carried 1.10.8 headers beside another 1.10.x library
        note "HDF5: headers carried ($kit/include), library $lib"
    else
        note "HDF5: no headers here and none carried ($kit): carry .scratch/hdf5-serial"
    fi
fi
# cuFile: beside CUDA, or the pip wheel (CMake looks in both)
note "cuFile here: $(ls /usr/local/cuda/targets/*/lib/libcufile.so* /usr/local/cuda/lib64/libcufile.so* 2>/dev/null | head -2 | tr '\n' ' ')" \
    "pip: $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d) for p in nvidia.__path__ for d in ("cufile", "cu13", "cu12") if os.path.isfile(os.path.join(p, d, "include", "cufile.h"))))' 2>/dev/null || echo -)"
B=build-iodev
step configure "$(cap 90 300)" cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DKY_BUILD_EXAMPLES=OFF -DKY_BUILD_APPS=OFF $gt "${hdf[@]}"
grep -E 'io layer|CUDA ON|CUDA OFF' "$out/configure.log" | tee -a "$S"
note "CMake's choices: $(grep -E '^(KY_CUFILE_INCLUDE|KY_CUFILE_LIBRARY|KY_HDF5_INCLUDE|KY_HDF5_LIBRARY|KY_HDF5_SERIAL_LIB|HDF5_C_LIBRARY_hdf5):' $B/CMakeCache.txt 2>/dev/null | tr '\n' ' ')"
if ! grep -q 'io layer ON' "$out/configure.log"; then
    note "no HDF5 found: the io layer is not built here (nothing to measure)"
    finish 1
fi
# the benchmark's targets first: a machine without GoogleTest still measures
step build "$(cap 200 180)" cmake --build $B -j"$(nproc)" --target kyoyu kyinfo ky_bench_io || finish 1
step build_tests "$(cap 120 170)" cmake --build $B -j"$(nproc)" --target test_io io_crash io_cufile_mock ||
    note "the io tests did not build (GoogleTest missing? carry .scratch/googletest): see build_tests.log"
K=$B/bin/kyrun

# the io tests: CPU ones, then every GPU one (bounce, smallchunk, cufile 1-4 ranks, auto 1/2/4)
step tests "$(cap 120 160)" ctest --test-dir $B -R '^(gpu\.)?io\.' -j4 --output-on-failure
grep -E 'tests passed|\*\*\*Failed|Failed  |Not Run|Passed|Skipped' "$out/tests.log" | tee -a "$S"
# the tests' files lie in the build folder: where /tmp is another file system (O_DIRECT taken or refused
# differently), the cuFile round trips once more there
fs_tmp=$(stat -f -c %T /tmp 2>/dev/null)
fs_repo=$(stat -f -c %T "$root" 2>/dev/null)
if [ "$fs_tmp" != "$fs_repo" ]; then
    mkdir -p /tmp/kyoyu-io-tests
    step tests_tmp "$(cap 60 150)" env KY_TEST_MEMKIND=gpu KY_IO_PATH=cufile KY_TEST_TMPDIR=/tmp/kyoyu-io-tests $K -n 2 \
        --gpus-per-rank 1 $B/bin/test_io --gtest_filter='Io.CufileForced:Io.CufileCross:Io.ArrayRoundTrip:Io.Components'
    grep -E 'PASSED|FAILED|SKIPPED' "$out/tests_tmp.log" | head -8 | tee -a "$S"
fi

# the table KY_IO_PATH=auto reads: /tmp, and the repository's disk where it is another file system
table="$out/results/kyoyu-io-table.txt"
tmax=1G
[ $quick = 1 ] && tmax=64M
dirs=(/tmp)
[ "$fs_tmp" != "$fs_repo" ] && mkdir -p "$root/.scratch/io-tune" && dirs+=("$root/.scratch/io-tune")
step tune "$(cap 90 100)" $B/bin/kybench io-tune "${dirs[@]}" --build $B --out "$table" --tmax $tmax
grep -vE '^#' "$table" 2>/dev/null | column -t | tee -a "$S"
grep -E '^# cufile|failed' "$out/tune.log" | head -4 | tee -a "$S"

# the benchmark, auto choosing from the table just measured
kind=nvidia-h100-x1
nvidia-smi -L 2>/dev/null | grep -q H200 && kind=nvidia-h200
nmax=1e8
[ $quick = 1 ] && nmax=1e6
lim=$(cap 220 95) # the trace and threads steps after it need ~90 s
step bench "$lim" env KY_IO_TABLE="$table" KY_BENCH_IO_DIR=/tmp \
    BENCH_IO_BENCH_ARGS="--nmax $nmax --budget $((lim > 35 ? lim - 25 : 10))" \
    $B/bin/kybench run io --build $B --gpus --machine $kind --out "$out/results/io"
sed -n '/^io_bench.py: GB\/s/,$p' "$out/results/io/io.log" | tee -a "$S"
grep -E '^# ' "$out/results/io/io.log" | head -6 | tee -a "$S"
# where a bounce write's time goes (KY_DEBUG=trace: per dataset create, transfer, attributes; per piece the GPU
# checksum, copy waits, copies issued, file calls; per file the fsync and rename), N = 1e7
step trace "$(cap 40 0)" env KY_DEBUG=trace KY_DEBUG_SUBSYS=io KY_IO_PATH=bounce $K -n 1 --gpus-per-rank 1 \
    $B/bin/ky_bench_io --dir /tmp --reps 1 --nmin 10000000 --nmax 10000000
grep -E 'bounce (write|read)|transfer|fsync' "$out/trace.log" | sed 's/^[^:]*:[^:]*:[^:]*: //' | head -12 | tee -a "$S"
# several requests in flight (KY_IO_THREADS: each raw-path file call split over that many threads), N = 1e7,
# the raw O_DIRECT floor and h5py beside in every run
for t in 1 2 4 8; do
    step "threads$t" "$(cap 15 0)" env KY_IO_THREADS=$t KY_IO_PATH=bounce $K -n 1 --gpus-per-rank 1 \
        $B/bin/ky_bench_io --dir /tmp --reps 2 --nmin 10000000 --nmax 10000000
    grep -E '^ +10000000' "$out/threads$t.log" | sed "s/^/KY_IO_THREADS=$t /" | tee -a "$S"
done
# which path auto took per N (the io log of one more small run would say; the table above decides)
finish 0
