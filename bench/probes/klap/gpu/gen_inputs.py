#!/usr/bin/env python3
"""Synthetic inputs for the benchmarks whose inputs are not stored here (deterministic, seeded).
usage: gen_inputs.py KIND OUT [params]
  mtx  OUT N SEED HUB GC: symmetric Matrix Market pattern (coordinate, lower triangle), N vertices; every n/8-th
                      vertex gets HUB extra neighbours (0: none); max degree < 256 (GC's device arrays hold 256 colours)
  gr   OUT N SEED     MST/SSSP: Galois binary .gr (version 1, 4-byte edge data), symmetric, RMAT-like hubs,
                      distinct weights per undirected edge (so the MST weight is unique)
  cnf  OUT NVARS NCLAUSES SEED   SP: random 3-SAT in DIMACS form
"""
import random, struct, sys

def graph(n, seed, hubs):
    rnd = random.Random(seed)
    adj = [set() for _ in range(n)]
    def add(u, v):
        if u != v: adj[u].add(v); adj[v].add(u)
    for u in range(n):
        for _ in range(4):
            add(u, rnd.randrange(n))
    for i, deg in enumerate(hubs):           # hubs: large children (above threshold 128, some above 1024)
        h = (i * 7919 + 13) % n
        for v in rnd.sample(range(n), min(deg, n - 1)):
            add(h, v)
    return adj

def write_mtx(out, n, seed, hub):
    rnd = random.Random(seed)
    adj = [set() for _ in range(n)]
    for u in range(n):
        for _ in range(6):
            v = rnd.randrange(n)
            if v != u: adj[u].add(v); adj[v].add(u)
    for h in range(0, n, max(1, n // 8)) if hub else []:   # a few vertices of degree ~hub (children above threshold 128)
        for v in rnd.sample(range(n), hub):
            if v != h and len(adj[v]) < 190: adj[h].add(v); adj[v].add(h)
    edges = sorted((max(u, v) + 1, min(u, v) + 1) for u in range(n) for v in adj[u] if u > v)
    assert max(len(a) for a in adj) < 256
    with open(out, 'w') as f:
        f.write('%%MatrixMarket matrix coordinate pattern symmetric\n')
        f.write(f'{n} {n} {len(edges)}\n')
        for r, c in edges:
            f.write(f'{r} {c} 1\n')

def write_gr(out, n, seed):
    adj = graph(n, seed, [200, 300, 600, 1500, 2500])
    rnd = random.Random(seed + 1)
    und = sorted((u, v) for u in range(n) for v in adj[u] if u < v)
    ws = list(range(1, len(und) + 1)); rnd.shuffle(ws)
    w = {}
    for (u, v), x in zip(und, ws):
        w[(u, v)] = w[(v, u)] = x
    outs, data, idx = [], [], []
    for u in range(n):
        for v in sorted(adj[u]):
            outs.append(v); data.append(w[(u, v)])
        idx.append(len(outs))
    m = len(outs)
    with open(out, 'wb') as f:
        f.write(struct.pack('<4Q', 1, 4, n, m))
        f.write(struct.pack(f'<{n}Q', *idx))
        f.write(struct.pack(f'<{m}I', *outs))
        if m % 2: f.write(b'\0' * 4)
        f.write(struct.pack(f'<{m}I', *data))

def write_cnf(out, nv, nc, seed):
    rnd = random.Random(seed)
    with open(out, 'w') as f:
        f.write(f'p cnf {nv} {nc}\n')
        for _ in range(nc):
            vs = rnd.sample(range(1, nv + 1), 3)
            f.write(' '.join(str(v if rnd.random() < 0.5 else -v) for v in vs) + ' 0\n')

kind, out = sys.argv[1], sys.argv[2]
a = [int(x) for x in sys.argv[3:]]
{'mtx': lambda: write_mtx(out, *a), 'gr': lambda: write_gr(out, *a), 'cnf': lambda: write_cnf(out, *a)}[kind]()
