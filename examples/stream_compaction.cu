// stream_compaction.cu - in-place stream compaction (remove every element
// equal to a value, keep the order of the others) as a producer-consumer
// chain of single-block kernels: KLAP's "sc" promotion benchmark (El Hajj
// et al., MICRO 2016, Table I; after Gomez-Luna et al.'s in-place data
// sliding).
//
// Each step handles one chunk of CHAIN_CHUNK = 8,192 elements (512 threads x
// 16): it loads the chunk and scans which elements stay (the independent
// prologue: it needs nothing from the steps before), then needs the number of
// elements the steps before kept (`offset`, passed by its predecessor),
// launches the next step with offset + what it keeps, and writes its kept
// elements to data[offset...]. In place: a step writes below its own chunk
// only, into elements earlier steps have already read.
//
// A plain CDP chain nests one launch per step: a chain of more than 25 steps
// (204,800 elements, the paper's "medium") exceeds the device runtime's
// nesting limit and its launches fail (verified=depth-limit). With
// `#pragma dp promote(aggregate)` a pool of blocks runs the steps: no launch
// per step and no nesting (docs/PRAGMA.md, "Launch promotion").
//
// Implementations:
//   flat : count kept elements per chunk, scan the counts, scatter into a
//          temporary array, copy back (no CDP)
//   cdp  : compact_step, launched by the host on the first chunk; every
//          step launches the next (the program as written, or promoted)
//
// Flags: --n N (204800)  --reps R (5)  --seed S (12345)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o stream_compaction stream_compaction.cu -lcudadevrt
// Output: "result example=stream_compaction input=n<N> impl=... time_ms=... elements_per_s=...
//         verified=yes|no|depth-limit checksum=... launch_failures=... depth_failures=..."
//         (depth-limit: launches failed with cudaErrorLaunchMaxDepthExceeded); checksum: FNV-1a 64
//         over the kept count (int32) and the kept elements.

#include "common/chain.cuh"

// The value compaction removes.
#define REMOVED 0

// One step of the chain: the chunk [base, base + CHAIN_CHUNK) of data, after
// `offset` elements kept by the steps before it; the last step writes the
// number of kept elements to *kept_total.
__global__ void compact_step(int* data, int n, int base, int offset, int* kept_total)
{
    __shared__ int chunk[CHAIN_CHUNK];
    // Independent prologue: the chunk and the positions of its kept elements.
    for (int j = threadIdx.x; j < CHAIN_CHUNK; j += blockDim.x)
        chunk[j] = base + j < n ? data[base + j] : REMOVED;
    __syncthreads();
    const int first = threadIdx.x * CHAIN_ITEMS;
    int mine = 0;
    for (int j = 0; j < CHAIN_ITEMS; ++j) mine += chunk[first + j] != REMOVED;
    int kept;
    const int before = chain_block_scan(mine, &kept);
#pragma dp acquire
    // From here on the step needs `offset` from its predecessor.
    if (threadIdx.x == 0) {
        if (base + CHAIN_CHUNK < n) {
#ifdef DPOPT_STATS
            atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp promote(aggregate)
            compact_step<<<1, CHAIN_THREADS>>>(data, n, base + CHAIN_CHUNK, offset + kept, kept_total);
            chain_count_failure();
        } else {
            *kept_total = offset + kept;
        }
    }
    int at = offset + before;
    for (int j = 0; j < CHAIN_ITEMS; ++j)
        if (chunk[first + j] != REMOVED) data[at++] = chunk[first + j];
}

// ------------------------------------------------------------- flat version

// Kept elements per chunk.
__global__ void compact_count(const int* data, int n, int* counts)
{
    int mine = 0;
    const int base = blockIdx.x * CHAIN_CHUNK + threadIdx.x * CHAIN_ITEMS;
    for (int j = 0; j < CHAIN_ITEMS; ++j) mine += base + j < n && data[base + j] != REMOVED;
    int kept;
    chain_block_scan(mine, &kept);
    if (threadIdx.x == 0) counts[blockIdx.x] = kept;
}

