/* Stand-in for the part of GLM that knosvoxel/bfs-dynamic-parallelism uses (lib/glm is a
 * submodule that is not in the fetched sources; written for this check). */
#pragma once
#include <cstdint>
#include <climits>
#include <algorithm>
namespace glm {
typedef std::int32_t int32;
typedef std::uint32_t uint32;
struct ivec2 {
    int x, y;
    constexpr ivec2(int x_ = 0, int y_ = 0) : x(x_), y(y_) {}
};
struct vec2 {
    float x, y;
    constexpr vec2(float x_ = 0, float y_ = 0) : x(x_), y(y_) {}
};
inline vec2 operator+(const vec2 &a, const vec2 &b) { return vec2(a.x + b.x, a.y + b.y); }
} // namespace glm
