#pragma once
// floor(a / b) and ceil(a / b) for b > 0 and any sign of a: the frame
// arithmetic of rate changes (pipeline/plan.cpp, the resample kernels),
// usable in device code too.
#include <cstdint>

#ifdef __CUDACC__
#define SIGSTREAM_HOST_DEVICE __host__ __device__
#else
#define SIGSTREAM_HOST_DEVICE
#endif

namespace sigstream {

[[nodiscard]] SIGSTREAM_HOST_DEVICE constexpr std::int64_t floor_div(std::int64_t a,
                                                                     std::int64_t b) noexcept {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
[[nodiscard]] SIGSTREAM_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a,
                                                                    std::int64_t b) noexcept {
  return -floor_div(-a, b);
}

} // namespace sigstream
