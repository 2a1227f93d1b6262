#ifndef DPOPT_LAUNCH_BUDGET_DEFINED
#define DPOPT_LAUNCH_BUDGET_DEFINED
/* dpopt: this file's count of its unfinished device launches, so that the device runtime is never asked for a
   launch past its pending-launch limit (cudaLimitDevRuntimePendingLaunchCount): asked past it, a launch can
   spin forever inside the runtime while the launches already pending never start (docs/AGGREGATION.md,
   "The pending-launch limit"). Every grid that dpopt launches is of a counted kernel: the launch adds one
   unit, and each block of the grid subtracts its share when its last thread ends, so the count is back where
   it was when the grid's last block has ended. A launch that would pass the limit takes the launch's
   fallback at once. The device cannot read the limit (cudaDeviceGetLimit on the device does not give it), so
   the file tells it: cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n) in this file's host code
   goes through dpopt_device_set_limit, which also copies n to the device; a program that sets the limit in
   another file states it with -DDPOPT_PENDING_LIMIT=n. Without either, the runtime's default of 2,048
   applies. DPOPT_PENDING_MARGIN launches (and 1/16 of the limit) are left for launches counted elsewhere:
   the program's own, other files', continuations. -DDPOPT_UNCOUNTED_LAUNCHES turns the count off. */
#ifndef DPOPT_PENDING_LIMIT
#  define DPOPT_PENDING_LIMIT 2048
#endif
#ifndef DPOPT_PENDING_MARGIN
#  define DPOPT_PENDING_MARGIN 16
#endif
#define DPOPT_LAUNCH_UNIT (1ll << 31)
static __device__ __attribute__((unused)) unsigned long long dpopt_pending_limit = (DPOPT_PENDING_LIMIT);
static __device__ __attribute__((unused)) long long dpopt_launches_unfinished;  /* in units of 1/2^31 launch */
/* cudaDeviceSetLimit as the program calls it, telling the device the pending-launch limit it sets */
template <int dpopt_unused = 0>
static inline __host__ cudaError_t dpopt_device_set_limit(const cudaLimit dpopt_limit, const size_t dpopt_value)
{
    const cudaError_t dpopt_error = (cudaDeviceSetLimit)(dpopt_limit, dpopt_value);
    if (dpopt_error == cudaSuccess && dpopt_limit == cudaLimitDevRuntimePendingLaunchCount) {
        const unsigned long long dpopt_n = dpopt_value;
        if (cudaMemcpyToSymbol(dpopt_pending_limit, &dpopt_n, sizeof dpopt_n) != cudaSuccess)
            (void)cudaGetLastError();  /* the count then keeps the limit it had: never a launch past it */
    }
    return dpopt_error;
}
#define cudaDeviceSetLimit(dpopt_limit, dpopt_value) dpopt_device_set_limit<>((dpopt_limit), (dpopt_value))
/* the count's ceiling, in units: the limit less the margins */
template <int dpopt_unused = 0>
static __device__ __forceinline__ long long dpopt_launch_budget()
{
    const long long dpopt_limit = (long long)*(volatile unsigned long long *)&dpopt_pending_limit;
    const long long dpopt_free = dpopt_limit - dpopt_limit / 16 - (DPOPT_PENDING_MARGIN);
    return (dpopt_free > 1 ? dpopt_free : 1) * DPOPT_LAUNCH_UNIT;
}
/* counts a launch if the runtime has room for it; false: no room, and nothing counted */
template <int dpopt_unused = 0>
static __device__ __forceinline__ bool dpopt_launch_acquire()
{
#ifdef DPOPT_UNCOUNTED_LAUNCHES
    return true;
#else
    const long long dpopt_before = (long long)atomicAdd(
        reinterpret_cast<unsigned long long *>(&dpopt_launches_unfinished), (unsigned long long)DPOPT_LAUNCH_UNIT);
    if (dpopt_before + DPOPT_LAUNCH_UNIT <= dpopt_launch_budget()) return true;
    atomicAdd(reinterpret_cast<unsigned long long *>(&dpopt_launches_unfinished), 0ull - (unsigned long long)DPOPT_LAUNCH_UNIT);
    return false;
#endif
}
/* counts a launch that goes ahead whatever the count (it has no fallback, as the original launch had none) */
template <int dpopt_unused = 0>
static __device__ __forceinline__ void dpopt_launch_count()
{
#ifndef DPOPT_UNCOUNTED_LAUNCHES
    atomicAdd(reinterpret_cast<unsigned long long *>(&dpopt_launches_unfinished), (unsigned long long)DPOPT_LAUNCH_UNIT);
#endif
}
/* takes back a counted launch that the runtime did not make */
template <int dpopt_unused = 0>
static __device__ __forceinline__ void dpopt_launch_refused()
{
#ifndef DPOPT_UNCOUNTED_LAUNCHES
    atomicAdd(reinterpret_cast<unsigned long long *>(&dpopt_launches_unfinished), 0ull - (unsigned long long)DPOPT_LAUNCH_UNIT);
#endif
}
/* whether this thread's stack has room for one more level of a serial run (a launch's fallback): the local-space
   address of a variable of the caller's frame says how much of the stack is in use (a thread's stack grows down
   from the top of its 16 MiB local window, below DPOPT_STACK_TOP_RESERVED bytes the device keeps there: on an
   H200 a leaf kernel's first variable lies 592 bytes below the top, and the deepest frame that ran without
   overflowing lay 832 to 848 bytes more below it than cudaLimitStackSize; bench/probes/stack/stack_capacity.cu). A fallback that would leave less than DPOPT_STACK_RESERVE bytes
   launches instead, waiting for room: a serial run past the stack's end is an illegal memory access. An
   address outside the window (another layout) says nothing, and the serial run goes ahead as before. */
