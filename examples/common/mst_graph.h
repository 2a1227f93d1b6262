// mst_graph.h - host code shared by the MST examples (mstf.cu, mstv.cu): the
// undirected weighted graph with edge ids, its R-MAT generator and .gr reader,
// the CPU Kruskal reference and the FNV-1a checksum. Included by both, so the
// two benchmarks read exactly the same inputs.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Graph {
  int n = 0;
  std::vector<int> row;              // n + 1 offsets
  std::vector<int> col;              // row[n] neighbours
  std::vector<unsigned int> weight;  // row[n] edge weights
  std::vector<int> eid;              // row[n] undirected edge ids
  std::vector<int> eu, ev;           // endpoints of each undirected edge, eu < ev
  std::vector<unsigned int> ew;      // weight of each undirected edge
};

static uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Undirected graph from sorted, unique edge keys (min << 32 | max, min < max)
// and their weights; edge k of keys gets id k.
static Graph build_graph(int64_t n, const std::vector<uint64_t>& keys,
                         const std::vector<unsigned int>& w) {
  if (2 * int64_t(keys.size()) > INT32_MAX) {
    std::fprintf(stderr, "graph too large for 32-bit offsets\n");
    std::exit(1);
  }
  Graph g;
  g.n = int(n);
  g.row.assign(n + 1, 0);
  for (uint64_t key : keys) {  // degrees
    ++g.row[(key >> 32) + 1];
    ++g.row[(key & 0xffffffffu) + 1];
  }
  for (int64_t u = 0; u < n; ++u) g.row[u + 1] += g.row[u];
  const int total = g.row[n];
  g.col.resize(total);
  g.weight.resize(total);
  g.eid.resize(total);
  g.eu.resize(keys.size());
  g.ev.resize(keys.size());
  g.ew.assign(w.begin(), w.end());
  // Filling in key order leaves every neighbour list sorted: row x receives
  // its smaller neighbours (keys y:x, y < x) before its larger ones (x:y).
  std::vector<int> fill(g.row.begin(), g.row.end() - 1);
  for (size_t k = 0; k < keys.size(); ++k) {
    const int u = int(keys[k] >> 32), v = int(keys[k] & 0xffffffffu);
    g.eu[k] = u;
    g.ev[k] = v;
    g.col[fill[u]] = v;
    g.weight[fill[u]] = w[k];
    g.eid[fill[u]++] = int(k);
    g.col[fill[v]] = u;
    g.weight[fill[v]] = w[k];
    g.eid[fill[v]++] = int(k);
  }
  return g;
}

