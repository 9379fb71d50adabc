// CUDA_VISIBLE_DEVICES cut to the GPUs a command can use (see the header).
#include "pipeline/visible_devices.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/trace.hpp"

namespace sigstream {

std::optional<std::string> visible_devices_through(const char* current, int highest) {
  if (highest < 0)
    return std::nullopt;
  std::string out;
  if (current == nullptr) {
    for (int d = 0; d <= highest; ++d)
      out += (d > 0 ? "," : "") + std::to_string(d);
    return out;
  }
  // The entries as given (indices, GPU-/MIG- UUIDs); the first highest + 1
  // of them name the same devices at the same indices.
  const std::string_view s(current);
  if (s.empty())
    return std::nullopt; // sees none: the driver's message stays the one to give
  std::size_t at = 0;
  for (int kept = 0; kept <= highest; ++kept) {
    const std::size_t comma = s.find(',', at);
    if (comma == std::string_view::npos)
      return std::nullopt; // no more entries than the command may use
    at = comma + 1;
  }
  return std::string(s.substr(0, at - 1));
}

std::optional<int> highest_device_used(const Config& config, bool batch) {
  const ExecutionSpec& e = config.execution;
  if (e.backend == BackendKind::cpu)
    return std::nullopt;
  if (!batch)
    return e.devices.empty() ? 0 : e.devices.front();
  if (e.devices.empty())
    return std::nullopt;
  return *std::max_element(e.devices.begin(), e.devices.end());
}

std::optional<std::string> let_the_driver_see_through(int highest) {
  std::optional<std::string> value =
      visible_devices_through(std::getenv("CUDA_VISIBLE_DEVICES"), highest);
  if (value) {
    ::setenv("CUDA_VISIBLE_DEVICES", value->c_str(), 1);
    if (trace_on())
      trace(("cuda: the driver sees CUDA_VISIBLE_DEVICES=" + *value).c_str());
  }
  return value;
}

std::optional<std::string> see_only_devices_used(const Config& config, bool batch) {
  const std::optional<int> highest = highest_device_used(config, batch);
  return highest ? let_the_driver_see_through(*highest) : std::nullopt;
}

} // namespace sigstream
