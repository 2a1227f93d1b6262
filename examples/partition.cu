// partition.cu - stable partition of an array by a predicate (x < pivot
// into `selected`, the others into `rejected`, each in input order) as a
// producer-consumer chain of single-block kernels: KLAP's "pt" promotion
// benchmark (El Hajj et al., MICRO 2016, Table I).
//
// Each step handles one chunk of CHAIN_CHUNK = 8,192 elements (512 threads x
// 16). It loads the chunk, counts and scans the selected and the rejected
// elements (the independent prologue), then needs how many of each the
// steps before it wrote (`nsel`, `nrej`, passed by its predecessor),
// launches the next step with both totals and writes its elements after
// them. Two arguments of the launch are computed by the step (postponed to
// the release, docs/PRAGMA.md "Launch promotion"); the others it knows when
// it starts.
//
// A plain CDP chain of more than 25 steps (204,800 elements) exceeds the
// device runtime's nesting limit (verified=depth-limit); promoted with
// aggregation it runs (a pool of blocks takes the steps).
//
// Implementations:
//   flat : count both kinds per chunk, scan the counts, scatter (no CDP)
//   cdp  : partition_step, launched by the host on the first chunk; every
//          step launches the next (the program as written, or promoted)
//
// Flags: --n N (204800)  --reps R (5)  --seed S (12345)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o partition partition.cu -lcudadevrt
// Output: "result example=partition input=n<N> impl=... time_ms=... elements_per_s=...
//         verified=yes|no|depth-limit checksum=... launch_failures=... depth_failures=..."
//         (depth-limit: launches failed with cudaErrorLaunchMaxDepthExceeded); checksum: FNV-1a 64
//         over both counts (int32) and the selected, then the rejected elements.

#include "common/chain.cuh"

// One step: the chunk [base, base + CHAIN_CHUNK) of in, after nsel selected
// and nrej rejected elements of the steps before it; the last step writes
// both totals to totals[0], totals[1].
__global__ void partition_step(const int* in, int n, int base, int pivot, int* selected, int nsel,
                               int* rejected, int nrej, int* totals)
{
    __shared__ int chunk[CHAIN_CHUNK];
    // Independent prologue: the chunk, and where each of its elements goes
    // within the chunk's selected and rejected ones.
    for (int j = threadIdx.x; j < CHAIN_CHUNK; j += blockDim.x)
        if (base + j < n) chunk[j] = in[base + j];
    __syncthreads();
    const int first = threadIdx.x * CHAIN_ITEMS;
    const int valid = max(0, min(CHAIN_ITEMS, n - base - first));
    int sel = 0;
    for (int j = 0; j < valid; ++j) sel += chunk[first + j] < pivot;
    int sel_total, rej_total;
    const int sel_before = chain_block_scan(sel, &sel_total);
    const int rej_before = chain_block_scan(valid - sel, &rej_total);
#pragma dp acquire
    // From here on the step needs nsel and nrej from its predecessor.
    if (threadIdx.x == 0) {
        if (base + CHAIN_CHUNK < n) {
#ifdef DPOPT_STATS
            atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp promote(aggregate)
            partition_step<<<1, CHAIN_THREADS>>>(in, n, base + CHAIN_CHUNK, pivot, selected, nsel + sel_total,
                                                 rejected, nrej + rej_total, totals);
            chain_count_failure();
        } else {
            totals[0] = nsel + sel_total;
            totals[1] = nrej + rej_total;
        }
    }
    int s = nsel + sel_before, r = nrej + rej_before;
    for (int j = 0; j < valid; ++j) {
        const int v = chunk[first + j];
        if (v < pivot) selected[s++] = v;
        else rejected[r++] = v;
    }
}

// ------------------------------------------------------------- flat version

