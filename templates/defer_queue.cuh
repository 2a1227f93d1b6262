#ifndef DPOPT_DEFER_QUEUE_DEFINED
#define DPOPT_DEFER_QUEUE_DEFINED
/* dpopt: deferred launches (copied as it is, once per file). A launch of a child of at least DPOPT_DEFER_MIN_THREADS
   threads that finds no room (pending-launch limit) is queued (DPOPT_DEFER_RECORDS records per child kernel)
   instead of running serially in its parent thread; one thread at a time (the drainer: a thread that queued one)
   launches the queued children as room frees up, waiting for room at most DPOPT_DEFER_NS_PER_THREAD ns per child
   thread (about what running it serially would take; waits doubling from DPOPT_DEFER_FIRST_NS ns up to 64 us)
   before running it serially (or longer, while the drainer's stack has no room for the serial run:
   dpopt_stack_room). Smaller children, and launches that find the queue full, run serially at once, unless the
   thread's stack has no room for that: a small child is then queued too. A serial run's own launches that
   find no room are queued while a drainer runs it (the drainer takes them in turn, so the stack does not grow
   with a recursion's depth). */
#ifndef DPOPT_DEFER_RECORDS
#  define DPOPT_DEFER_RECORDS 1024
#endif
#ifndef DPOPT_DEFER_MIN_THREADS
#  define DPOPT_DEFER_MIN_THREADS 16384
#endif
#ifndef DPOPT_DEFER_NS_PER_THREAD
#  define DPOPT_DEFER_NS_PER_THREAD 256
#endif
#ifndef DPOPT_DEFER_FIRST_NS
#  define DPOPT_DEFER_FIRST_NS 2000
#endif
/* a child kernel's queue: a ring of records; claimed, written (published in the order claimed) and launched
   count records from the program's start; owner is 1 while a thread drains */
template <typename R>
struct dpopt_defer_queue {
    R rec[DPOPT_DEFER_RECORDS];
    unsigned long long claimed, written, done;
    int owner;
};
/* launches every written record of the queue (Ops::launch(r): the child's launch, returning its error;
   Ops::serial(r): its serial run), unless another thread already does: that one then sees the records written
   before this call, since a thread releases the queue only after finding none left */
template <typename R, typename Ops>
static __device__ __noinline__ void dpopt_defer_drain(dpopt_defer_queue<R> &q)
{
    for (;;) {
        if (atomicCAS(&q.owner, 0, 1) != 0) return;
        __threadfence();
        for (;;) {
            const unsigned long long end = atomicAdd(&q.written, 0ull);
            unsigned long long i = atomicAdd(&q.done, 0ull);
            if (i == end) break;
            for (; i < end; ++i) {
                const R r = q.rec[i % (DPOPT_DEFER_RECORDS)];
                const unsigned long long threads = (unsigned long long)r.dpopt_ogrid.x * r.dpopt_ogrid.y * r.dpopt_ogrid.z
                    * r.dpopt_block.x * r.dpopt_block.y * r.dpopt_block.z;
                const unsigned long long budget = threads * (DPOPT_DEFER_NS_PER_THREAD);
                unsigned long long waited = 0;
                for (unsigned wait = (DPOPT_DEFER_FIRST_NS);; wait = min(2u * wait, 65536u)) {
                    const cudaError_t err = Ops::launch(r);
                    if (err == cudaSuccess) {
                        if (r.dpopt_stats) atomicAdd(&r.dpopt_stats[DPOPT_STAT_DIRECT], 1ull);  /* launched */
                        break;
                    }
                    if (err != cudaErrorLaunchPendingCountExceeded || (waited >= budget && dpopt_stack_room())) {
                        Ops::serial(r);
                        if (r.dpopt_stats) atomicAdd(&r.dpopt_stats[DPOPT_STAT_SERIALIZED], 1ull);  /* run serially after all */
                        break;
                    }
                    __nanosleep(wait);  /* no room yet: wait for launched children to start, then retry */
                    waited += wait;
                }
            }
            atomicExch(&q.done, end);  /* frees the records' slots */
        }
        atomicExch(&q.owner, 0);
        __threadfence();
        if (atomicAdd(&q.written, 0ull) == atomicAdd(&q.done, 0ull)) return;
    }
}
/* queues a launch that found no room and drains the queue; false when the child is too small to wait for (its
   serial run is cheap) or the queue is full: the caller then runs it serially */
template <typename R, typename Ops>
static __device__ bool dpopt_defer_push(dpopt_defer_queue<R> &q, const R &r)
{
    if ((unsigned long long)r.dpopt_ogrid.x * r.dpopt_ogrid.y * r.dpopt_ogrid.z * r.dpopt_block.x * r.dpopt_block.y * r.dpopt_block.z
        < (DPOPT_DEFER_MIN_THREADS) && dpopt_stack_room())
        return false;
    unsigned long long slot = atomicAdd(&q.claimed, 0ull);
    for (;;) {
        if (slot - atomicAdd(&q.done, 0ull) >= (DPOPT_DEFER_RECORDS)) return false;
        const unsigned long long seen = atomicCAS(&q.claimed, slot, slot + 1);
        if (seen == slot) break;
        slot = seen;
    }
    q.rec[slot % (DPOPT_DEFER_RECORDS)] = r;
    __threadfence();
    /* publish in the order claimed: the drainer launches only records below q.written */
    while (atomicCAS(&q.written, slot, slot + 1) != slot) __nanosleep(64);
    __threadfence();
    dpopt_defer_drain<R, Ops>(q);
    return true;
}
#endif
