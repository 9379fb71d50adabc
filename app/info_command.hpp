#pragma once
// `sigstream info` (SPEC §1): an audio file's rate, channels, frames, duration, format.
#include <CLI/CLI.hpp>

#include <string>

#include "app/common.hpp"

namespace sigstream::app {

struct InfoFlags {
  std::string path;
  RawFlags raw;
  CLI::App* command = nullptr;
};

CLI::App* add_info_command(CLI::App& app, InfoFlags& flags);
int run_info_command(const InfoFlags& flags);

} // namespace sigstream::app
