// CUDA_VISIBLE_DEVICES cut to the GPUs a command can use (see the header).
#include "pipeline/visible_devices.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/trace.hpp"

namespace sigstream {

std::optional<std::string> visible_devices_through(const char* current, int highest) {
  if (highest < 0)
    return std::nullopt;
  std::string out;
  if (current == nullptr) {
    // A device past any host's count (a typo such as 100000) is left to the
    // driver's "does not exist": no list that long is built.
    if (highest >= kMostDevicesNarrowed)
      return std::nullopt;
    for (int d = 0; d <= highest; ++d)
      out += (d > 0 ? "," : "") + std::to_string(d);
    return out;
  }
  // The entries as given (indices, GPU-/MIG- UUIDs); the first highest + 1
  // of them name the same devices at the same indices. A list with an empty
  // or a repeated entry among those is left as it is: how the driver reads
  // it is not ours to guess.
  const std::string_view s(current);
  std::vector<std::string_view> kept;
  std::size_t at = 0;
  while (static_cast<int>(kept.size()) <= highest) {
    const std::size_t comma = s.find(',', at);
    if (comma == std::string_view::npos)
      return std::nullopt; // no more entries than the command may use
    const std::string_view entry = s.substr(at, comma - at);
    if (entry.find_first_not_of(" \t") == std::string_view::npos ||
        std::find(kept.begin(), kept.end(), entry) != kept.end())
      return std::nullopt;
    kept.push_back(entry);
    at = comma + 1;
  }
  return std::string(s.substr(0, at - 1));
}

std::optional<int> highest_device_used(const std::vector<int>& devices, BackendKind kind,
                                       bool batch) {
  if (kind == BackendKind::cpu)
    return std::nullopt;
  if (!batch)
    return devices.empty() ? 0 : devices.front();
  if (devices.empty())
    return std::nullopt;
  return *std::max_element(devices.begin(), devices.end());
}

std::optional<int> highest_device_used(const Config& config, bool batch) {
  return highest_device_used(config.execution.devices, config.execution.backend, batch);
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
