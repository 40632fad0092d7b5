/* CUDA's thread model on the CPU, for the tests that check the temporally blocked kernels without a GPU
 * (apps/stencil_gpu/tblock_emu.cpp, apps/himeno/tb_emu.cpp). Include it before the kernel's source, which is
 * then compiled as host code: the CUDA qualifiers vanish, threadIdx/blockIdx/blockDim/gridDim are globals the
 * caller sets, and every CUDA thread of a block is a fiber (ucontext) whose __syncthreads() hands over to the
 * next, so emu_block runs a block in rounds from barrier to barrier as the GPU does. A thread that leaves
 * while others still wait at a barrier makes emu_block return false. The caller sets blockDim (and gridDim,
 * blockIdx) and emu_body, the block's work as one thread sees it, then calls emu_block(threads). Shared
 * memory is the caller's: the kernels reach it through an accessor the test defines. */
#ifndef KY_APPS_CUDA_FIBERS_H
#define KY_APPS_CUDA_FIBERS_H

#include <ucontext.h>

#include <string.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __launch_bounds__(...)
#define __ldg(p) (*(p))
struct dim3 {
    unsigned x, y, z;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;
using std::min;

static ucontext_t emu_sched;
static std::vector<ucontext_t> emu_ctx;
static std::vector<int> emu_done;
static std::vector<char> emu_stacks;
static int emu_cur;
static std::function<void()> emu_body;
enum { EMU_STACK = 64 << 10 };

static void __syncthreads()
{
    swapcontext(&emu_ctx[emu_cur], &emu_sched);
}

/* cuda_pipeline.h's asynchronous copies to shared memory, as late as the GPU may make them: a thread's copies
 * are queued per commit group and made only when __pipeline_wait_prior lets fewer groups stay in flight, so
 * a kernel that reads a buffer before waiting for its copy reads stale values (and a test sees it). */
struct emu_copy_t {
    void *dst;
    const void *src;
    size_t n, zfill; /* n - zfill bytes copied, then zfill zero bytes */
};
static std::vector<std::vector<emu_copy_t>> emu_open;               /* per thread: not yet committed */
static std::vector<std::deque<std::vector<emu_copy_t>>> emu_groups; /* per thread: committed, oldest first */

static void __pipeline_memcpy_async(void *dst, const void *src, size_t n, size_t zfill = 0)
{
    emu_open[emu_cur].push_back(emu_copy_t{dst, src, n, zfill});
}

static void __pipeline_commit()
{
    emu_groups[emu_cur].push_back(std::move(emu_open[emu_cur]));
    emu_open[emu_cur].clear();
}

static void __pipeline_wait_prior(size_t prior)
{
    auto &g = emu_groups[emu_cur];
    for (; g.size() > prior; g.pop_front())
        for (const emu_copy_t &c : g.front()) {
            memcpy(c.dst, c.src, c.n - c.zfill);
            memset((char *)c.dst + (c.n - c.zfill), 0, c.zfill);
        }
}

static void emu_entry()
{
    emu_body();
    emu_done[emu_cur] = 1; /* then uc_link resumes the scheduler */
}

/* One block of n threads (x fastest, blockDim.x wide); false if the threads left at different barriers. */
static bool emu_block(int n)
{
    emu_ctx.assign(n, ucontext_t());
    emu_done.assign(n, 0);
    emu_open.assign(n, {});
    emu_groups.assign(n, {});
    emu_stacks.resize((size_t)n * EMU_STACK);
    for (int i = 0; i < n; i++) {
        getcontext(&emu_ctx[i]);
        emu_ctx[i].uc_stack.ss_sp = emu_stacks.data() + (size_t)i * EMU_STACK;
        emu_ctx[i].uc_stack.ss_size = EMU_STACK;
        emu_ctx[i].uc_link = &emu_sched;
        makecontext(&emu_ctx[i], emu_entry, 0);
    }
    for (;;) { /* one round: every thread to its next barrier (or its end) */
        int finished = 0;
        for (int i = 0; i < n; i++) {
            emu_cur = i;
            threadIdx = dim3{(unsigned)(i % blockDim.x), (unsigned)(i / blockDim.x), 0};
            swapcontext(&emu_sched, &emu_ctx[i]);
            finished += emu_done[i];
        }
        if (finished == n) return true;
        if (finished) return false;
    }
}

#endif
