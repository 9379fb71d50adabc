#pragma once
// `sigstream run CONFIG` (SPEC §1, §2): a YAML pipeline, with --set overrides.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "app/common.hpp"

namespace sigstream::app {

struct RunFlags {
  std::string config_path;
  LiveFlags live;
  CLI::App* command = nullptr;
};

// Adds `run`; --set fills `sets` and the common flags `common`.
CLI::App* add_run_command(CLI::App& app, RunFlags& flags, std::vector<std::string>& sets,
                          CommonFlags& common);
int run_run_command(const RunFlags& flags, const std::vector<std::string>& sets,
                    const CommonFlags& common);

// Runs a config file, or the built-in demo when `path` is empty, with the
// user's `sets`, then the flags' own overrides (`flags`: --backend and
// --stats are added here), all checked by the schema.
int run_config(const std::string& path, std::vector<std::string> sets, FlagOverrides flags,
               const CommonFlags& common);

} // namespace sigstream::app
