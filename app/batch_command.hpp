#pragma once
// `sigstream batch` (SPEC §1, §10): its flags and what it runs.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sigstream::app {

struct BatchFlags {
  std::string config_path;
  std::vector<std::string> inputs;
  std::string out_dir;
  bool keep_going = false, stop_on_error = false, force = false;
  int files_per_device = 0; // 0: auto
  std::string shard;        // "I/N" or "auto"
  bool list_inputs = false;
  std::string inputs_from; // FILE, or "-" for standard input
  std::string merge_dir;
  std::string scheduler; // ADDRESS, FILE.json or local[:N]: the batch runs on Dask, through Python
  CLI::App* command = nullptr;
};

// The flags `batch` shares with `run` and `filter` (main's add_common).
struct BatchCommon {
  std::string backend;
  bool verify = false;
  bool quiet = false;
  bool no_progress = false;
  std::string stats; // --stats: the summary's path
};

// Adds `batch` to `app` with its own flags; the caller adds --set and the common flags.
CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags);

// Runs `batch` (or `batch --merge`) once parsed. Returns the exit code;
// throws sigstream::Error for usage and config errors.
int run_batch_command(const BatchFlags& flags, std::vector<std::string> sets,
                      const BatchCommon& common);

} // namespace sigstream::app
