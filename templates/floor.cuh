#ifndef DPOPT_FLOOR_DEFINED
#define DPOPT_FLOOR_DEFINED
/* dpopt: support for the launch-free floor (`floor`): host launches of a parent run a copy of it that makes no
   device-runtime call, then drain grids over the children it recorded */
#include <atomic>
#include <mutex>
#include <thread>
/* -DDPOPT_FLOOR_PDL=1: launch each drain grid with programmatic dependent launch (sm_90), so that its launch
   overlaps the end of the copy; the drain waits for the copy with griddepcontrol.wait either way */
#ifndef DPOPT_FLOOR_PDL
#  define DPOPT_FLOOR_PDL 0
#endif
/* the same for the drain of a recursive site (its work queue), 1 by default: on an H100 the 4-level descendants tree
   ran in 0.053 ms with it and 0.055 ms without (bench/results/2026-11-25-h100-check-recursive-floor-3.csv) */
#ifndef DPOPT_FLOOR_QUEUE_PDL
#  define DPOPT_FLOOR_QUEUE_PDL 1
#endif
/* streams a floor parent creates on the device for its children: its launch-free copy launches nothing, so there
   cudaStreamCreateWithFlags() gives the null stream and cudaStreamDestroy() has nothing to do (no device-runtime call) */
__device__ __forceinline__ cudaError_t dpopt_floor_stream_create(cudaStream_t *dpopt_stream, unsigned int)
{
    *dpopt_stream = 0;
    return cudaSuccess;
}
__device__ __forceinline__ cudaError_t dpopt_floor_stream_destroy(cudaStream_t)
{
    return cudaSuccess;
}
/* a CDP1 wait that ends its thread (dropped by --migrate-sync): the copy's children run after its body anyway */
__device__ __forceinline__ cudaError_t dpopt_floor_dropped_wait()
{
    return cudaSuccess;
}
__device__ __forceinline__ void dpopt_floor_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* the work queue of a recursive `floor` site: a record is published with the ticket of the launch that wrote it
   (a release store: the thread's writes of the record before it), and read once that ticket is seen (acquire) */
__device__ __forceinline__ void dpopt_floor_publish(unsigned long long *dpopt_flag, unsigned long long dpopt_ticket)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(dpopt_flag), "l"(dpopt_ticket) : "memory");
}
__device__ __forceinline__ unsigned long long dpopt_floor_load(const unsigned long long *dpopt_word)
{
    unsigned long long dpopt_v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(dpopt_v) : "l"(dpopt_word) : "memory");
    return dpopt_v;
}
__device__ __forceinline__ void dpopt_floor_ready(const unsigned long long *dpopt_flag, unsigned long long dpopt_ticket)
{
    for (unsigned dpopt_ns = 8u; dpopt_floor_load(dpopt_flag) != dpopt_ticket;) {
        __nanosleep(dpopt_ns);
        if (dpopt_ns < 256u) dpopt_ns *= 2u;
    }
}
/* blocks per SM of a recursive site's drain when it fills the device: its blocks wait for tickets, and fewer of
   them contend less for the queue's counters (on an H100, the 4-level descendants tree ran in 0.063 ms with 8,
   0.068 with 16 and 0.071 with 32 per SM; bench/results/2026-11-25-h100-check-recursive-floor-2.csv) */
#ifndef DPOPT_FLOOR_QUEUE_PER_SM
#  define DPOPT_FLOOR_QUEUE_PER_SM 8
#endif
/* threads per block of the drain of a recursive site whose child runs in any block shape: each block runs
   DPOPT_FLOOR_QUEUE_WIDTH(t) recorded blocks of t threads side by side (at most 32; 1 runs one at a time) */
#ifndef DPOPT_FLOOR_QUEUE_THREADS
#  define DPOPT_FLOOR_QUEUE_THREADS 256
#endif
#if DPOPT_FLOOR_QUEUE_THREADS < 32
#  error "DPOPT_FLOOR_QUEUE_THREADS: at least 32"
#endif
#define DPOPT_FLOOR_QUEUE_WIDTH(t) ((t) >= (DPOPT_FLOOR_QUEUE_THREADS) ? 1u \
    : (DPOPT_FLOOR_QUEUE_THREADS) / (t) > 32u ? 32u : (DPOPT_FLOOR_QUEUE_THREADS) / (t))
/* the blocks of a drain grid: `fixed` if positive, else as many as fill the device (at most `per_sm_cap` per SM
   when positive), computed once per device */
