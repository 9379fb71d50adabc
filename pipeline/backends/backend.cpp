#include "pipeline/backends/backend.hpp"

namespace sigstream {

HostBlock Backend::make_block(SampleType type, int channels, std::int64_t frames) {
  return make_host_block(type, channels, frames);
}

} // namespace sigstream
