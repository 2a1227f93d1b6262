#ifndef DPOPT_SERIAL_LIST_DEFINED
#define DPOPT_SERIAL_LIST_DEFINED
/* dpopt: listed serial runs of a recursive child (copied as it is, once per file). A launch of a recursive child
   that finds no room runs serially in the launching thread; there its own launches of the child find no room
   either, and running each of them serially in turn, inside the run that made it, took a stack frame per level
   of the recursion: past cudaLimitStackSize (1 KiB by default) the thread's stack overflowed, an illegal memory
   access (bench/probes/thirdparty/pcc_stack.sh). A listed run keeps one level: it claims a list, runs the child
   serially with dpopt_depth = DPOPT_LISTED_DEPTH + the list's index, and the child's own launches made in that
   run are appended to the list (the site's dpopt_list_<child>) instead of being made; then it takes the list's
   launches one at a time (the last first), launches each that finds room and runs the others serially the same
   way. A child grid may start any time after its launch, so running it after the run that launched it is what
   the device may do too. The lists grow in the device heap (malloc); with no list free or no heap left, the
   launch runs serially inside the run as before. */
#ifndef DPOPT_SERIAL_LISTS
#  define DPOPT_SERIAL_LISTS 4096
#endif
#define DPOPT_LISTED_DEPTH (1u << 30)
template <typename R>
struct dpopt_serial_list {
    R *items;
    unsigned n, cap;
    int used;
};
/* appends a launch to a claimed list; false when the heap has no room for it */
template <typename R>
static __device__ __noinline__ bool dpopt_list_push(dpopt_serial_list<R> &l, const R &r)
{
    if (l.n == l.cap) {
        const unsigned cap = l.cap ? 2u * l.cap : 16u;
        R *const items = static_cast<R *>(malloc(cap * sizeof(R)));
        if (items == nullptr) return false;
        for (unsigned i = 0; i < l.n; ++i) items[i] = l.items[i];
        if (l.items != nullptr) free(l.items);
        l.items = items;
        l.cap = cap;
    }
    l.items[l.n++] = r;
    return true;
}
/* runs the launch `first` serially as a listed run (Ops::listed(r, depth): the serial run at that depth;
   Ops::launch(r): the launch, returning its error; Ops::serial_depth: the depth of a run that is not listed),
   then every launch its run lists */
template <typename R, typename Ops>
static __device__ __noinline__ void dpopt_list_run(dpopt_serial_list<R> *lists, const R &first)
{
    unsigned slot = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u % (DPOPT_SERIAL_LISTS);
    unsigned tried = 0;
    while (tried < (DPOPT_SERIAL_LISTS) && atomicCAS(&lists[slot].used, 0, 1) != 0) {
        slot = (slot + 1) % (DPOPT_SERIAL_LISTS);
        ++tried;
    }
    if (tried == (DPOPT_SERIAL_LISTS)) {  /* every list in use: run it serially here */
        Ops::listed(first, Ops::serial_depth);
        return;
    }
    __threadfence();
    dpopt_serial_list<R> &l = lists[slot];
    l.n = 0;
    Ops::listed(first, DPOPT_LISTED_DEPTH + slot);
    while (l.n > 0) {
        const R r = l.items[--l.n];
        if (Ops::launch(r) != cudaSuccess) Ops::listed(r, DPOPT_LISTED_DEPTH + slot);
    }
    if (l.items != nullptr) free(l.items);
    l.items = nullptr;
    l.cap = 0;
    __threadfence();
    atomicExch(&l.used, 0);
}
#endif
