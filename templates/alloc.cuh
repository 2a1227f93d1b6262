#ifndef DPOPT_ALLOC_DEFINED
#define DPOPT_ALLOC_DEFINED
/* dpopt: aggregated allocations (KLAP, paper 003 Sec. II-C). The parent threads' device-side malloc and
   cudaMalloc calls of the pointers they pass to a `#pragma dp` launch are made once per warp (the lanes that
   call together: a coalesced group, no barrier) or once per block (the threads that call in one round of
   the block barrier), and every thread gets a slice. Sizes are rounded up to 16 bytes, so every slice keeps
   malloc's 16-byte alignment. Where the program frees the slices, each slice follows a 16-byte header that
   leads to the allocation's reference count, and the last slice freed frees the allocation. Where the
   shared allocation fails, every thread makes its own call, as the original did: a thread sees a failure
   exactly when its own allocation fails, never a wrong slice. */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#ifndef DPOPT_BLOCK_BARRIER
#  define DPOPT_BLOCK_BARRIER 15  /* the named barrier of block-level aggregation */
#endif
/* a request above this many bytes is made on its own, so that no sum of requests can overflow */
#ifndef DPOPT_ALLOC_MAX_SLICE
#  define DPOPT_ALLOC_MAX_SLICE (1ull << 40)
#endif

struct dpopt_alloc_header {  /* at the start of an allocation whose slices are freed */
    unsigned refs;           /* its slices not freed yet */
    unsigned cuda;           /* 1: made by cudaMalloc (freed by cudaFree), 0: by malloc (free) */
    unsigned long long pad;
};
struct dpopt_slice_header {    /* before each slice of such an allocation */
    unsigned long long offset; /* bytes from the allocation's start to this header */
    unsigned long long pad;
};
static_assert(sizeof(dpopt_alloc_header) == 16 && sizeof(dpopt_slice_header) == 16,
              "dpopt: slices stay 16-byte aligned");

#ifdef DPOPT_STATS
/* requests, shared allocations made, and requests made on their own (alone in their group, too large, or
   the shared allocation failed); printed by dpopt_stats_report() */
static __device__ unsigned long long dpopt_alloc_counts[3];
#  define DPOPT_ALLOC_COUNT(i, n) atomicAdd(&dpopt_alloc_counts[i], (unsigned long long)(n))
#else
#  define DPOPT_ALLOC_COUNT(i, n) ((void)0)
#endif

