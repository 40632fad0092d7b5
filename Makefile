# Kyoyu: the entry point. `make demo` and `make test` work on a fresh Debian machine (as root, or with
# sudo): missing packages are installed first, quietly (log in .deps/apt.log), and nothing is redone.
#
#   make deps       install what is missing: cmake g++ make Open MPI GoogleTest pkg-config UCX python3 (+numpy,
#                   matplotlib for the benchmark figures; libclang from PyPI for kycc)
#   make build      configure (Ninja if present) and build into build/
#   make test       deps + build + the CPU tests (ctest -L cpu)
#   make test-ucx   the CPU tests again over the UCX transport, every rank its own node; skipped without UCX
#   make test-gpu   build + the GPU tests (ctest -L gpu); skipped when no GPU is found
#   make test-asan  AddressSanitizer build (+ LeakSanitizer) in build-asan/, CPU only, then the DSM tests, the
#                   runtime and comm basics and the io layer: ctest -L '^(dsm|runtime|seg|rma|am|barrier|threads|sms|io)$' with
#                   ASAN_OPTIONS handle_segv=0 (the DSM's own SIGSEGV handler serves the page faults),
#                   allow_user_segv_handler=1, detect_leaks=1 (Open MPI's: tests/sanitizers/lsan.supp)
#   make test-tsan  ThreadSanitizer build in build-tsan/, CPU only, then ctest -L
#                   '^(dsm|runtime|seg|barrier|threads|sms)$' (not rma, am: Open MPI writes their buffers behind
#                   TSan's back) with KY_GAS_BASE=0x1000000000 (the global space inside TSan's application
#                   range), TSAN_OPTIONS report_signal_unsafe=0 (page faults are served in the signal handler),
#                   Open MPI's reports suppressed (tests/sanitizers/tsan.supp), OMP_THREAD_LIMIT=1 (libgomp is
#                   not instrumented: its barriers would look like races)
#   make bench      build + bench/run_all.sh
#   make demo       deps + build + the DSM stencil on 4 local ranks: faults, preload, barrier against MPI, checked
#                   against a serial run (build/bin/kyrun -n 4 build/bin/ky_stencil --variant all --check)
#   make install PREFIX=/usr/local
#   make format     rewrite every C, C++ and CUDA source as .clang-format says (clang-format 14);
#                   make format-check (and make test's format.check) only checks
#   make offload-check  which compilers and back ends of include/kyoyu/offload.h build and run here, and
#                   whether anything can offload to a GPU (tools/offload-check; GCC's nvptx offloading from
#                   the .deb files in OFFLOAD_DEBS when it holds some; docs/offload.md)
#   make clean
# Variables: BUILD=build  JOBS=<cores>  CMAKE_ARGS="-DKY_ENABLE_CUDA=OFF ..."  CTEST_ARGS="-R rma"
#            DEMO_RANKS=4  DEMO_ARGS="--nz 128 ..."  PREFIX=/usr/local
#            SAN_LABELS='^(dsm|...)$'  TSAN_LABELS=...  ASAN_BUILD=build-asan  TSAN_BUILD=build-tsan  TSAN_GAS_BASE=0x1000000000
#            OFFLOAD_DEBS=.scratch/offload-debs

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
CTEST_ARGS ?=
DEMO_RANKS ?= 4
# 128^3 doubles per array, 32 steps, best of 3: a few seconds on 2 cores with 4 ranks
DEMO_ARGS ?= --nz 128 --ny 128 --nx 128 --nt 32 --bt 4 --reps 3 --points 7,27
DEPS_DIR := .deps
# Sanitizer runs (test-asan, test-tsan): their build folders and the CTest labels they run.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
SAN_LABELS ?= ^(dsm|runtime|seg|rma|am|barrier|threads|sms|io)$$
# ThreadSanitizer leaves out am: Open MPI itself writes a long message's payload into the program's buffer
# (on the progress thread) and orders that with atomics TSan cannot see, so its tests report false races
# (and time out at TSan's speed). rma passes since the progress engine's happens-before hook (2026-11-28:
# 34 rma and am tests under TSan, the 17 rma ones clean).
TSAN_LABELS ?= ^(dsm|runtime|seg|rma|barrier|threads|sms)$$
# Inside ThreadSanitizer's low application range (4 KiB .. 512 GiB on x86-64 Linux); the default
# 0x300000000000 is TSan's metadata.
TSAN_GAS_BASE ?= 0x1000000000
# GCC's nvptx offloading as .deb files for make offload-check (tools/offload-check --fetch DIR gets them)
OFFLOAD_DEBS ?= .scratch/offload-debs
GENERATOR := $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)

.PHONY: all help deps deps-apt build test test-ucx test-gpu test-asan test-tsan bench demo install clean format format-check \
        offload-check

all: build

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