static Graph make_rmat(int scale, int ef, uint64_t seed) {
  const double a = 0.57, b = 0.19, c = 0.19;
  const int64_t n = int64_t(1) << scale;
  const int64_t m = n * ef;
  // Undirected edges as (min << 32 | max), so that both directions of an
  // edge, and its duplicates, share one key and hence one weight.
  std::vector<uint64_t> keys;
  keys.reserve(m);
  uint64_t s = seed;
  for (int64_t k = 0; k < m; ++k) {
    int64_t u = 0, v = 0;
    for (int bit = scale - 1; bit >= 0; --bit) {
      double r = double(splitmix64(s) >> 11) * 0x1.0p-53;
      if (r < a) {
      } else if (r < a + b) {
        v |= int64_t(1) << bit;
      } else if (r < a + b + c) {
        u |= int64_t(1) << bit;
      } else {
        u |= int64_t(1) << bit;
        v |= int64_t(1) << bit;
      }
    }
    if (u == v) continue;  // no self loops
    if (u > v) std::swap(u, v);
    keys.push_back((uint64_t(u) << 32) | uint64_t(v));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // Weights uniform in [1, 100], one per undirected edge, in key order.
  std::vector<unsigned int> w(keys.size());
  uint64_t ws = seed ^ 0xD1B54A32D192ED03ull;
  for (size_t k = 0; k < keys.size(); ++k)
    w[k] = 1u + unsigned(splitmix64(ws) % 100u);
  return build_graph(n, keys, w);
}

// LonestarGPU binary .gr: u64 version, u64 weight size, u64 nodes, u64 edges,
// nodes x u64 row-end offsets, edges x u32 destinations (padded to 8 bytes
// when #edges is odd), edges x u32 weights. Made undirected: self loops are
// dropped, u-v and v-u (and duplicates) become one edge, with the smallest
// of their weights.
static Graph read_gr(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
  uint64_t hdr[4];
  if (std::fread(hdr, sizeof(uint64_t), 4, f) != 4 || hdr[0] != 1) {
    std::fprintf(stderr, "%s: bad .gr header\n", path);
    std::exit(1);
  }
  if (hdr[1] != sizeof(uint32_t)) {
    std::fprintf(stderr, "%s: edge weights of %llu bytes, expected 4\n", path,
                 (unsigned long long)hdr[1]);
    std::exit(1);
  }
  const uint64_t n = hdr[2], m = hdr[3];
  if (n >= uint64_t(INT32_MAX) || m > uint64_t(INT32_MAX)) {
    std::fprintf(stderr, "%s: graph too large for 32-bit indices\n", path);
    std::exit(1);
  }
  std::vector<uint64_t> ends(n);
  std::vector<uint32_t> dst(m), wt(m);
  uint32_t pad = 0;
  if (std::fread(ends.data(), sizeof(uint64_t), n, f) != n ||
      std::fread(dst.data(), sizeof(uint32_t), m, f) != m ||
      (m % 2 == 1 && std::fread(&pad, sizeof(uint32_t), 1, f) != 1) ||
      std::fread(wt.data(), sizeof(uint32_t), m, f) != m) {
    std::fprintf(stderr, "%s: truncated .gr file\n", path);
    std::exit(1);
  }
  std::fclose(f);
  for (uint64_t i = 0; i < n; ++i) {
    if (ends[i] > m || (i > 0 && ends[i] < ends[i - 1])) {
      std::fprintf(stderr, "%s: bad row offsets\n", path);
      std::exit(1);
    }
  }
  if (n > 0 && ends[n - 1] != m) {
    std::fprintf(stderr, "%s: row offsets do not end at #edges\n", path);
    std::exit(1);
  }
  // (min << 32 | max, weight), sorted: the first of each key has the
  // smallest weight.
  std::vector<std::pair<uint64_t, unsigned int>> edges;
  edges.reserve(m);
  for (uint64_t u = 0, e = 0; u < n; ++u) {
    for (; e < ends[u]; ++e) {
      const uint64_t v = dst[e];
      if (v >= n) { std::fprintf(stderr, "%s: bad edge\n", path); std::exit(1); }
      if (v == u) continue;  // no self loops
      const uint64_t key = u < v ? (u << 32) | v : (v << 32) | u;
      edges.push_back(std::make_pair(key, wt[e]));
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<uint64_t> keys;
  std::vector<unsigned int> w;
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i > 0 && edges[i].first == edges[i - 1].first) continue;
    keys.push_back(edges[i].first);
    w.push_back(edges[i].second);
  }
  return build_graph(int64_t(n), keys, w);
}

// Union-find with path halving and union by size.
struct DisjointSets {
  std::vector<int> parent, size;
  explicit DisjointSets(int n) : parent(n), size(n, 1) {
    for (int i = 0; i < n; ++i) parent[i] = i;
  }
  int find(int x) {
    while (parent[x] != x) { parent[x] = parent[parent[x]]; x = parent[x]; }
    return x;
  }
  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    if (size[a] < size[b]) std::swap(a, b);
    parent[b] = a;
    size[a] += size[b];
    return true;
  }
};

// Kruskal in (weight, id) order, which is (weight, min, max) order: one byte
// per undirected edge, 1 for the edges of the minimum spanning forest.
static std::vector<unsigned char> cpu_kruskal(const Graph& g) {
  const int mu = int(g.eu.size());
  std::vector<uint64_t> order(mu);
  for (int k = 0; k < mu; ++k) order[k] = (uint64_t(g.ew[k]) << 32) | uint32_t(k);
  std::sort(order.begin(), order.end());
  DisjointSets sets(g.n);
  std::vector<unsigned char> in_forest(mu, 0);
  for (uint64_t key : order) {
    const int k = int(key & 0xffffffffu);
    if (sets.unite(g.eu[k], g.ev[k])) in_forest[k] = 1;
  }
  return in_forest;
}

static uint64_t fnv1a64(const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 0x100000001b3ull; }
  return h;
}
