// tree.h - host code shared by the tree examples (tree_heights.cu,
// tree_descendants.cu): the synthetic tree of paper 004 Sec. 5.1 (depth,
// out-degree, sparsity, node cap; BFS order) and its generator, so both
// benchmarks traverse exactly the same trees.
#pragma once

#include <cstdint>
#include <vector>

struct Tree {
    std::vector<int> child_start, child_count, parent, level;
    std::vector<int> level_start;  // BFS order: level d = [level_start[d], level_start[d+1])
    int max_depth = 0;
    int leaves = 0;
    int size() const { return (int)parent.size(); }
};

static uint64_t splitmix64(uint64_t& s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static Tree generate_tree(int depth, int outdeg, int sparsity, long long max_nodes, uint64_t seed)
{
    Tree t;
    uint64_t s = seed;
    t.parent.push_back(-1);
    t.level.push_back(0);
    bool capped = false;
    for (int v = 0; v < t.size(); ++v) {  // the node list itself is the BFS queue
        // probability (1/2)^sparsity: the top `sparsity` random bits are all zero
        bool expand = t.level[v] < depth &&
                      (v == 0 || sparsity == 0 || (splitmix64(s) >> (64 - sparsity)) == 0);
        if (expand && (long long)t.size() + outdeg > max_nodes) capped = true;
        expand = expand && !capped;
        t.child_start.push_back(t.size());
        t.child_count.push_back(expand ? outdeg : 0);
        if (!expand) { ++t.leaves; continue; }
        for (int k = 0; k < outdeg; ++k) {
            t.parent.push_back(v);
            t.level.push_back(t.level[v] + 1);
        }
    }
    t.max_depth = t.level.back();
    t.level_start.assign(t.max_depth + 2, 0);
    for (int v = 0; v < t.size(); ++v) t.level_start[t.level[v] + 1]++;
    for (int d = 0; d <= t.max_depth; ++d) t.level_start[d + 1] += t.level_start[d];
    return t;
}