/* one allocation as the program makes it: malloc, or the device runtime's cudaMalloc */
static __device__ __forceinline__ cudaError_t dpopt_alloc_raw(void **dpopt_p, const size_t dpopt_bytes, const bool dpopt_cuda)
{
    if (dpopt_cuda) return cudaMalloc(dpopt_p, dpopt_bytes);
    *dpopt_p = malloc(dpopt_bytes);
    return *dpopt_p != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* the bytes a request takes in a shared allocation; 0: it is made on its own */
template <bool Headers>
static __device__ __forceinline__ unsigned long long dpopt_alloc_need(const size_t dpopt_size)
{
    if (dpopt_size == 0 || dpopt_size > DPOPT_ALLOC_MAX_SLICE) return 0;
    return ((unsigned long long)dpopt_size + 15ull) / 16ull * 16ull + (Headers ? sizeof(dpopt_slice_header) : 0);
}

/* a thread's own allocation: the original call, or (where slices are freed) an allocation of one slice */
template <bool Headers>
static __device__ cudaError_t dpopt_alloc_own(void **dpopt_out, const size_t dpopt_size, const bool dpopt_cuda)
{
    DPOPT_ALLOC_COUNT(2, 1);
    if (!Headers) return dpopt_alloc_raw(dpopt_out, dpopt_size, dpopt_cuda);
    const size_t dpopt_extra = sizeof(dpopt_alloc_header) + sizeof(dpopt_slice_header);
    if (dpopt_size > ~(size_t)0 - dpopt_extra) {  /* no such allocation exists */
        *dpopt_out = nullptr;
        return cudaErrorMemoryAllocation;
    }
    void *dpopt_base = nullptr;
    const cudaError_t dpopt_err = dpopt_alloc_raw(&dpopt_base, dpopt_size + dpopt_extra, dpopt_cuda);
    if (dpopt_err != cudaSuccess || dpopt_base == nullptr) {
        *dpopt_out = nullptr;
        return dpopt_err != cudaSuccess ? dpopt_err : cudaErrorMemoryAllocation;
    }
    dpopt_alloc_header *const dpopt_h = static_cast<dpopt_alloc_header *>(dpopt_base);
    dpopt_h->refs = 1u;
    dpopt_h->cuda = dpopt_cuda ? 1u : 0u;
    dpopt_slice_header *const dpopt_s = reinterpret_cast<dpopt_slice_header *>(dpopt_h + 1);
    dpopt_s->offset = sizeof(dpopt_alloc_header);
    *dpopt_out = dpopt_s + 1;
    return cudaSuccess;
}

/* the shared allocation of `dpopt_total` bytes of slices (0: none, the threads allocate on their own) */
template <bool Headers>
static __device__ unsigned long long dpopt_alloc_shared(const unsigned long long dpopt_total, const unsigned dpopt_slices,
    const bool dpopt_cuda)
{
    if (dpopt_slices < 2u) return 0ull;  /* alone: its own call, as written */
    const cudaError_t dpopt_before = cudaPeekAtLastError();
    void *dpopt_p = nullptr;
    if (dpopt_alloc_raw(&dpopt_p, dpopt_total + (Headers ? sizeof(dpopt_alloc_header) : 0), dpopt_cuda) != cudaSuccess ||
        dpopt_p == nullptr) {
        if (dpopt_before == cudaSuccess) (void)cudaGetLastError();  /* the threads' own calls report what fails */
        return 0ull;
    }
    DPOPT_ALLOC_COUNT(1, 1);
    if (Headers) {
        dpopt_alloc_header *const dpopt_h = static_cast<dpopt_alloc_header *>(dpopt_p);
        dpopt_h->refs = dpopt_slices;
        dpopt_h->cuda = dpopt_cuda ? 1u : 0u;
        __threadfence();  /* before any thread, or the child it launches, can release a slice */
    }
    return (unsigned long long)dpopt_p;
}

/* a thread's slice, `dpopt_offset` bytes into the slices of the allocation at `dpopt_base` */
template <bool Headers>
static __device__ __forceinline__ void *dpopt_alloc_slice(const unsigned long long dpopt_base, const unsigned long long dpopt_offset)
{
    char *const dpopt_b = reinterpret_cast<char *>(dpopt_base);
    if (!Headers) return dpopt_b + dpopt_offset;
    dpopt_slice_header *const dpopt_s = reinterpret_cast<dpopt_slice_header *>(dpopt_b + sizeof(dpopt_alloc_header) + dpopt_offset);
    dpopt_s->offset = sizeof(dpopt_alloc_header) + dpopt_offset;
    return dpopt_s + 1;
}

/* warp granularity: the lanes that reach the call together share one allocation */
template <unsigned Tag, bool Headers>
static __device__ __noinline__ cudaError_t dpopt_alloc_warp(void **dpopt_out, const size_t dpopt_size, const bool dpopt_cuda)
{
    namespace cg = cooperative_groups;
    cg::coalesced_group dpopt_g = cg::coalesced_threads();
    const unsigned long long dpopt_need = dpopt_alloc_need<Headers>(dpopt_size);
    const unsigned long long dpopt_offset = cg::exclusive_scan(dpopt_g, dpopt_need);
    const unsigned long long dpopt_total = dpopt_g.shfl(dpopt_offset + dpopt_need, dpopt_g.size() - 1);
    const unsigned dpopt_slices = cg::reduce(dpopt_g, dpopt_need != 0 ? 1u : 0u, cg::plus<unsigned>());
    unsigned long long dpopt_base = 0ull;
    if (dpopt_g.thread_rank() == 0) {
        DPOPT_ALLOC_COUNT(0, dpopt_g.size());
        dpopt_base = dpopt_alloc_shared<Headers>(dpopt_total, dpopt_slices, dpopt_cuda);
    }
    dpopt_base = dpopt_g.shfl(dpopt_base, 0);
    if (dpopt_need == 0 || dpopt_base == 0ull) return dpopt_alloc_own<Headers>(dpopt_out, dpopt_size, dpopt_cuda);
    *dpopt_out = dpopt_alloc_slice<Headers>(dpopt_base, dpopt_offset);
    return cudaSuccess;
}

/* block granularity: a round. The calling threads wait at the named barrier until every other thread of the
   block has called too or exited (exited threads count as arrived; dpopt checked that nothing else in the
   block waits for them), claim their offsets per coalesced group with one shared atomic, and one thread
   allocates for the round. The round state is per call (`Tag`): rounds of different calls, and of block
   aggregation, may share barrier instances. */
template <unsigned Tag, bool Headers>
static __device__ __noinline__ cudaError_t dpopt_alloc_block(void **dpopt_out, const size_t dpopt_size, const bool dpopt_cuda)
{
    namespace cg = cooperative_groups;
    __shared__ unsigned long long dpopt_total, dpopt_base;
    __shared__ unsigned dpopt_slices, dpopt_claims;
    asm volatile("barrier.sync %0;" :: "r"(DPOPT_BLOCK_BARRIER) : "memory");  /* the round: every running thread is here */
    if (cg::coalesced_threads().thread_rank() == 0) { dpopt_total = 0ull; dpopt_slices = 0u; dpopt_claims = 0u; }
    asm volatile("barrier.sync %0;" :: "r"(DPOPT_BLOCK_BARRIER) : "memory");
    const unsigned long long dpopt_need = dpopt_alloc_need<Headers>(dpopt_size);
    unsigned long long dpopt_offset;
    bool dpopt_leader;
    {
        cg::coalesced_group dpopt_g = cg::coalesced_threads();
        const unsigned long long dpopt_gscan = cg::exclusive_scan(dpopt_g, dpopt_need);
        const unsigned long long dpopt_gtotal = dpopt_g.shfl(dpopt_gscan + dpopt_need, dpopt_g.size() - 1);
        const unsigned dpopt_gslices = cg::reduce(dpopt_g, dpopt_need != 0 ? 1u : 0u, cg::plus<unsigned>());
        unsigned long long dpopt_old = 0ull;
        unsigned dpopt_first = 1u;
        if (dpopt_g.thread_rank() == 0) {
            DPOPT_ALLOC_COUNT(0, dpopt_g.size());
            dpopt_old = atomicAdd(&dpopt_total, dpopt_gtotal);
            atomicAdd(&dpopt_slices, dpopt_gslices);
            dpopt_first = atomicAdd(&dpopt_claims, 1u);
        }
        dpopt_offset = dpopt_g.shfl(dpopt_old, 0) + dpopt_gscan;
        dpopt_leader = dpopt_g.thread_rank() == 0 && dpopt_first == 0u;
    }
    asm volatile("barrier.sync %0;" :: "r"(DPOPT_BLOCK_BARRIER) : "memory");
    if (dpopt_leader) dpopt_base = dpopt_alloc_shared<Headers>(dpopt_total, dpopt_slices, dpopt_cuda);
    asm volatile("barrier.sync %0;" :: "r"(DPOPT_BLOCK_BARRIER) : "memory");
    const unsigned long long dpopt_b = dpopt_base;
    if (dpopt_need == 0 || dpopt_b == 0ull) return dpopt_alloc_own<Headers>(dpopt_out, dpopt_size, dpopt_cuda);
    *dpopt_out = dpopt_alloc_slice<Headers>(dpopt_b, dpopt_offset);
    return cudaSuccess;
}

/* what replaces `malloc` and `cudaMalloc` at an aggregated call */
template <unsigned Tag, bool Headers>
static __device__ __forceinline__ void *dpopt_malloc_warp(const size_t dpopt_size)
{
    void *dpopt_p = nullptr;
    (void)dpopt_alloc_warp<Tag, Headers>(&dpopt_p, dpopt_size, false);
    return dpopt_p;
}
template <unsigned Tag, bool Headers>
static __device__ __forceinline__ void *dpopt_malloc_block(const size_t dpopt_size)
{
    void *dpopt_p = nullptr;
    (void)dpopt_alloc_block<Tag, Headers>(&dpopt_p, dpopt_size, false);
    return dpopt_p;
}
template <unsigned Tag, bool Headers, typename T>
static __device__ __forceinline__ cudaError_t dpopt_cuda_malloc_warp(T **dpopt_ptr, const size_t dpopt_size)
{
    void *dpopt_p = nullptr;
    const cudaError_t dpopt_err = dpopt_alloc_warp<Tag, Headers>(&dpopt_p, dpopt_size, true);
    if (dpopt_err == cudaSuccess) *dpopt_ptr = static_cast<T *>(dpopt_p);
    return dpopt_err;
}
template <unsigned Tag, bool Headers, typename T>
static __device__ __forceinline__ cudaError_t dpopt_cuda_malloc_block(T **dpopt_ptr, const size_t dpopt_size)
{
    void *dpopt_p = nullptr;
    const cudaError_t dpopt_err = dpopt_alloc_block<Tag, Headers>(&dpopt_p, dpopt_size, true);
    if (dpopt_err == cudaSuccess) *dpopt_ptr = static_cast<T *>(dpopt_p);
    return dpopt_err;
}

/* what replaces `free` and `cudaFree` of a slice: the last slice freed frees the allocation (templates, so
   that a file that frees nothing compiles none of it) */
template <typename T>
static __device__ cudaError_t dpopt_release_slice(T *dpopt_p)
{
    if (dpopt_p == nullptr) return cudaSuccess;
    dpopt_slice_header *const dpopt_s = reinterpret_cast<dpopt_slice_header *>(const_cast<void *>(static_cast<const void *>(dpopt_p))) - 1;
    dpopt_alloc_header *const dpopt_h =
        reinterpret_cast<dpopt_alloc_header *>(reinterpret_cast<char *>(dpopt_s) - dpopt_s->offset);
    __threadfence();  /* this thread is done with its slice before the allocation can go */
    if (atomicSub(&dpopt_h->refs, 1u) != 1u) return cudaSuccess;
    __threadfence();
    if (dpopt_h->cuda) return cudaFree(dpopt_h);
    free(dpopt_h);
    return cudaSuccess;
}
template <typename T>
static __device__ __forceinline__ void dpopt_free_slice(T *dpopt_p)
{
    (void)dpopt_release_slice(dpopt_p);
}
template <typename T>
static __device__ __forceinline__ cudaError_t dpopt_cuda_free_slice(T *dpopt_p)
{
    return dpopt_release_slice(dpopt_p);
}
#endif
