#pragma once
// Fused metrics pass over one channel of one chunk (float64 accumulators).
#include <cstdint>

#include "core/channel_metrics.hpp"

namespace sigstream::kernels::cpu {

// y: the signal, x: the source at the same frames (nullptr = zeros); n frames.
ChannelMetrics channel_metrics(const float* y, const float* x, std::int64_t n);

} // namespace sigstream::kernels::cpu
