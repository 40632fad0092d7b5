"""kybench suites: the registry of benchmark cases and `kybench run`.

A suite is a list of cases; a case is one program run through kyrun with the environment that selects a
path (KY_NODE_SPLIT, KY_GPUS_PER_RANK, ...) and the flags of a size range. Later suites (coll, dsm,
stencil) add entries to SUITES; nothing else changes. Each case writes <out>/<case>.jsonl (JSON lines of
docs/benchmarks.md); everything the programs print goes to <out>/<suite>.log with each command line and its
exit status; one progress line per case goes to stdout."""
import datetime
import fnmatch
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from . import records

# Flags by range: "full" on a GPU machine (the numbers that count) or with BENCH_FULL=1 / --full, "cpu" on
# a machine without GPUs (trends in a minute or two), "quick" for CI (--quick: seconds).
PP_HOST = {"full": "-b 8 -e 256M -n 200 -w 10", "cpu": "-b 8 -e 16M -f 4 -n 100 -w 5",
           "quick": "-b 8 -e 64K -f 8 -n 20 -w 2"}
PP_GPU = {"full": "-b 8 -e 256M -n 200 -w 10", "cpu": "-b 8 -e 256M -n 200 -w 10",
          "quick": "-b 8 -e 64K -f 8 -n 20 -w 2"}
UCX_PERFTEST = {"full": "--sizes 8,65536,67108864", "cpu": "--sizes 8,65536,67108864",
                "quick": "--sizes 8 --iters 1000"}
HALO_HOST = {"full": "-N 32,64,128,256,512 -n 100 -w 5", "cpu": "-N 32,64,128 -n 50 -w 5",
             "quick": "-N 8,16 -n 5 -w 1"}
HALO_GPU = {"full": "-N 32,64,128,256,512 -n 100 -w 5", "cpu": "-N 32,64,128,256,512 -n 100 -w 5",
            "quick": "-N 8,16 -n 5 -w 1"}
# bench/coll: nccl-tests-style flags like the other benchmarks; adjust here when coll.c lands.
COLL_HOST = {"full": "-b 8 -e 256M -n 100 -w 10", "cpu": "-b 8 -e 4M -f 4 -n 50 -w 5",
             "quick": "-b 8 -e 4K -f 8 -n 10 -w 2"}
COLL_GPU = {"full": "-b 8 -e 256M -n 100 -w 10", "cpu": "-b 8 -e 256M -n 100 -w 10",
            "quick": "-b 8 -e 4K -f 8 -n 10 -w 2"}

# bench/dsm.c (ky_bench_dsm) and apps/stencil (ky_stencil). The DSM stencil runs one fixed grid at
# every rank count (strong scaling: the dsm report's table and page-transfer figure); the stencil suite
# runs N^3 per rank (weak scaling, --record stencil). --threads auto: the node's cores shared by its ranks.
DSM_MICRO = {"full": "-n 256 -w 10", "cpu": "-n 128 -w 5", "quick": "-n 8 -w 1"}
STENCIL_DSM = {"full": "--nz 256 --ny 256 --nx 256 --nt 64 --bt 4 --reps 3 --check",
               "cpu": "--nz 128 --ny 128 --nx 128 --nt 16 --bt 4 --reps 2 --check",
               "quick": "--nz 64 --ny 64 --nx 128 --nt 4 --bt 2 --check"}
STENCIL_WEAK = {"full": "--weak 256 --nt 32 --bt 4 --reps 3",
                "cpu": "--weak 64 --nt 16 --bt 4 --reps 2 --check",
                "quick": "--weak 32 --nt 4 --bt 2 --check"}
STENCIL_COMMON = "--variant all --threads auto"
STENCIL_GPU = {"full": "--nx 512 --ny 512 --nz 512 --bt 4 --steps 64",
               "cpu": "--nx 256 --ny 256 --nz 128 --bt 4 --steps 16 --check",
               "quick": "--small"}

