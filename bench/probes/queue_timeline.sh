#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-timeline, made here by `bench/probes/queue_timeline.sh prepare`): where the
# recursive floor's time goes on the descendants tree. The generated file (`#pragma dp floor`, the default drain
# alone) gets %globaltimer stamps: each record's publication by the thread that recorded it, and the start of each
# record's run (thread 0 of its block in the body). Per level of the tree (a record's level: that of its first
# node), the first and last publication and start, relative to the launch's first stamp, and the handoff
# (start - publication) and body (a record's children's publications - its start) medians; the last timed run.
# DEFS='-DX=1 ...' builds with those definitions (-DPROBE_NO_WALK: the recursion's bodies skip the ancestor walk,
# which leaves the counts wrong: the walk's share of the time; -DPROBE_SLEEP=N: the drain's longest sleep between
# polls of the queue's counters, 256 ns in the generated code). TIMES=N: N runs of 20 repetitions at depths 3 to 5
# after the timelines, the median kernel times only.
set -u
cd "$(dirname "$0")/../.."
W=gpu-timeline
DEFS=${DEFS:-}
if [ "${1:-}" = prepare ]; then
  rm -rf $W && mkdir -p $W && cp -r examples/common $W/common
  awk -v p="#pragma dp floor" '/^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; next } { print }' \
    examples/tree_descendants.cu > $W/td_in.cu
  target/release/dpopt transform $W/td_in.cu -o $W/td.cu && rm $W/td_in.cu
  python3 - $W/td.cu <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
log = r'''
__device__ unsigned long long dbg_t[2][32768];
__device__ int dbg_first[2][32768];
__device__ unsigned dbg_n[2];
static __device__ __forceinline__ void dbg_log(int kind, int first) {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    const unsigned k = atomicAdd(&dbg_n[kind], 1u);
    if (k < 32768u) { dbg_t[kind][k] = t; dbg_first[kind][k] = first; }
}
'''
s = s.replace('#include <cuda_runtime.h>\n', '#include <cuda_runtime.h>\n' + log, 1)
pub = '    dpopt_floor_publish(&dpopt_p->ready[dpopt_slot], dpopt_ticket);\n'
assert s.count(pub) == 1
s = s.replace(pub, pub + '    dbg_log(0, first);\n')
body = '    int i = dpopt_blockIdx.x * dpopt_blockDim.x + dpopt_threadIdx.x;\n'
k = s.index('static __device__ void dpopt_floor_rbody_desc_rec(', s.index('static __device__ void dpopt_floor_rbody_desc_rec(') + 10)
b = s.index(body, k)
s = s[:b] + body + '    if (i == 0) dbg_log(1, first);\n' + s[b + len(body):]
# -DPROBE_NO_WALK: the copy's and the drain's bodies skip the ancestor walk (wrong counts; its share of the time)
walk = '        add_children_upwards(v, nchildren, parent, desc);\n'
s = s.replace(walk, '#ifndef PROBE_NO_WALK\n' + walk + '#endif\n')
# -DPROBE_SLEEP=N: the drain's wait for a claimed ticket sleeps up to N ns between polls of the counters (256)
poll = '                        if (dpopt_ns < 256u) dpopt_ns *= 2u;\n'
assert s.count(poll) == 1
s = s.replace(poll, '#ifndef PROBE_SLEEP\n#define PROBE_SLEEP 256u\n#endif\n' + poll.replace('256u', 'PROBE_SLEEP'))
reset = '            CUDA_CHECK(cudaEventRecord(ev_start));\n'
assert s.count(reset) == 1
s = s.replace(reset, '            { unsigned z[2] = {0u, 0u}; CUDA_CHECK(cudaMemcpyToSymbol(dbg_n, z, sizeof z)); }\n' + reset)
dump = r'''
    {
        static unsigned long long ts[2][32768]; static int fs[2][32768]; unsigned ns[2];
        CUDA_CHECK(cudaMemcpyFromSymbol(ns, dbg_n, sizeof ns));
        CUDA_CHECK(cudaMemcpyFromSymbol(ts, dbg_t, sizeof ts));
        CUDA_CHECK(cudaMemcpyFromSymbol(fs, dbg_first, sizeof fs));
        for (int kd = 0; kd < 2; ++kd)
            for (unsigned k = 0; k < ns[kd] && k < 32768u; ++k) {
                const int f = fs[kd][k]; int lv = 0;
                while (lv + 1 < (int)t.level_start.size() && t.level_start[lv + 1] <= f) ++lv;
                const int pv = t.parent[f];  /* the node that recorded the record */
                const int pf = pv <= 0 ? 0 : t.child_start[t.parent[pv]];  /* the first node of that node's record */
                printf("stamp %s %d %llu %d %d\n", kd == 0 ? "pub" : "start", lv, ts[kd][k], f, pf);
            }
    }
'''
ret = '    return all_ok ? 0 : 1;\n'
assert s.count(ret) == 1
s = s.replace(ret, dump + ret)
open(p, 'w').write(s)
PY
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
b=$(mktemp -d)
$nvcc -O3 -rdc=true -arch=sm_90 -I $W -DDPOPT_FLOOR_RECORDS=131072 $DEFS -o $b/td $W/td.cu -lcudadevrt 2> /dev/null || exit 1
for d in 4 5; do
  echo "== depth $d ${DEFS}"
  $b/td --depth $d --outdeg 32 --sparsity 1 --reps 1 > $b/out.txt
  grep '^result' $b/out.txt | grep -v flat-lb
  grep '^stamp' $b/out.txt | python3 -c '
import sys, statistics as st
rows = [l.split() for l in sys.stdin]
t0 = min(int(r[3]) for r in rows)
pub, start = {}, {}
for _, kind, lv, t, f, pf in rows:
    (pub if kind == "pub" else start)[int(f)] = (int(lv), int(t) - t0, int(pf))
levels = sorted({v[0] for v in list(pub.values()) + list(start.values())})
print("level records  pub_first pub_last  start_first start_last  handoff_med body_med (us)")
for lv in levels:
    p = [v[1] for v in pub.values() if v[0] == lv]
    s = [v[1] for v in start.values() if v[0] == lv]
    h = [start[f][1] - pub[f][1] for f in start if f in pub and start[f][0] == lv]
    bd = [pub[f][1] - start[pf][1] for f, (l, t, pf) in pub.items() if l == lv and pf in start]
    fmt = lambda x: "%9.1f" % (x / 1000.0) if x is not None else "        -"
    print("%5d %7d %s %s   %s %s   %s %s" % (lv, len(s), fmt(min(p) if p else None), fmt(max(p) if p else None),
          fmt(min(s) if s else None), fmt(max(s) if s else None),
          fmt(st.median(h) if h else None), fmt(st.median(bd) if bd else None)))
print("last start %.1f us after the first stamp" % (max(v[1] for v in start.values()) / 1000.0))
'
done
for r in $(seq 1 ${TIMES:-0}); do
  for d in 3 4 5; do
    echo "times depth $d ${DEFS} $($b/td --depth $d --outdeg 32 --sparsity 1 --reps 20 | grep '^result' | grep -v flat-lb | sed 's/.*impl=\([a-z]*\) time_ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ')"
  done
done