# ---- dependencies ---------------------------------------------------------------------------------------
# Each line: a check (a shell test) and the Debian packages that satisfy it. A package counts when dpkg
# has it even if another python3 (pyenv, venv) comes first on PATH. A package marked ? is optional (UCX
# transport, the format check, figures, the io layer's HDF5 and h5py): failing to install it (no package
# registry, as on the GPU machine) is a warning, not a failed build.
define DEPS_CHECKS
command -v cmake # cmake
command -v g++ # g++
command -v make # make
command -v mpirun # openmpi-bin
command -v mpicc # libopenmpi-dev
test -f /usr/include/gtest/gtest.h -o -f /usr/src/googletest/CMakeLists.txt # libgtest-dev
command -v pkg-config # pkg-config
pkg-config --exists ucx # ?libucx-dev
command -v clang-format # ?clang-format
command -v python3 # python3
python3 -c 'import numpy' || installed python3-numpy # python3-numpy
python3 -c 'import matplotlib' || installed python3-matplotlib # ?python3-matplotlib
pkg-config --exists hdf5-openmpi # ?libhdf5-openmpi-dev
python3 -c 'import h5py' || installed python3-h5py # ?python3-h5py
endef
export DEPS_CHECKS

# kycc (tools/kycc) parses C with libclang's Python bindings: the PyPI wheel (it carries libclang itself),
# for the python3 on PATH that kycc runs with; without it the kycc tests skip themselves.
deps: deps-apt
	@if python3 -c 'import clang.cindex' >/dev/null 2>&1; then exit 0; fi; \
	mkdir -p $(DEPS_DIR); \
	if python3 -m pip install --quiet libclang >>$(DEPS_DIR)/pip.log 2>&1 || \
	   python3 -m pip install --quiet --break-system-packages libclang >>$(DEPS_DIR)/pip.log 2>&1; then \
	    echo "deps: installed libclang (Python bindings, for kycc)"; \
	else echo "deps: could not install libclang for kycc (log: $(DEPS_DIR)/pip.log); kycc tests will skip"; fi

deps-apt:
	@installed() { dpkg-query -W -f='$${Status}' "$$1" 2>/dev/null | grep -q 'install ok installed'; }; \
	missing=""; optional=""; \
	while IFS='#' read -r check pkgs; do \
	    [ -n "$$check" ] || continue; \
	    eval "$$check" >/dev/null 2>&1 && continue; \
	    case "$$pkgs" in *'?'*) optional="$$optional $${pkgs#*\?}" ;; *) missing="$$missing $$pkgs" ;; esac; \
	done <<< "$$DEPS_CHECKS"; \
	if [ -z "$$missing$$optional" ]; then echo "deps: all present"; exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	    [ -z "$$missing" ] && { echo "deps: optional ones missing:$$optional (no apt-get here)"; exit 0; }; \
	    echo "deps: missing:$$missing (no apt-get here: install them by hand)"; exit 1; fi; \
	sudo=""; \
	if [ "$$(id -u)" != 0 ]; then \
	    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	    else echo "deps: missing:$$missing$$optional (run as root or install sudo)"; [ -z "$$missing" ]; exit; fi; fi; \
	mkdir -p $(DEPS_DIR); \
	log="$(DEPS_DIR)/apt.log"; \
	apt() { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get "$$@" >>"$$log" 2>&1; }; \
	apt update -qq || echo "deps: apt-get update failed (offline?): installing from what apt knows" >>"$$log"; \
	if [ -n "$$missing" ]; then \
	    if apt install -y -qq --no-install-recommends $$missing; then echo "deps: installed$$missing (log: $$log)"; \
	    else tail -n 20 "$$log"; echo "deps: failed to install$$missing (log: $$log)"; exit 1; fi; fi; \
	if [ -n "$$optional" ]; then \
	    if apt install -y -qq --no-install-recommends $$optional; then echo "deps: installed$$optional (log: $$log)"; \
	    else echo "deps: could not install the optional$$optional (log: $$log): built without them"; fi; fi

# ---- build ------------------------------------------------------------------------------------------------
build: deps
	@mkdir -p $(BUILD); \
	if [ ! -f $(BUILD)/CMakeCache.txt ] || [ -n "$(CMAKE_ARGS)" ]; then \
	    gen=""; [ -f $(BUILD)/CMakeCache.txt ] || gen='-G$(GENERATOR)'; \
	    cmake -S . -B $(BUILD) "$$gen" $(CMAKE_ARGS) >$(BUILD)/configure.log 2>&1 \
	        || { tail -n 40 $(BUILD)/configure.log; echo "build: configure failed (log: $(BUILD)/configure.log)"; exit 1; }; \
	    grep -E '^-- Kyoyu' $(BUILD)/configure.log | sed 's/^-- /build: /' || true; \
	fi; \
	start=$$(date +%s); \
	cmake --build $(BUILD) --parallel $(JOBS) >$(BUILD)/build.log 2>&1 \
	    || { grep -E -B2 -A6 'error|Error' $(BUILD)/build.log | tail -n 60; \
	         echo "build: failed (log: $(BUILD)/build.log)"; exit 1; }; \
	warnings=$$(grep -c 'warning:' $(BUILD)/build.log || true); \
	echo "build: ok in $$(( $$(date +%s) - start )) s, $$warnings warning(s) (log: $(BUILD)/build.log)"

