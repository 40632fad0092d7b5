#!/bin/sh
# CTest install_consumer: install the build tree into a scratch prefix, then build the examples against
# the installed package two ways (CMake find_package(Kyoyu); mpicc + pkg-config) and run hello_put on 2
# ranks with each.   usage: install_consumer.sh BUILD_DIR SOURCE_DIR GENERATOR MPIEXEC [MPIEXEC FLAGS...]
set -eu
build="$1"; src="$2"; generator="$3"; mpiexec="$4"; shift 4
work="$build/install_consumer"
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"

step() { echo "== install_consumer: $*"; }

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }

# Only public headers are installed.
for h in "$prefix"/include/*.h "$prefix"/include/kyoyu/*.h; do
    case "$h" in
        "$prefix/include/kyoyu.h"|"$prefix/include/sms.h"|"$prefix/include/shmem.h"|"$prefix"/include/kyoyu/*.h) ;;
        *) echo "unexpected installed header: $h"; exit 1 ;;
    esac
done
[ -f "$src/include/kyoyu.h" ]
for h in "$src"/include/kyoyu/*.h; do
    [ -f "$prefix/include/kyoyu/$(basename "$h")" ] || { echo "missing installed header $h"; exit 1; }
done

step "standalone CMake build of examples/ with find_package(Kyoyu)"
cmake -S "$prefix/share/kyoyu/examples" -B "$work/examples-build" -G "$generator" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/examples-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

step "C++-only CMake project with find_package(Kyoyu)"
mkdir -p "$work/cxx"
cat >"$work/cxx/CMakeLists.txt" <<'CMK'
cmake_minimum_required(VERSION 3.24)
project(kyoyu_cxx_consumer LANGUAGES CXX)
find_package(Kyoyu REQUIRED)
add_executable(cxx_consumer main.cpp)
target_link_libraries(cxx_consumer PRIVATE Kyoyu::kyoyu)
CMK
cat >"$work/cxx/main.cpp" <<'CPP'
#include <kyoyu.h>
#include <cstdio>
int main() { std::printf("Kyoyu %s\n", ky_version()); return ky_initialized(); }
CPP
cmake -S "$work/cxx" -B "$work/cxx/build" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cxx.log" 2>&1 \
    && cmake --build "$work/cxx/build" >>"$work/cxx.log" 2>&1 && "$work/cxx/build/cxx_consumer" \
    || { cat "$work/cxx.log"; exit 1; }

step "the README's and docs/install.md's pkg-config commands, as written"
# Exactly what a user types (README "Example", docs/install.md "Using an installed Kyoyu"): no rpath or
# LD_LIBRARY_PATH added here, kyrun found on PATH. The program starts only because kyoyu.pc's Libs carry
# -Wl,-rpath,${libdir}; a prefix outside the system library path is the case that matters.
case ":${LD_LIBRARY_PATH:-}:" in *":$prefix/lib:"*) echo "LD_LIBRARY_PATH already names $prefix/lib"; exit 1 ;; esac
mkdir -p "$work/pc"
cp "$src/examples/hello_put.c" "$work/pc/"
(
    cd "$work/pc"
    export PATH="$prefix/bin:$PATH"
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    echo "\$ mpicc hello_put.c \$(pkg-config --cflags --libs kyoyu) -o hello_put"
    echo "  pkg-config --cflags --libs kyoyu: $(pkg-config --cflags --libs kyoyu)"
    mpicc hello_put.c $(pkg-config --cflags --libs kyoyu) -o hello_put
    mpicc hello_put.c $(pkg-config --static --cflags --libs kyoyu) -o hello_put_pcstatic
    echo "\$ kyrun -n 2 ./hello_put"
    out="$(kyrun -n 2 ./hello_put 2>&1)" || { echo "$out"; echo "kyrun -n 2 ./hello_put failed"; exit 1; }
    echo "$out"
    [ "$(echo "$out" | grep -c ': ok$' || true)" = 2 ] || { echo "hello_put: expected 2 'ok' lines"; exit 1; }
    out="$(kyrun -n 2 ./hello_put_pcstatic 2>&1)" || { echo "$out"; echo "hello_put_pcstatic failed"; exit 1; }
    [ "$(echo "$out" | grep -c ': ok$' || true)" = 2 ] || { echo "$out"; echo "hello_put_pcstatic: expected 2 'ok' lines"; exit 1; }
)

step "run the CMake-built examples on 2 ranks"
for exe in "$work/examples-build/hello_put" "$work/examples-build/hello_put_static"; do
    out="$("$mpiexec" "$@" "$exe" 2>&1)" || { echo "$out"; echo "$exe failed"; exit 1; }
    echo "$out"
    n_ok="$(echo "$out" | grep -c ': ok$' || true)"
    [ "$n_ok" = 2 ] || { echo "$exe: expected 2 'ok' lines"; exit 1; }
done

step "kyrun and kyinfo installed"
KYRUN_DRYRUN=1 "$prefix/bin/kyrun" -n 2 true >/dev/null
"$prefix/bin/kyrun" --info >"$work/info.log" 2>&1 || { cat "$work/info.log"; exit 1; }
grep -q KY_ "$work/info.log" || { echo "kyrun --info printed no KY_ setting"; cat "$work/info.log"; exit 1; }
step "kybench installed (finds its package in share/kyoyu)"
"$prefix/bin/kybench" --help >"$work/kybench.log" 2>&1 || { cat "$work/kybench.log"; exit 1; }
step "PASS"
