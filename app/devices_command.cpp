// `sigstream devices`: one line a device, or why there is none.
#include "app/devices_command.hpp"

#include <cstdio>

#include "pipeline/pipeline.hpp"

namespace sigstream::app {

CLI::App* add_devices_command(CLI::App& app) {
  return app.add_subcommand("devices", "List CUDA devices");
}

int run_devices_command() {
  const auto devices = list_devices();
  if (devices.empty()) {
    std::printf("none: %s\n", cuda_built() ? "no CUDA device found (the CPU backend will be used)"
                                           : "this sigstream was built without CUDA");
    return 0;
  }
  for (const auto& d : devices)
    std::printf("%d: %s, %.1f GiB, compute capability %d.%d, %d multiprocessors\n", d.ordinal,
                d.name.c_str(), static_cast<double>(d.memory_bytes) / (1 << 30), d.major, d.minor,
                d.multiprocessors);
  return 0;
}

} // namespace sigstream::app
