// The sigstream command line (SPEC §1): builds the CLI11 tree of the
// subcommands (each in app/<name>_command.*), runs the one given and maps
// errors to exit codes (0 ok, 1 processing failure, 2 usage/config error).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "app/batch_command.hpp"
#include "app/cli_words.hpp"
#include "app/common.hpp"
#include "app/demo_command.hpp"
#include "app/design_command.hpp"
#include "app/devices_command.hpp"
#include "app/filter_command.hpp"
#include "app/info_command.hpp"
#include "app/plot_command.hpp"
#include "app/run_command.hpp"
#include "app/schema_command.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "core/version.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "pipeline/pipeline.hpp"

using namespace sigstream;

// Every output is complete and closed when a command returns; what is left
// is tearing down the CUDA runtime and the pinned memory pools, which takes a
// good part of a second on some machines and does nothing for the user. So
// leave without the exit-time destructors.
[[noreturn]] void leave(int rc) {
  trace("exit");
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(rc);
}

int run_main(int argc, char** argv);

int main(int argc, char** argv) {
  leave(run_main(argc, argv));
}

int run_main(int argc, char** argv) {
  trace("main");
  install_signal_handlers();
  // A reader that closes our piped output makes write() fail with EPIPE,
  // which the sink turns into a quiet stop, instead of killing us silently.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"sigstream: filter audio on the GPU (or CPU), checked against a float64 reference.\n"
               "With no command, runs the built-in demo (writes out/demo.wav, out/demo_stats.json "
               "and out/demo_chunks.csv)."};
  app.set_version_flag("--version",
                       std::string("sigstream ") + kVersion +
                           " (CPU FFT: " + kernels::cpu::FirFft::library() + "; CUDA backend: " +
                           (cuda_built() ? std::string("built; fused FFT engine: ") +
                                               (fused_fft_engine_built() ? "on" : "off")
                                         : std::string("not built")) +
                           ")");
  app.require_subcommand(0, 1);

  // The flags several commands share bind to one set of variables: only one
  // command runs.
  app::CommonFlags common;
  std::vector<std::string> sets;

  app::RunFlags run_flags;
  auto* run = app::add_run_command(app, run_flags, sets, common);
  app::FilterCommandFlags filter_flags;
  auto* filter = app::add_filter_command(app, filter_flags, common);
  app::BatchFlags batch_flags;
  auto* batch = app::add_batch_command(app, batch_flags);
  app::add_set_option(batch, sets);
  app::add_common(batch, common, app::BackendCheck::cli);
  batch->get_option("--stats")->description(
      "Write the batch summary JSON here (default: OUT_DIR/batch_summary.json; "
      "OUT_DIR/batch_summary.I-of-N.json with --shard)");
  app::DesignFlags design_flags;
  auto* design = app::add_design_command(app, design_flags);
  app::InfoFlags info_flags;
  auto* info = app::add_info_command(app, info_flags);
  app::PlotFlags plot_flags;
  auto* plot = app::add_plot_command(app, plot_flags);
  auto* devices = app::add_devices_command(app);
  auto* schema = app::add_schema_command(app);

  const auto usage_error = [](const std::string& m) {
    std::cerr << "sigstream: error: " << m
              << "\n(run 'sigstream --help' or 'sigstream COMMAND --help')\n";
    return 2;
  };
  if (const std::optional<std::string> empty = app::empty_flag_value(argc, argv))
    return usage_error(*empty);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A mistyped command or option is the error to name, whatever CLI11 met first.
    const std::optional<std::string> typo = app::unknown_word(app, argc, argv);
    return usage_error(typo ? *typo : std::string(e.what()));
  }

  try {
    if (*run)
      return app::run_run_command(run_flags, sets, common);
    if (*filter)
      return app::run_filter_command(filter_flags, common);
    if (*batch)
      return app::run_batch_command(
          batch_flags, sets,
          {common.backend, common.verify, common.quiet, common.no_progress, common.stats});
    if (*design)
      return app::run_design_command(design_flags);
    if (*info)
      return app::run_info_command(info_flags);
    if (*devices)
      return app::run_devices_command();
    if (*plot)
      return app::run_plot_command(plot_flags);
    if (*schema)
      return app::run_schema_command();
    return app::run_demo(common);
  } catch (const Error& e) {
    // A reader that closed our output pipe has all it wants: stop quietly.
    if (e.kind() == ErrorKind::output_closed)
      return exit_code(e.kind());
    std::cerr << "sigstream: error: " << e.what() << "\n";
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "sigstream: internal error: " << e.what() << "\n";
    return 1;
  }
}
