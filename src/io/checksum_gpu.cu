/* The cuFile path's checksum, computed where the data is (GPU memory): the same sum as checksum.c (docs/io.md
 * gives the formula), each element hashed with its global index, so a file written by one path verifies when
 * read by the other. One block per run of at most RUN_SPLIT elements, the block's sum added atomically (the
 * sum is modulo 2^64, so the order does not matter). Built with the cuFile path only (cmake/KyoyuIO.cmake).
 */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "io/checksum_gpu.h"

namespace {

constexpr uint64_t RUN_SPLIT = 1 << 16; /* elements per block: enough blocks for a single long run */
constexpr int THREADS = 256;

__device__ inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* word o..o+k of an element, little-endian, with the widest loads its alignment allows */
__device__ inline uint64_t word(const unsigned char *p, size_t k)
{
    uintptr_t a = (uintptr_t)p;
    if (k == 8 && a % 8 == 0) return *(const uint64_t *)p;
    uint64_t w = 0;
    if (k % 4 == 0 && a % 4 == 0) {
        for (size_t b = 0; b < k; b += 4) w |= (uint64_t)(*(const uint32_t *)(p + b)) << (8 * b);
        return w;
    }
    for (size_t b = 0; b < k; b++) w |= (uint64_t)p[b] << (8 * b);
    return w;
}

__global__ void checksum_kernel(const kyi_io_run_t *runs, size_t nruns, size_t elem, unsigned long long *out)
{
    uint64_t h = 0;
    for (size_t r = blockIdx.x; r < nruns; r += gridDim.x) {
        const kyi_io_run_t R = runs[r];
        const unsigned char *base = (const unsigned char *)R.mem;
        for (uint64_t i = threadIdx.x; i < R.n; i += blockDim.x) {
            const unsigned char *e = base + i * elem;
            uint64_t key = (R.g + i) * 0x9E3779B97F4A7C15ull;
            for (size_t j = 0, o = 0; o < elem; j++, o += 8)
                h += mix(word(e + o, elem - o < 8 ? elem - o : 8) ^ (key + j * 0xD1B54A32D192ED03ull));
        }
    }
    for (int o = 16; o; o >>= 1) h += __shfl_down_sync(0xffffffffu, h, o);
    __shared__ uint64_t part[THREADS / 32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) part[warp] = h;
    __syncthreads();
    if (warp == 0) {
        h = lane < THREADS / 32 ? part[lane] : 0;
        for (int o = 16; o; o >>= 1) h += __shfl_down_sync(0xffffffffu, h, o);
        if (lane == 0) atomicAdd(out, (unsigned long long)h);
    }
}

int cuda_fail(cudaError_t e, const char *what, char *err, size_t len)
{
    snprintf(err, len, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

}  // namespace

extern "C" int kyi_io_gpu_checksum(int dev, const kyi_io_run_t *runs, size_t nruns, size_t elem,
                                   uint64_t *sum, char *err, size_t errlen)
{
    std::vector<kyi_io_run_t> split;
    for (size_t r = 0; r < nruns; r++)
        for (uint64_t o = 0; o < runs[r].n; o += RUN_SPLIT)
            split.push_back({runs[r].mem + o * elem, runs[r].g + o,
                             runs[r].n - o < RUN_SPLIT ? runs[r].n - o : RUN_SPLIT});
    if (split.empty()) return 0;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", err, errlen);
    cudaStream_t s;
    /* blocking, as the runtime's copy streams: after what the program queued on the legacy default stream */
    if ((e = cudaStreamCreateWithFlags(&s, cudaStreamDefault)) != cudaSuccess)
        return cuda_fail(e, "cudaStreamCreate", err, errlen);
    kyi_io_run_t *d_runs = nullptr;
    unsigned long long *d_out = nullptr, h_out = 0;
    size_t bytes = split.size() * sizeof(kyi_io_run_t);
    int rc = 0;
    if ((e = cudaMalloc(&d_runs, bytes + sizeof(unsigned long long))) != cudaSuccess) {
        rc = cuda_fail(e, "cudaMalloc", err, errlen);
    } else {
        d_out = (unsigned long long *)((char *)d_runs + bytes);
        size_t blocks = split.size() < 65535 ? split.size() : 65535;
        if ((e = cudaMemcpyAsync(d_runs, split.data(), bytes, cudaMemcpyHostToDevice, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(d_out, 0, sizeof *d_out, s)) != cudaSuccess) {
            rc = cuda_fail(e, "copying the runs", err, errlen);
        } else {
            checksum_kernel<<<(unsigned)blocks, THREADS, 0, s>>>(d_runs, split.size(), elem, d_out);
            if ((e = cudaGetLastError()) != cudaSuccess ||
                (e = cudaMemcpyAsync(&h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost, s)) !=
                    cudaSuccess ||
                (e = cudaStreamSynchronize(s)) != cudaSuccess)
                rc = cuda_fail(e, "the checksum kernel", err, errlen);
        }
        cudaFree(d_runs);
    }
    cudaStreamDestroy(s);
    if (rc == 0) *sum += h_out;
    return rc;
}