# apps/himeno: iterations per size (the kernel moves 56 B per point: M 0.23 GB, L 1.9 GB, XL
# 15 GB per iteration); warm-up iterations are not timed and the fields start again after them.
HIMENO_M = {"full": "--iters 1000 --warmup 20", "cpu": "--iters 20 --warmup 2", "quick": "--grid 34x34x66 --iters 4 --warmup 1"}
HIMENO_L = {"full": "--iters 300 --warmup 10", "cpu": "--iters 5 --warmup 1", "quick": "--grid 34x34x66 --iters 4 --warmup 1"}
HIMENO_XL = {"full": "--iters 60 --warmup 3", "cpu": "--iters 2 --warmup 1", "quick": "--grid 34x34x66 --iters 4 --warmup 1"}
HIMENO_HOST = {"full": "--iters 100 --warmup 3", "cpu": "--iters 10 --warmup 1", "quick": "--grid 34x34x66 --iters 4 --warmup 1"}

# bench/cg_gpu.cu (bench_cg): Kyoyu's GPU CG against cuSPARSE+cuBLAS (1 rank) and the seed's MPI+CUDA scheme
# (several ranks); the seed's six matrices as stand-ins, the seed's fixed 1000 iterations.
CG_GPU = {"full": "--iters 1000 --reps 3", "cpu": "--iters 1000 --reps 3",
          "quick": "--iters 50 --reps 1 --matrix standin:nasa2910"}

# bench/npb/npb_bench.py: NPB built unchanged by kycc against the serial and plain-OpenMP builds,
# page transfers per variant (seed 003 Figs. 2-5). The script launches its own runs (ranks x threads in
# --ranks); the fetched sources come from tools/fetch-npb. Class A on the GPU machine's 16 cores.
NPB = {"full": "--class A --ranks 1,2,4,8,16,8x2 --variants none,mapping,affinity,update --timeout 600",
       "cpu": "--class W --ranks 1,2 --variants none,mapping,affinity,update --timeout 600",
       "quick": "--class S --ranks 2 --variants none,affinity --timeout 120"}

# bench/shmem_compare.py: host put/get through shmem.h beside Kyoyu's ky_put/ky_get (one process) and
# Open MPI's OSHMEM (the same source through oshcc/oshrun), alternately, best of the rounds
SHMEM = {"full": "-b 8 -e 16M -f 4 -n 1000 -w 100 -r 5 --rounds 5",
         "cpu": "-b 8 -e 4M -f 4 -n 500 -w 50 -r 5 --rounds 3",
         "quick": "-b 8 -e 64K -f 16 -n 50 -w 5 -r 2 --rounds 1"}

# bench/io_bench.py: seed 002's N-body snapshot (36 B per particle) through the io layer's paths beside plain
# HDF5 after cudaMemcpy, h5py after a device-to-host copy and the disk's raw O_DIRECT bandwidth, on $KY_BENCH_IO_DIR
# (default /tmp). N = 1e3 .. 1e8 on the GPU machine.
IO = {"full": "--nmin 1e3 --nmax 1e8 --reps 3", "cpu": "--nmin 1e3 --nmax 1e6 --reps 2 --mem host",
      "quick": "--quick"}

# ranks sharing one GPU without MPS take turns on it (time slicing), which may cost a slice per round trip,
# so the iteration count stays modest
DEVICE_PP = {"full": "-b 8 -e 4K -f 8 -n 2000 -w 50", "cpu": "-b 8 -e 4K -f 8 -n 2000 -w 50",
             "quick": "-b 8 -e 8 -n 200 -w 10"}

# every rank its own node on the MPI transport, whatever KY_TRANSPORT the caller has set (the UCX cases say ucx)
SPLIT = {"KY_NODE_SPLIT": "rank", "KY_TRANSPORT": "mpi"}
UCX = {"KY_NODE_SPLIT": "rank", "KY_TRANSPORT": "ucx"}
ONE_GPU = {"KY_GPUS_PER_RANK": "1"}


class Case:
    """One run: NAME (also the JSON file's name), PROG in the build's bin, ARGS, RANGES (flags per range),
    ENV, GPU (needs a GPU per rank), RANKS (a fixed count, or None: from --ranks, default DEFAULT_RANKS)."""

    def __init__(self, name, prog, args, ranges, env=None, gpu=False, ranks=2, default_ranks=(2,), script=False,
                 ucx=False):
        self.name, self.prog, self.args, self.ranges = name, prog, args, ranges
        # ucx: needs a build with the UCX transport (skipped otherwise)
        self.ucx = ucx
        self.env, self.gpu, self.ranks, self.default_ranks = dict(env or {}), gpu, ranks, default_ranks
        # script: PROG is a path under the source root that launches its own runs (no kyrun; gets --build)
        self.script = script