# ---- tests ------------------------------------------------------------------------------------------------
test: deps build
	@ctest --test-dir $(BUILD) -L cpu --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The whole CPU suite again with the UCX transport and every rank its own node, so that UCX carries what
# MPI or shared memory would (KY_TRANSPORT=ucx KY_NODE_SPLIT=rank; a test's own settings win): not part of
# `make test` (it doubles its time); says so and stops in a build without UCX.
test-ucx: deps build
	@if ! $(BUILD)/bin/kyinfo --build 2>/dev/null | grep -q 'UCX *on:'; then \
	    echo "test-ucx: this build has no UCX transport (libucx-dev, pkg-config ucx): skipping"; exit 0; fi; \
	KY_TRANSPORT=ucx KY_NODE_SPLIT=rank ctest --test-dir $(BUILD) -L cpu --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-gpu:
	@if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then echo "test-gpu: no GPU found, skipping"; exit 0; fi; \
	$(MAKE) --no-print-directory build; \
	ctest --test-dir $(BUILD) -L gpu --output-on-failure $(CTEST_ARGS)

# ---- sanitizers: the DSM and the runtime/comm basics under AddressSanitizer and ThreadSanitizer ------------
# Each configures and builds its own folder (CUDA off), then runs the labelled tests there. Options the
# caller already has in ASAN_OPTIONS / TSAN_OPTIONS come after ours, so they win.
SAN_SUPP := $(CURDIR)/tests/sanitizers

test-asan:
	@$(MAKE) --no-print-directory build BUILD=$(ASAN_BUILD) \
	    CMAKE_ARGS="-DKY_SANITIZE=address -DKY_ENABLE_CUDA=OFF $(CMAKE_ARGS)"; \
	export ASAN_OPTIONS="handle_segv=0:allow_user_segv_handler=1:detect_leaks=1:fast_unwind_on_malloc=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"; \
	export LSAN_OPTIONS="suppressions=$(SAN_SUPP)/lsan.supp:print_suppressions=0$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}"; \
	echo "test-asan: ASAN_OPTIONS=$$ASAN_OPTIONS"; \
	ctest --test-dir $(ASAN_BUILD) -L '$(SAN_LABELS)' -LE '^gpu$$' --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-tsan:
	@$(MAKE) --no-print-directory build BUILD=$(TSAN_BUILD) \
	    CMAKE_ARGS="-DKY_SANITIZE=thread -DKY_ENABLE_CUDA=OFF $(CMAKE_ARGS)"; \
	export TSAN_OPTIONS="report_signal_unsafe=0 second_deadlock_stack=1 suppressions=$(SAN_SUPP)/tsan.supp$${TSAN_OPTIONS:+ $$TSAN_OPTIONS}"; \
	export KY_GAS_BASE=$(TSAN_GAS_BASE) OMP_THREAD_LIMIT=1; \
	echo "test-tsan: TSAN_OPTIONS=$$TSAN_OPTIONS KY_GAS_BASE=$$KY_GAS_BASE OMP_THREAD_LIMIT=1"; \
	ctest --test-dir $(TSAN_BUILD) -L '$(TSAN_LABELS)' -LE '^gpu$$' --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# ---- benchmarks and demo ---------------------------------------------------------------------------------
bench: build
	@if [ -f bench/run_all.sh ]; then BUILD=$(BUILD) bash bench/run_all.sh; \
	else echo "bench: bench/run_all.sh does not exist yet; benchmark programs are in $(BUILD)/bin"; fi

demo: deps build
	@if [ ! -x $(BUILD)/bin/ky_stencil ]; then echo "demo: $(BUILD)/bin/ky_stencil was not built"; exit 1; fi; \
	echo "demo: 3-D stencils with temporal blocking on $(DEMO_RANKS) ranks, one z slab each, in Kyoyu's global address"; \
	echo "demo: space (faults only; preload/overload; barrier per step) against hand-written MPI halo exchange"; \
	KY_TIMEOUT=$${KY_TIMEOUT:-120} $(BUILD)/bin/kyrun -n $(DEMO_RANKS) $(BUILD)/bin/ky_stencil --variant all --check $(DEMO_ARGS)

# ---- install / clean -------------------------------------------------------------------------------------
install: build
	@cmake --install $(BUILD) --prefix "$(PREFIX)" >$(BUILD)/install.log 2>&1 \
	    || { tail -n 20 $(BUILD)/install.log; echo "install: failed"; exit 1; }; \
	echo "install: Kyoyu installed into $(PREFIX) (log: $(BUILD)/install.log)"

clean:
	@rm -rf $(BUILD) && echo "clean: removed $(BUILD)"

# ---- format (.clang-format, clang-format 14; `make test` checks it as format.check) ---------------------------
format:
	@sh cmake/check_format.sh . --fix

format-check:
	@sh cmake/check_format.sh .

# Reports, does not judge: nothing is installed (the nvptx packages are unpacked with dpkg -x, if given).
offload-check:
	@tools/offload-check $(if $(wildcard $(OFFLOAD_DEBS)/*.deb),--debs $(OFFLOAD_DEBS))
