// `sigstream run`: every flag is an override of the config it runs, so the
// schema checks it like a value in the file.
#include "app/run_command.hpp"

#include "pipeline/config.hpp"
#include "pipeline/visible_devices.hpp"

namespace sigstream::app {

CLI::App* add_run_command(CLI::App& app, RunFlags& flags, std::vector<std::string>& sets,
                          CommonFlags& common) {
  auto* run = app.add_subcommand("run", "Run a YAML pipeline config");
  run->add_option("CONFIG", flags.config_path, "YAML config (SPEC §2)")->required();
  add_set_option(run, sets);
  add_common(run, common, BackendCheck::schema);
  add_plot_flag(run, common);
  add_live_flags(run, flags.live);
  flags.command = run;
  return run;
}

int run_run_command(const RunFlags& flags, const std::vector<std::string>& sets,
                    const CommonFlags& common) {
  FlagOverrides o;
  if (flags.command->count("--latency") > 0)
    o.add("--latency", "execution.latency_ms=" + yaml_value(flags.live.latency));
  if (flags.live.busy_poll)
    o.add("--busy-poll", "execution.busy_poll=true");
  if (flags.live.redundant)
    o.add("--redundant", "execution.redundant=true");
  return run_config(flags.config_path, sets, o, common);
}

int run_config(const std::string& path, std::vector<std::string> sets, FlagOverrides flags,
               const CommonFlags& common) {
  if (!common.backend.empty())
    flags.add("--backend", "execution.backend=" + yaml_value(common.backend));
  if (!common.stats.empty())
    flags.add("--stats", "stats.json=" + yaml_string(common.stats));
  sets.insert(sets.end(), flags.overrides().begin(), flags.overrides().end());
  const std::string origin = path.empty() ? "<built-in demo>" : path;
  Config config;
  try {
    config =
        path.empty() ? parse_config(demo_config_text(), origin, sets) : load_config(path, sets);
  } catch (...) {
    flags.rethrow(origin);
  }
  if (!common.plot.empty())
    check_figure_name(common.plot, "--plot");
  see_only_devices_used(config, false); // one GPU: the driver starts faster seeing only it
  return finish(run_pipeline(config, run_options(common)), common, config.stats.json);
}

} // namespace sigstream::app
