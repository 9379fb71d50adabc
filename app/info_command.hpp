#pragma once
// `sigstream info` (SPEC §1): an audio file's rate, channels, frames, duration,
// format; with --loudness its EBU R128 loudness (SPEC §13).
#include <CLI/CLI.hpp>

#include <string>

#include "app/common.hpp"

namespace sigstream::app {

struct InfoFlags {
  std::string path;
  RawFlags raw;
  bool loudness = false; // --loudness: EBU R128 values too (SPEC §13)
  CLI::App* command = nullptr;
};

CLI::App* add_info_command(CLI::App& app, InfoFlags& flags);
int run_info_command(const InfoFlags& flags);

} // namespace sigstream::app
