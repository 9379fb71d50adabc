#pragma once
// `sigstream filter INPUT OUTPUT` (SPEC §1): one file or stream through a
// filter, a resampler and a gain, given by flags instead of a config.
// --mix puts a channel mix before them.
#include <CLI/CLI.hpp>

#include <string>

#include "app/common.hpp"
#include "app/filter_flags.hpp"

namespace sigstream::app {

struct FilterCommandFlags {
  std::string input, output;
  RawFlags raw;
  std::string sink_type;
  FilterFlags filter;
  std::string mode = "causal", method = "auto", format = "same";
  LiveFlags live;
  std::string gain_db, resample, quality, mix;
  std::string normalize, true_peak_max; // --normalize lufs:-23|peak:-1|rms:-20, --true-peak-max DB
  bool zero_phase = false;              // --zero-phase: the --iir design forward and backward
  CLI::App* command = nullptr;
};

// Adds `filter` with its flags and the common ones (`common`).
CLI::App* add_filter_command(CLI::App& app, FilterCommandFlags& flags, CommonFlags& common);
int run_filter_command(const FilterCommandFlags& flags, const CommonFlags& common);

} // namespace sigstream::app
