#pragma once
// `sigstream schema`: every YAML key as markdown (docs/yaml-reference.md).
#include <CLI/CLI.hpp>

namespace sigstream::app {

CLI::App* add_schema_command(CLI::App& app);
int run_schema_command();

} // namespace sigstream::app