SUITES = {
    # the comm layer: the cases of docs/benchmarks.md, in this order
    "comm": [
        Case("pingpong_host_shm", "pingpong", "--mem host", PP_HOST),
        Case("pingpong_host_mpi", "pingpong", "--mem host", PP_HOST, SPLIT),
        Case("pingpong_host_ucx", "pingpong", "--mem host", PP_HOST, UCX, ucx=True),
        # UCX's own ucx_perftest beside it (the floor of the UCX path; skipped without ucx_perftest)
        Case("ucx_perftest_host", "bench/ucx_perftest.py", "", UCX_PERFTEST, ranks=2, script=True, ucx=True),
        # the floor for memory UCX did not allocate itself (Kyoyu's segments with KY_SEG_ALLOC=shm):
        # ucx_perftest's own buffers, and by default Kyoyu's here, come from ucp_mem_map(ALLOCATE), shared memory
        # a peer on the same host maps and writes with a store, while UCX reaches registered memory there only
        # through cma, a system call per put (UCX_TLS: RMA on cma)
        Case("ucx_perftest_host_cma", "bench/ucx_perftest.py", "", UCX_PERFTEST, {"UCX_TLS": "self,cma,tcp"},
             ranks=2, script=True, ucx=True),
        Case("halo_host_shm", "halo", "--mem host", HALO_HOST),
        Case("halo_host_mpi", "halo", "--mem host", HALO_HOST, SPLIT),
        Case("pingpong_gpu_ipc", "pingpong", "--mem gpu", PP_GPU, ONE_GPU, gpu=True),
        Case("pingpong_gpu_staged", "pingpong", "--mem gpu", PP_GPU, dict(ONE_GPU, **SPLIT), gpu=True),
        # GPU segments over UCX with every rank its own node (a UCX with CUDA transports: the libucx-cu13
        # wheel; with another UCX the segments stay on the MPI path and this measures that), and its floor
        Case("pingpong_gpu_ucx", "pingpong", "--mem gpu", PP_GPU, dict(ONE_GPU, **UCX), gpu=True, ucx=True),
        Case("ucx_perftest_gpu", "bench/ucx_perftest.py", "--mem cuda", UCX_PERFTEST, ranks=2, script=True,
             gpu=True, ucx=True),
        Case("halo_gpu_ipc", "halo", "--mem gpu", HALO_GPU, ONE_GPU, gpu=True),
        Case("halo_gpu_staged", "halo", "--mem gpu", HALO_GPU, dict(ONE_GPU, **SPLIT), gpu=True),
    ],
    # collectives: runs when build/bin/coll exists; one run per rank count (--ranks 2,3,4)
    "coll": [
        Case("coll_host", "coll", "--mem host", COLL_HOST, ranks=None, default_ranks=(2, 3, 4)),
        Case("coll_gpu", "coll", "--mem gpu", COLL_GPU, ONE_GPU, gpu=True, ranks=None, default_ranks=(2, 3, 4)),
    ],
    # the DSM: micro-benchmarks on the shared-memory and the MPI path, the DSM stencil (strong)
    "dsm": [
        Case("dsm_micro_shm", "ky_bench_dsm", "", DSM_MICRO, ranks=None, default_ranks=(2, 4)),
        Case("dsm_micro_mpi", "ky_bench_dsm", "", DSM_MICRO, SPLIT, ranks=None, default_ranks=(2, 4)),
        # the same over UCX (the DSM's requests and pages on UCX's channel: a fault across nodes against
        # MPI_Get of the same page)
        Case("dsm_micro_ucx", "ky_bench_dsm", "", DSM_MICRO, UCX, ranks=None, default_ranks=(2,), ucx=True),
        # the array view's homes in GPU memory (view_fault, view_update with --mem gpu; the rest is host)
        Case("dsm_micro_gpu", "ky_bench_dsm", "--mem gpu", DSM_MICRO, ONE_GPU, gpu=True, ranks=2),
        Case("dsm_stencil7", "ky_stencil", "--points 7 " + STENCIL_COMMON, STENCIL_DSM, ranks=None,
             default_ranks=(2, 4)),
        Case("dsm_stencil27", "ky_stencil", "--points 27 " + STENCIL_COMMON, STENCIL_DSM, ranks=None,
             default_ranks=(2, 4)),
    ],
    # stencils on host memory, weak scaling (the GPU stencil adds its cases here)
    "stencil": [
        Case("stencil_host", "ky_stencil", "--record stencil --points 7,27 " + STENCIL_COMMON, STENCIL_WEAK,
             ranks=None, default_ranks=(1, 2, 4)),
        # the GPU stencil, one rank per GPU, weak scaling; and every rank its own node (staged path)
        Case("stencil_gpu", "ky_stencil_gpu", "--weak --pts both", STENCIL_GPU, ONE_GPU, gpu=True, ranks=None,
             default_ranks=(1, 2, 4)),
        Case("stencil_gpu_split", "ky_stencil_gpu", "--weak --pts both", STENCIL_GPU, dict(ONE_GPU, **SPLIT),
             gpu=True, ranks=None, default_ranks=(2, 4)),
        # the same over UCX (GPU segments moved by UCX where it has CUDA transports: on one host cuda_ipc,
        # across nodes GPUDirect RDMA; with a UCX without them the MPI path's staging again)
        Case("stencil_gpu_ucx", "ky_stencil_gpu", "--weak --pts both", STENCIL_GPU, dict(ONE_GPU, **UCX),
             gpu=True, ranks=None, default_ranks=(2, 4), ucx=True),
    ],
    # Himeno (apps/himeno) on the one-sided layer; every case also runs the hand-written MPI(+CUDA,
    # host-staged) baseline in the same launch (--variant ky,mpi: ratio, halo_ratio). One GPU: sizes M, L, XL;
    # ranks sharing the GPU and every rank its own node; CPU ranks against the same kernels. The third-party
    # baselines (public CUDA Himenos, the original C+MPI) run from bench/himeno/baselines.sh in the same job.
    # himeno_scale_* / himeno_weak_*: the 4-GPU strong and weak scaling (ranks 1, 2, 4).
    # distributed CG (seed 001): one GPU against cuSPARSE+cuBLAS; ranks sharing it against the seed's scheme
    "cg": [
        Case("cg_gpu", "bench_cg", "", CG_GPU, ONE_GPU, gpu=True, ranks=1),
        Case("cg_gpu_seed", "bench_cg", "--scheme allgather,halo,pipelined,graph", CG_GPU, ONE_GPU, gpu=True, ranks=None,
             default_ranks=(2, 4)),
    ],
    # the OpenSHMEM layer: host put/get against ky_put/ky_get and OSHMEM (2 PEs; one node and KY_NODE_SPLIT=rank)
    # the device API (include/kyoyu/device.cuh): put_signal ping-pong from a kernel, direct and through the
    # host proxy (over IPC on one node, over MPI with every rank its own node), NVSHMEM beside where built
    # and each rank has its own GPU (bench/device_bench.cu)
    "device": [
        Case("device_pp", "device_bench", "", DEVICE_PP, ONE_GPU, gpu=True, ranks=2),
        Case("device_pp_split", "device_bench", "--no-nvshmem", DEVICE_PP, dict(ONE_GPU, **SPLIT), gpu=True,
             ranks=2),
    ],
    "shmem": [
        Case("shmem_host", "bench/shmem_compare.py", "", SHMEM, ranks=2, script=True),
    ],
    # the io layer: one rank on one GPU (the script launches ky_bench_io through kyrun itself)
    "io": [
        Case("io_nbody", "bench/io_bench.py", "", IO, ONE_GPU, gpu=True, ranks=1, script=True),
    ],
    "npb": [
        Case("npb_cg", "bench/npb/npb_bench.py", "--bench cg", NPB, ranks=1, script=True),
        Case("npb_sp", "bench/npb/npb_bench.py", "--bench sp", NPB, ranks=1, script=True),
        Case("npb_bt", "bench/npb/npb_bench.py", "--bench bt", NPB, ranks=1, script=True),
    ],
    "himeno": [
        Case("himeno_gpu_M", "ky_himeno", "M --mem gpu --variant ky,mpi --gosa am", HIMENO_M, ONE_GPU, gpu=True, ranks=1),
        Case("himeno_gpu_L", "ky_himeno", "L --mem gpu --variant ky,mpi --gosa am", HIMENO_L, ONE_GPU, gpu=True, ranks=1),
        Case("himeno_gpu_XL", "ky_himeno", "XL --mem gpu --variant ky,mpi --gosa am", HIMENO_XL, ONE_GPU, gpu=True,
             ranks=1),
        Case("himeno_gpu_L_allreduce", "ky_himeno", "L --mem gpu --variant ky --gosa allreduce", HIMENO_L, ONE_GPU,
             gpu=True, ranks=1),
        Case("himeno_gpu_shared_M", "ky_himeno", "M --mem gpu --variant ky,mpi --decomp ij --gosa am", HIMENO_M,
             ONE_GPU, gpu=True, ranks=None, default_ranks=(2, 4)),
        # ky_allreduce on GPU buffers of ranks sharing one GPU (its NVLink kernels wait on flags in GPU memory)
        Case("himeno_gpu_shared_M_allreduce", "ky_himeno", "M --mem gpu --variant ky --decomp ij --gosa allreduce",
             HIMENO_M, ONE_GPU, gpu=True, ranks=2),
        Case("himeno_gpu_split_M", "ky_himeno", "M --mem gpu --variant ky,mpi --decomp ij --gosa am", HIMENO_M,
             dict(ONE_GPU, **SPLIT), gpu=True, ranks=None, default_ranks=(2, 4)),
        Case("himeno_host_M", "ky_himeno", "M --mem host --dims 2x2x1 --threads 1 --variant ky,mpi", HIMENO_HOST,
             ranks=4),
        Case("himeno_scale_L_ij", "ky_himeno", "L --mem gpu --variant ky,mpi --decomp ij", HIMENO_L, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(1, 2, 4)),
        Case("himeno_scale_XL_ij", "ky_himeno", "XL --mem gpu --variant ky,mpi --decomp ij", HIMENO_XL, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(1, 2, 4)),
        Case("himeno_scale_XL_i", "ky_himeno", "XL --mem gpu --variant ky,mpi --decomp i", HIMENO_XL, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(2, 4)),
        Case("himeno_scale_XL_j", "ky_himeno", "XL --mem gpu --variant ky,mpi --decomp j", HIMENO_XL, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(2, 4)),
        Case("himeno_scale_XL_3d", "ky_himeno", "XL --mem gpu --variant ky,mpi --decomp 3d", HIMENO_XL, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(4,)),
        # weak scaling (4 GPUs): size L per GPU, the grid multiplied by the process grid
        Case("himeno_weak_L_ij", "ky_himeno", "L --weak --mem gpu --variant ky,mpi --decomp ij", HIMENO_L, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(1, 2, 4)),
        Case("himeno_weak_L_k", "ky_himeno", "L --weak --mem gpu --variant ky,mpi --decomp k", HIMENO_L, ONE_GPU,
             gpu=True, ranks=None, default_ranks=(2, 4)),
    ],
}