struct dpopt_floor_grid {
    int device;
    unsigned blocks;
};
inline unsigned dpopt_floor_blocks(dpopt_floor_grid &dpopt_cache, const void *dpopt_kernel, unsigned dpopt_threads,
                                   size_t dpopt_smem, long long dpopt_fixed, int dpopt_per_sm_cap = 0)
{
    if (dpopt_fixed > 0) return (unsigned)dpopt_fixed;
    int dpopt_device = 0;
    if (cudaGetDevice(&dpopt_device) != cudaSuccess) dpopt_device = 0;
    if (dpopt_cache.blocks == 0u || dpopt_cache.device != dpopt_device) {
        int dpopt_sms = 0, dpopt_per_sm = 0;
        (void)cudaDeviceGetAttribute(&dpopt_sms, cudaDevAttrMultiProcessorCount, dpopt_device);
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&dpopt_per_sm, dpopt_kernel, (int)dpopt_threads, dpopt_smem);
        if (dpopt_per_sm_cap > 0 && dpopt_per_sm > dpopt_per_sm_cap) dpopt_per_sm = dpopt_per_sm_cap;
        dpopt_cache.device = dpopt_device;
        dpopt_cache.blocks = (unsigned)(dpopt_sms > 0 ? dpopt_sms : 1) * (unsigned)(dpopt_per_sm > 0 ? dpopt_per_sm : 1);
    }
    return dpopt_cache.blocks;
}
/* 1: a host launch of a kernel with a recursive `floor` site is one grid, the site's drain, whose first tickets are
   the launch's own blocks, when every host launch of the kernel so far came from one host thread into one stream
   and none was captured into a graph (dpopt_floor_alone); 0: always the launch-free copy, then the drain */
#ifndef DPOPT_FLOOR_QUEUE_SOLO
#  define DPOPT_FLOOR_QUEUE_SOLO 1
#endif
/* the host launches of one kernel so far: their stream and host thread, and whether any other one was used or a
   launch was captured */
struct dpopt_floor_solo {
    std::mutex lock;
    bool seen = false, mixed = false;
    cudaStream_t stream = nullptr;
    std::thread::id thread;
};
/* true when this launch and every one before it came from this host thread into `dpopt_stream`, not captured:
   each then starts after the one before has ended (stream order), so the kernel's queue is free when it starts */
inline bool dpopt_floor_alone(dpopt_floor_solo &dpopt_s, cudaStream_t dpopt_stream)
{
    cudaStreamCaptureStatus dpopt_capture = cudaStreamCaptureStatusNone;
    const cudaError_t dpopt_pending = cudaPeekAtLastError();  /* the program's, left for it to read */
    const cudaError_t dpopt_asked = cudaStreamIsCapturing(dpopt_stream, &dpopt_capture);
    if (dpopt_asked != cudaSuccess && dpopt_pending == cudaSuccess)
        (void)cudaGetLastError();  /* the question's own error (an implicit capture) is not the program's */
    const bool dpopt_plain = dpopt_asked == cudaSuccess && dpopt_capture == cudaStreamCaptureStatusNone;
    std::lock_guard<std::mutex> dpopt_guard(dpopt_s.lock);
    if (!dpopt_s.seen) {
        dpopt_s.seen = true;
        dpopt_s.stream = dpopt_stream;
        dpopt_s.thread = std::this_thread::get_id();
    } else if (dpopt_s.stream != dpopt_stream || dpopt_s.thread != std::this_thread::get_id()) {
        dpopt_s.mixed = true;
    }
    if (!dpopt_plain) dpopt_s.mixed = true;
    return !dpopt_s.mixed;
}
/* a configuration the kernel itself could be launched with (else the launch-free copy's launch reports the error) */
inline bool dpopt_floor_launchable(const dim3 dpopt_grid, const dim3 dpopt_block)
{
    return dpopt_grid.x != 0u && dpopt_grid.y != 0u && dpopt_grid.z != 0u && dpopt_grid.x <= 0x7fffffffu &&
           dpopt_grid.y <= 65535u && dpopt_grid.z <= 65535u && dpopt_block.x != 0u && dpopt_block.y != 0u &&
           dpopt_block.z != 0u && dpopt_block.x <= 1024u && dpopt_block.y <= 1024u && dpopt_block.z <= 64u &&
           (unsigned long long)dpopt_block.x * dpopt_block.y * dpopt_block.z <= 1024ull;
}
/* one drain grid: kernel(args) in the launch's stream, with programmatic dependent launch when `pdl` */
template <typename... P, typename... A>
inline void dpopt_floor_drain(void (*dpopt_kernel)(P...), dim3 dpopt_grid, unsigned dpopt_threads, size_t dpopt_smem,
                              cudaStream_t dpopt_stream, bool dpopt_pdl, A... dpopt_args)
{
    if (dpopt_pdl) {
        cudaLaunchConfig_t dpopt_config = {};
        dpopt_config.gridDim = dpopt_grid;
        dpopt_config.blockDim = dim3(dpopt_threads);
        dpopt_config.dynamicSmemBytes = dpopt_smem;
        dpopt_config.stream = dpopt_stream;
        cudaLaunchAttribute dpopt_attribute[1];
        dpopt_attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        dpopt_attribute[0].val.programmaticStreamSerializationAllowed = 1;
        dpopt_config.attrs = dpopt_attribute;
        dpopt_config.numAttrs = 1;
        (void)cudaLaunchKernelEx(&dpopt_config, dpopt_kernel, dpopt_args...);
    } else {
        dpopt_kernel<<<dpopt_grid, dpopt_threads, dpopt_smem, dpopt_stream>>>(dpopt_args...);
    }
}
#endif