// Selected elements per chunk (the rejected follow from the chunk's size).
__global__ void partition_count(const int* in, int n, int pivot, int* counts)
{
    const int base = blockIdx.x * CHAIN_CHUNK + threadIdx.x * CHAIN_ITEMS;
    int sel = 0;
    for (int j = 0; j < CHAIN_ITEMS; ++j) sel += base + j < n && in[base + j] < pivot;
    int total;
    chain_block_scan(sel, &total);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// Each chunk's elements after offsets[chunk] selected ones before it (and
// so chunk * CHAIN_CHUNK - offsets[chunk] rejected ones).
__global__ void partition_scatter(const int* in, int n, int pivot, const int* offsets, int* selected,
                                  int* rejected)
{
    const int chunk_base = blockIdx.x * CHAIN_CHUNK;
    const int base = chunk_base + threadIdx.x * CHAIN_ITEMS;
    const int valid = max(0, min(CHAIN_ITEMS, n - base));
    int sel = 0;
    for (int j = 0; j < valid; ++j) sel += in[base + j] < pivot;
    int sel_total, rej_total;
    int s = offsets[blockIdx.x] + chain_block_scan(sel, &sel_total);
    int r = chunk_base - offsets[blockIdx.x] + chain_block_scan(valid - sel, &rej_total);
    for (int j = 0; j < valid; ++j) {
        const int v = in[base + j];
        if (v < pivot) selected[s++] = v;
        else rejected[r++] = v;
    }
}

struct Buffers {
    int *in, *selected, *rejected, *counts, *offsets, *totals;
};

// totals[1] (rejected) from totals[0] (selected).
__global__ void partition_rejected_total(int n, int* totals) { totals[1] = n - totals[0]; }

static void run_flat(int n, int pivot, const Buffers& b)
{
    const int chunks = chain_steps(n);
    partition_count<<<chunks, CHAIN_THREADS>>>(b.in, n, pivot, b.counts);
    chain_scan_counts<<<1, 1024>>>(b.counts, b.offsets, chunks, b.totals);
    partition_scatter<<<chunks, CHAIN_THREADS>>>(b.in, n, pivot, b.offsets, b.selected, b.rejected);
    partition_rejected_total<<<1, 1>>>(n, b.totals);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

static void run_cdp(int n, int pivot, const Buffers& b)
{
    partition_step<<<1, CHAIN_THREADS>>>(b.in, n, 0, pivot, b.selected, 0, b.rejected, 0, b.totals);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

int main(int argc, char** argv)
{
    const ChainArgs args = chain_args(argc, argv);
    const int n = (int)args.n;
    const int steps = chain_steps(n);

    // Values 0..999, pivot 300: about 30% selected.
    const int pivot = 300;
    std::vector<int> input(n);
    uint64_t x = args.seed * 2654435761ull + 7;
    for (int i = 0; i < n; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        input[i] = (int)(x % 1000);
    }
    std::vector<int> ref_sel, ref_rej;
    for (int v : input) (v < pivot ? ref_sel : ref_rej).push_back(v);
    chain_info("partition", n, "selected", ref_sel.size());

    Buffers b;
    CUDA_CHECK(cudaMalloc(&b.in, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.selected, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.rejected, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.counts, (size_t)steps * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.offsets, (size_t)steps * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.totals, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(b.in, input.data(), (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> sel(n), rej(n);
    // The elements of one side against its reference; false on a difference.
    auto same = [](const char* name, int rep, const char* side, const std::vector<int>& got,
                   const std::vector<int>& want, int count) {
        int bad = 0;
        for (int i = 0; i < count; ++i)
            if (got[i] != want[i] && bad++ < 5)
                fprintf(stderr, "%s rep %d %s %d: %d, expected %d\n", name, rep, side, i, got[i], want[i]);
        return bad == 0;
    };
    const bool ok = chain_run(
        "partition", args,
        [&] {
            CUDA_CHECK(cudaMemset(b.selected, 0xff, (size_t)n * sizeof(int)));
            CUDA_CHECK(cudaMemset(b.rejected, 0xff, (size_t)n * sizeof(int)));
            CUDA_CHECK(cudaMemset(b.totals, 0xff, 2 * sizeof(int)));
        },
        [&](int impl) { impl == 0 ? run_flat(n, pivot, b) : run_cdp(n, pivot, b); },
        [&](int impl, int rep, uint64_t* checksum) {
            const char* name = impl == 0 ? "flat" : "cdp";
            int totals[2] = {-1, -1};
            CUDA_CHECK(cudaMemcpy(totals, b.totals, sizeof totals, cudaMemcpyDeviceToHost));
            const bool sized = totals[0] == (int)ref_sel.size() && totals[1] == (int)ref_rej.size();
            const int ns = sized ? totals[0] : 0, nr = sized ? totals[1] : 0;
            CUDA_CHECK(cudaMemcpy(sel.data(), b.selected, (size_t)ns * sizeof(int), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(rej.data(), b.rejected, (size_t)nr * sizeof(int), cudaMemcpyDeviceToHost));
            if (!sized)
                fprintf(stderr, "%s rep %d: %d selected and %d rejected, expected %zu and %zu\n", name, rep,
                        totals[0], totals[1], ref_sel.size(), ref_rej.size());
            const bool equal = same(name, rep, "selected", sel, ref_sel, ns) &&
                               same(name, rep, "rejected", rej, ref_rej, nr);
            *checksum = chain_fnv1a(14695981039346656037ull, totals, sizeof totals);
            *checksum = chain_fnv1a(*checksum, sel.data(), (size_t)ns * sizeof(int));
            *checksum = chain_fnv1a(*checksum, rej.data(), (size_t)nr * sizeof(int));
            return sized && equal;
        });
    CUDA_CHECK(cudaFree(b.in));
    CUDA_CHECK(cudaFree(b.selected));
    CUDA_CHECK(cudaFree(b.rejected));
    CUDA_CHECK(cudaFree(b.counts));
    CUDA_CHECK(cudaFree(b.offsets));
    CUDA_CHECK(cudaFree(b.totals));
    return ok ? 0 : 1;
}
