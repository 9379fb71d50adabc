#pragma once
// Frame arithmetic shared by the backends (see pipeline/plan.hpp).
#include <algorithm>
#include <cstdint>

#include "pipeline/plan.hpp"

namespace sigstream {

// The part of the chunk's output frames [start, start + frames) inside a
// signal defined on [0, defined): how many frames a metrics block counts.
[[nodiscard]] inline std::int64_t frames_inside(std::int64_t start, std::int64_t frames,
                                                std::int64_t defined) noexcept {
  return std::clamp<std::int64_t>(defined - start, 0, frames);
}

// For a stage's output buffer (first frame `first`, `n` frames), the index
// range [lo, hi) that lies inside [0, defined); everything else is zero.
struct ValidRange {
  std::int64_t lo;
  std::int64_t hi;
};
[[nodiscard]] inline ValidRange valid_range(std::int64_t first, std::int64_t n,
                                            std::int64_t defined) noexcept {
  const std::int64_t lo = std::clamp<std::int64_t>(-first, 0, n);
  const std::int64_t hi = std::clamp<std::int64_t>(defined - first, lo, n);
  return {lo, hi};
}

} // namespace sigstream
