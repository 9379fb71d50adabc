#pragma once
// `sigstream design` (SPEC §1): prints FIR taps, like scipy.signal.firwin.
#include <CLI/CLI.hpp>

#include "app/filter_flags.hpp"

namespace sigstream::app {

struct DesignFlags {
  FilterFlags filter;
  double rate = 0.0;
  // With --iir: the family and its ripple / attenuation (dB).
  std::string ftype = "butter";
  double rp = 0.0, rs = 0.0;
};

CLI::App* add_design_command(CLI::App& app, DesignFlags& flags);
int run_design_command(const DesignFlags& flags);

} // namespace sigstream::app
