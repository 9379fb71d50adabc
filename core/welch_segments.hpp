#pragma once
// Which Welch segments a call counts (SPEC §8), shared by the CPU and CUDA
// kernels: segment j covers frames [j*hop, j*hop + nfft) of the signal's
// global grid; a call holding frames [first, first + n) counts the segments
// j >= 0 inside them whose last frame is in [own_lo, own_hi), so a chunked
// run counts each segment once, in the chunk that holds its last frame.
#include <algorithm>
#include <cstdint>

#include "core/int_math.hpp"

namespace sigstream {

struct WelchSegments {
  std::int64_t first = 0; // j of the first segment counted
  std::int64_t count = 0; // 0: none
};

[[nodiscard]] inline WelchSegments welch_segments(std::int64_t first, std::int64_t n,
                                                  std::int64_t own_lo, std::int64_t own_hi,
                                                  std::int64_t nfft, std::int64_t hop) noexcept {
  const std::int64_t lo_start = std::max({first, own_lo - nfft + 1, std::int64_t{0}});
  const std::int64_t hi_start = std::min(first + n - nfft, own_hi - nfft); // inclusive
  if (hi_start < lo_start)
    return {};
  const std::int64_t j0 = floor_div(lo_start + hop - 1, hop);
  const std::int64_t j1 = floor_div(hi_start, hop);
  return j1 < j0 ? WelchSegments{} : WelchSegments{j0, j1 - j0 + 1};
}

} // namespace sigstream
