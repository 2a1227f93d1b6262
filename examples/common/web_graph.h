// web_graph.h - a seeded power-law web-like graph (like cnr-2000, the web
// crawl of paper 000's evaluation: 325,557 pages, ~10 links per page, a few
// pages with thousands of links, most links to pages of the same host).
//
// Page u gets a Pareto-distributed number of links (shape 1.5, at least 2,
// at most 4,000; mean about 6); each link goes, with probability 0.8, to a
// page of the same "host" (within 512 pages of u), otherwise to a popular
// page (index n * r^3 for uniform r: small indices are hubs). Self loops are
// dropped; the caller symmetrises and removes duplicates. Deterministic for a
// given (n, seed). `add(u, v)` receives every link.
#pragma once
#include <cmath>
#include <cstdint>

template <typename AddEdge>
static void web_graph_edges(int64_t n, uint64_t seed, AddEdge add) {
  uint64_t s = seed ^ 0x5DEECE66Dull;
  auto next = [&s]() {  // splitmix64, uniform in [0, 1)
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  for (int64_t u = 0; u < n; ++u) {
    const double links = 2.0 * std::pow(1.0 - next(), -1.0 / 1.5);
    const int64_t d = links > 4000.0 ? 4000 : int64_t(links);
    for (int64_t k = 0; k < d; ++k) {
      int64_t v;
      if (next() < 0.8) {
        v = u + int64_t(next() * 1025.0) - 512;
        if (v < 0 || v >= n) continue;
      } else {
        const double r = next();
        v = int64_t(double(n) * r * r * r);
      }
      if (v != u) add(u, v);
    }
  }
}
