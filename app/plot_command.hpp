#pragma once
// `sigstream plot` (SPEC §8): a run's figure from its statistics JSON (the
// drawing itself is app/plot.hpp's, shared with --plot).
#include <CLI/CLI.hpp>

#include <string>

namespace sigstream::app {

struct PlotFlags {
  std::string stats;
  std::string output;
};

CLI::App* add_plot_command(CLI::App& app, PlotFlags& flags);
int run_plot_command(const PlotFlags& flags);

} // namespace sigstream::app
