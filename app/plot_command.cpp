// `sigstream plot STATS [-o FIG]`: checks the names, then draws.
#include "app/plot_command.hpp"

#include <filesystem>

#include "app/common.hpp"
#include "app/plot.hpp"
#include "core/error.hpp"

namespace sigstream::app {

CLI::App* add_plot_command(CLI::App& app, PlotFlags& flags) {
  auto* plot =
      app.add_subcommand("plot", "Draw a run's figure from its statistics JSON (needs matplotlib)");
  plot->add_option("STATS", flags.stats, "Statistics JSON of a run (stats.json / --stats)")
      ->required();
  plot->add_option("-o,--output", flags.output,
                   "Figure: .png, .svg or .pdf (default: STATS with .png)")
      ->type_name("FIG");
  return plot;
}

int run_plot_command(const PlotFlags& flags) {
  const std::string fig =
      flags.output.empty() ? std::filesystem::path(flags.stats).replace_extension(".png").string()
                           : flags.output;
  check_figure_name(fig, "plot -o");
  if (!std::filesystem::exists(flags.stats))
    throw io_error(flags.stats + ": no such file");
  return draw_figure(flags.stats, fig);
}

} // namespace sigstream::app