NO_DEVICE = 77   # exit status of a program that skips itself (no GPU, no baseline; CTest's skip code)

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


def count_gpus():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def gpu_kind():
    """The device tool's kind name of this host's GPUs (nvidia-h200, nvidia-h100-x2, ...), or None: records
    made without KY_BENCH_MACHINE on a GPU host carried the host name, which is the same ("vm") on the GPU
    machines and on the development machine."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return None
    names = [n.strip() for n in out if n.strip()]
    m = re.search(r"\b([AHBL]\d{2,3})\b", names[0]) if names else None
    if not m:
        return None
    gpu = m.group(1).lower()
    # the device tool's names: nvidia-h200 for one H200, nvidia-h100-x1 for one H100, -xN for N GPUs
    return "nvidia-%s%s" % (gpu, "" if len(names) == 1 and gpu == "h200" else "-x%d" % len(names))


def machine_name(arg):
    return arg or os.environ.get("KY_BENCH_MACHINE") or gpu_kind() or socket.gethostname()


def utc_date():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def _launcher(bindir, ranks, gpu):
    kyrun = os.path.join(bindir, "kyrun")
    if os.access(kyrun, os.X_OK):
        cmd = [kyrun, "-n", str(ranks)]
        return cmd + ["--gpus-per-rank", "1"] if gpu else cmd
    return ["mpirun", "-n", str(ranks), "--allow-run-as-root", "--oversubscribe"]


def _build_has_ucx(bindir):
    """Whether the build whose programs are in BINDIR found UCX (its CMake cache says so)."""
    try:
        with open(os.path.join(os.path.dirname(bindir), "CMakeCache.txt"), encoding="utf-8") as fh:
            return any(line.startswith("UCX_FOUND:INTERNAL=1") for line in fh)
    except OSError:
        return False


def _plan(suite_names, opts, ngpus, use_gpus):
    """[(suite, case, ranks, file-stem, skip-reason or None)] in run order."""
    plan = []
    for s in suite_names:
        for c in SUITES[s]:
            pats = getattr(opts, "case", None)
            if pats and not any(fnmatch.fnmatch(c.name, q) for q in pats.split(",")):
                continue
            if c.ranks is not None:
                rank_list = [c.ranks]
                if opts.ranks and opts.ranks != [c.ranks]:
                    print(f"kybench: {c.name} runs on {c.ranks} ranks (--ranks ignored)")
            else:
                rank_list = opts.ranks or list(c.default_ranks)
            for n in rank_list:
                stem = c.name if c.ranks is not None else f"{c.name}_n{n}"
                skip = None
                if c.script and not os.access(os.path.join(opts.root, c.prog), os.X_OK):
                    skip = f"{c.prog} missing"
                elif not c.script and not os.access(os.path.join(opts.bindir, c.prog), os.X_OK):
                    skip = f"{c.prog} not built"
                elif c.ucx and not _build_has_ucx(opts.bindir):
                    skip = "the build has no UCX transport (libucx-dev, configure again)"
                elif c.gpu and not use_gpus:
                    skip = f"GPU case: nvidia-smi finds {ngpus} GPU(s), 2 are needed (--gpus forces)"
                elif c.gpu and ngpus and n > ngpus and not opts.gpus:
                    skip = f"{n} ranks need {n} GPUs, {ngpus} found"
                plan.append((s, c, n, stem, skip))
    return plan


def _kill_group(proc):
    """End the case's process group (kyrun, mpirun and the ranks; started in a session of their own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def run(opts):
    """`kybench run`: opts has suite, ranks (list or None), gpus, no_gpus, bindir, machine, out, quick, full,
    verbose, timeout. Returns the exit status (1 if a case failed)."""
    names = [s for s in SUITES if SUITES[s]] if opts.suite == "all" else [opts.suite]
    ngpus = count_gpus()
    use_gpus = not opts.no_gpus and (opts.gpus or ngpus >= 2)
    if opts.quick:
        rng = "quick"
    elif opts.full or ngpus >= 1 or os.environ.get("BENCH_FULL") == "1":
        rng = "full"
    else:
        rng = "cpu"
    machine = machine_name(opts.machine)
    date = utc_date()
    out = opts.out or os.path.join(opts.root, "bench", "results", machine, date)
    os.makedirs(out, exist_ok=True)

    plan = _plan(names, opts, ngpus, use_gpus)
    if not plan:
        print(f"kybench: no case of suite {opts.suite} matches {opts.case}" if getattr(opts, "case", None)
              else f"kybench: suite {opts.suite} has no cases yet")
        return 0
    if all(p[4] and p[4].endswith("not built") for p in plan):
        print(f"kybench: no program of suite {opts.suite} is built in {opts.bindir} "
              "(make build, or cmake --build BUILD)", file=sys.stderr)
        return 1

    env = dict(os.environ, **MULTICAST_OFF)
    env["KY_BENCH_MACHINE"] = machine
    log_path = os.path.join(out, f"{opts.suite}.log")
    log = open(log_path, "w", encoding="utf-8")

    def say(msg, to_stdout=True):
        log.write(msg + "\n")
        log.flush()
        if to_stdout:
            print(msg, flush=True)

    say(f"kybench run {opts.suite}: machine {machine}, date {date}, host {socket.gethostname()}, "
        f"GPUs {ngpus}{' (GPU cases on)' if use_gpus else ''}, range {rng}")
    say(f"  programs in {opts.bindir}; results in {out}")
    failed = ran = skipped = 0
    width = max(len(p[3]) for p in plan)
    t_all = time.monotonic()
    for i, (suite, c, n, stem, skip) in enumerate(plan, 1):
        tag = f"[{i}/{len(plan)}] {stem:<{width}}"
        if skip:
            say(f"{tag}  skipped: {skip}")
            skipped += 1
            continue
        json_path = os.path.join(out, stem + ".jsonl")
        if os.path.exists(json_path):
            os.remove(json_path)
        prog = os.path.basename(c.prog).split(".")[0]
        extra = shlex.split(os.environ.get(f"BENCH_{prog.upper()}_ARGS", ""))
        if c.script:
            cmd = ([os.path.join(opts.root, c.prog)] + shlex.split(c.args) + shlex.split(c.ranges[rng]) + extra
                   + ["--build", os.path.dirname(opts.bindir), "--case", stem, "--json", json_path])
        else:
            cmd = (_launcher(opts.bindir, n, c.gpu) + [os.path.join(opts.bindir, c.prog)] + shlex.split(c.args)
                   + shlex.split(c.ranges[rng]) + extra + ["--json", json_path])
        envs = " ".join(f"{k}={v}" for k, v in c.env.items())
        say(f"\n=== {stem}: {envs or '(default environment)'} {shlex.join(cmd)}", to_stdout=False)
        if sys.stdout.isatty():
            print(f"{tag}  running", end="\r", flush=True)
        t0 = time.monotonic()
        try:
            # a case's configuration is its own: ranks sharing a host form a node unless the case says
            # otherwise, whatever KY_NODE_SPLIT the caller has set
            proc = subprocess.Popen(cmd, env={**env, "KY_NODE_SPLIT": "node", **c.env}, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace",
                                    start_new_session=True)
            tail = []
            killed = []
            timer = threading.Timer(opts.timeout, lambda: (killed.append(1), _kill_group(proc)))
            timer.start()
            for line in proc.stdout:
                log.write(line)
                tail = (tail + [line.rstrip("\n")])[-15:]
                if opts.verbose:
                    print("    " + line, end="")
            rc = proc.wait()
            timer.cancel()
            if killed:
                rc, tail = 124, tail + [f"(killed after the {opts.timeout} s limit)"]
        except OSError as e:
            rc, tail = 127, [str(e)]
        dt = time.monotonic() - t0
        log.write(f"=== {stem}: exit {rc} after {dt:.1f} s\n")
        npts = 0
        problems = []
        if os.path.exists(json_path):
            recs = records.load([json_path])
            npts = len(recs)
            for r in recs:
                errs, _ = records.check_record(r)
                problems += [f"{r['_src']}: {e}" for e in errs]
        # 77 is the skip code of every program here (CTest's): a GPU program without a GPU, a script whose
        # baseline is not installed (ucx_perftest.py without ucx_perftest); a fresh CI machine has neither
        if rc == NO_DEVICE:
            say(f"{tag}  skipped: " + (f"{c.prog} found no GPU" if c.gpu else f"{c.prog} skipped itself")
                + f" (exit {NO_DEVICE}; log {log_path})")
            skipped += 1
            continue
        ran += 1
        if rc == 0 and not problems:
            say(f"{tag}  ok      {dt:7.1f} s  {npts} points")
        else:
            failed += 1
            why = f"exit {rc}" if rc else f"{len(problems)} schema problem(s)"
            say(f"{tag}  FAILED  {dt:7.1f} s  ({why}; log {log_path})")
            for line in (problems[:5] if rc == 0 else tail):
                say("      " + line)
    say(f"\nkybench: {ran - failed} case(s) ok, {failed} failed, {skipped} skipped in "
        f"{time.monotonic() - t_all:.0f} s; results in {out}")
    log.close()
    return 1 if failed else 0
