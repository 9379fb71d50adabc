#include "pipeline/backends/backend.hpp"

namespace sigstream {

HostBlock Backend::make_block(SampleType type, int channels, std::int64_t frames) {
  return make_host_block(type, channels, frames);
}

std::vector<std::vector<ChannelMetrics>> empty_metrics(const Plan& plan) {
  std::vector<std::vector<ChannelMetrics>> m;
  for (const int ch : plan.metric_channels())
    m.emplace_back(static_cast<std::size_t>(ch));
  return m;
}

} // namespace sigstream
