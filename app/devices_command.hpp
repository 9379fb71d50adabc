#pragma once
// `sigstream devices` (SPEC §1): the CUDA devices this build can use.
#include <CLI/CLI.hpp>

namespace sigstream::app {

CLI::App* add_devices_command(CLI::App& app);
int run_devices_command();

} // namespace sigstream::app
