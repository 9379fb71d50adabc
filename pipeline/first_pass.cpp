#include "pipeline/first_pass.hpp"

#include <string>

#include "core/error.hpp"
#include "model/report.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/source.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace {

// Why the signal cannot be read twice and what to do, or "".
std::string single_pass_only(const Config& config, bool open_ended) {
  if (config.execution.latency_ms)
    return "live mode (--latency) processes each block once (run it without --latency)";
  const char* advice = " (write the stream to a file first, or leave the stage out)";
  if (config.source.file && is_std_stream(*config.source.file))
    return std::string("standard input is a stream") + advice;
  if (open_ended)
    return "'" + config.source.file.value_or("the source") + "' is a stream (a pipe), not a file" +
           advice;
  return {};
}

} // namespace

bool needs_first_pass(const Config& config) {
  for (const StageSpec& s : config.stages)
    if (const auto first = stage_kind(s.type).first_pass; first != nullptr && first(s))
      return true;
  return false;
}

Config with_first_passes(const Config& config, const RunOptions& options, bool open_ended) {
  Config out = config;
  for (std::size_t j = 0; j < out.stages.size(); ++j) {
    const StageKind& kind = stage_kind(out.stages[j].type);
    if (kind.first_pass == nullptr)
      continue;
    const std::optional<StageSpec> probe = kind.first_pass(out.stages[j]);
    if (!probe)
      continue;
    if (const std::string why = single_pass_only(config, open_ended); !why.empty())
      throw config_error(stage_where(StagePlanContext{config, j, 0.0, 0, 1}, out.stages[j]) + ": " +
                         std::string(to_string(kind.type)) + " needs two passes over a file, and " +
                         why);
    // The chain up to the stage, measured at its input; no audio, no statistics files.
    Config first = out;
    first.stages.resize(j);
    first.stages.push_back(*probe);
    first.sink = SinkSpec{};
    first.stats = StatsSpec{};
    RunOptions fo;
    fo.chunk_rows = false;
    fo.exiting = false;
    const RunReport measured = run_pipeline(first, fo);
    const MetricsReport* block = nullptr;
    for (const MetricsReport& m : measured.metrics)
      if (m.name == probe->name)
        block = &m;
    if (block == nullptr)
      throw Error(ErrorKind::internal, "first pass of stage '" + out.stages[j].name +
                                           "': its measurement is missing from the run's report");
    kind.measured(out.stages[j], *block, options.log);
  }
  return out;
}

} // namespace sigstream