// The kept elements of each chunk, from offsets[chunk] on, into out.
__global__ void compact_scatter(const int* data, int n, const int* offsets, int* out)
{
    const int base = blockIdx.x * CHAIN_CHUNK + threadIdx.x * CHAIN_ITEMS;
    int mine = 0;
    for (int j = 0; j < CHAIN_ITEMS; ++j) mine += base + j < n && data[base + j] != REMOVED;
    int kept;
    int at = offsets[blockIdx.x] + chain_block_scan(mine, &kept);
    for (int j = 0; j < CHAIN_ITEMS; ++j)
        if (base + j < n && data[base + j] != REMOVED) out[at++] = data[base + j];
}

struct Buffers {
    int *data, *tmp, *counts, *offsets, *total;
};

static void run_flat(int n, const Buffers& b)
{
    const int chunks = chain_steps(n);
    compact_count<<<chunks, CHAIN_THREADS>>>(b.data, n, b.counts);
    chain_scan_counts<<<1, 1024>>>(b.counts, b.offsets, chunks, b.total);
    compact_scatter<<<chunks, CHAIN_THREADS>>>(b.data, n, b.offsets, b.tmp);
    CUDA_CHECK(cudaGetLastError());
    // In place, as the chain: the kept elements back at the front of data.
    CUDA_CHECK(cudaMemcpyAsync(b.data, b.tmp, (size_t)n * sizeof(int), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
}

static void run_cdp(int n, const Buffers& b)
{
    compact_step<<<1, CHAIN_THREADS>>>(b.data, n, 0, 0, b.total);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

int main(int argc, char** argv)
{
    const ChainArgs args = chain_args(argc, argv);
    const int n = (int)args.n;
    const int steps = chain_steps(n);

    // Values 0..3: about a quarter is removed.
    std::vector<int> input(n);
    uint64_t x = args.seed * 2654435761ull + 1;
    for (int i = 0; i < n; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        input[i] = (int)(x % 4);
    }
    std::vector<int> ref;
    ref.reserve(n);
    for (int v : input)
        if (v != REMOVED) ref.push_back(v);
    chain_info("stream_compaction", n, "kept", ref.size());

    Buffers b;
    CUDA_CHECK(cudaMalloc(&b.data, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.tmp, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.counts, (size_t)steps * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.offsets, (size_t)steps * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.total, sizeof(int)));
    std::vector<int> out(n);
    const bool ok = chain_run(
        "stream_compaction", args,
        [&] {
            CUDA_CHECK(cudaMemcpy(b.data, input.data(), (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(b.total, 0xff, sizeof(int)));
        },
        [&](int impl) { impl == 0 ? run_flat(n, b) : run_cdp(n, b); },
        [&](int impl, int rep, uint64_t* checksum) {
            const char* name = impl == 0 ? "flat" : "cdp";
            int total = -1;
            CUDA_CHECK(cudaMemcpy(&total, b.total, sizeof total, cudaMemcpyDeviceToHost));
            const int kept = total >= 0 && total <= n ? total : 0;
            CUDA_CHECK(cudaMemcpy(out.data(), b.data, (size_t)kept * sizeof(int), cudaMemcpyDeviceToHost));
            const bool sized = total == (int)ref.size();
            if (!sized) fprintf(stderr, "%s rep %d: %d kept, expected %zu\n", name, rep, total, ref.size());
            int bad = 0;
            for (int i = 0; sized && i < kept; ++i)
                if (out[i] != ref[i] && bad++ < 5)
                    fprintf(stderr, "%s rep %d element %d: %d, expected %d\n", name, rep, i, out[i], ref[i]);
            *checksum = chain_fnv1a(14695981039346656037ull, &total, sizeof total);
            *checksum = chain_fnv1a(*checksum, out.data(), (size_t)kept * sizeof(int));
            return sized && bad == 0;
        });
    CUDA_CHECK(cudaFree(b.data));
    CUDA_CHECK(cudaFree(b.tmp));
    CUDA_CHECK(cudaFree(b.counts));
    CUDA_CHECK(cudaFree(b.offsets));
    CUDA_CHECK(cudaFree(b.total));
    return ok ? 0 : 1;
}