#ifndef DPOPT_STACK_RESERVE
#  define DPOPT_STACK_RESERVE 512
#endif
#ifndef DPOPT_STACK_TOP_RESERVED
#  define DPOPT_STACK_TOP_RESERVED 576
#endif
template <int dpopt_unused = 0>
static __device__ __noinline__ bool dpopt_stack_room()
{
    char dpopt_here;
    const unsigned long long dpopt_at = (unsigned long long)__cvta_generic_to_local((void *)&dpopt_here);
    const unsigned long long dpopt_top = 1ull << 24;
    if (dpopt_at >= dpopt_top || dpopt_top - dpopt_at > (1ull << 20)) return true;  /* not the layout measured */
    size_t dpopt_limit = 0;
    if (cudaDeviceGetLimit(&dpopt_limit, cudaLimitStackSize) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    const unsigned long long dpopt_used = dpopt_top - dpopt_at;
    return dpopt_used + (DPOPT_STACK_RESERVE) <= (unsigned long long)dpopt_limit + (DPOPT_STACK_TOP_RESERVED);
}
/* one block of a counted grid: made by every thread at the kernel's start; its destructor, run when a thread
   leaves the kernel however it leaves, subtracts the block's share of the launch once the block's last thread
   leaves (block 0 also the remainder of the division) */
struct dpopt_counted_block {
    unsigned &dpopt_left;
    __device__ explicit dpopt_counted_block(unsigned &dpopt_shared_left) : dpopt_left(dpopt_shared_left)
    {
        if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0) dpopt_left = blockDim.x * blockDim.y * blockDim.z;
        __syncthreads();
    }
    __device__ ~dpopt_counted_block()
    {
#ifndef DPOPT_UNCOUNTED_LAUNCHES
        if (atomicSub(&dpopt_left, 1u) != 1u) return;
        const unsigned long long dpopt_blocks = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
        unsigned long long dpopt_share = (unsigned long long)DPOPT_LAUNCH_UNIT / dpopt_blocks;
        if ((blockIdx.x | blockIdx.y | blockIdx.z) == 0)
            dpopt_share += (unsigned long long)DPOPT_LAUNCH_UNIT - dpopt_share * dpopt_blocks;
        atomicAdd(reinterpret_cast<unsigned long long *>(&dpopt_launches_unfinished), 0ull - dpopt_share);
#endif
    }
};
/* the first statement of every counted kernel */
#define DPOPT_COUNTED_GRID                       \
    __shared__ unsigned dpopt_counted_left;      \
    const dpopt_counted_block dpopt_counted_guard(dpopt_counted_left)
#endif
