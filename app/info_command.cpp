// `sigstream info`: opens the input as `filter` would (its raw flags are the
// same source.raw overrides, checked by the schema) and prints what it is.
#include "app/info_command.hpp"

#include <cstdint>
#include <cstdio>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/pipeline.hpp"

namespace sigstream::app {

CLI::App* add_info_command(CLI::App& app, InfoFlags& flags) {
  auto* info =
      app.add_subcommand("info", "Show an audio file's rate, channels, frames, duration, format");
  info->add_option("FILE", flags.path, "Audio file; - = standard input (read to its end)")
      ->required();
  add_raw_flags(info, flags.raw);
  info->add_flag("--loudness", flags.loudness,
                 "Also measure its EBU R128 loudness (integrated, range, true peak, max "
                 "momentary and short-term; libebur128), reading the whole file");
  flags.command = info;
  return info;
}

namespace {

void print_basics(const std::string& path, const std::string& format, double rate, int channels,
                  std::int64_t frames) {
  std::printf(
      "file:        %s\nformat:      %s\nsample_rate: %g\nchannels:    %d\nframes:      %lld\n"
      "duration_s:  %.6f\n",
      path.c_str(), format.c_str(), rate, channels, static_cast<long long>(frames),
      static_cast<double>(frames) / rate);
}

// The file through a metrics block with loudness on the CPU backend, no
// output (the config the schema reads, with the file's overrides).
int print_with_loudness(const std::string& path, const FlagOverrides& o) {
  Config config;
  try {
    config = parse_config("version: 1\nstages: [{type: metrics, name: loudness, loudness: true}]\n"
                          "execution: {backend: cpu}\n",
                          "info", o.overrides());
  } catch (...) {
    o.rethrow("info");
  }
  RunOptions options;
  options.chunk_rows = false;
  options.exiting = true;
  const RunReport r = run_pipeline(config, options);
  print_basics(path, r.input_format, r.sample_rate, r.channels, r.input_frames);
  const LoudnessReport l = r.metrics.front().loudness.value_or(LoudnessReport{});
  const auto line = [](const char* name, const std::optional<double>& v, const char* unit,
                       const char* none) {
    if (v)
      std::printf("%-20s %.2f %s\n", name, *v, unit);
    else
      std::printf("%-20s none (%s)\n", name, none);
  };
  line("integrated_lufs:", l.integrated_lufs, "LUFS", "no 400 ms block above the gates");
  line("range_lu:", l.range_lu, "LU", "no 3 s block above the gates");
  line("true_peak_dbtp:", l.true_peak_dbtp, "dBTP", "silence");
  line("max_momentary_lufs:", l.max_momentary_lufs, "LUFS", "silence, or shorter than 400 ms");
  line("max_short_term_lufs:", l.max_short_term_lufs, "LUFS", "silence, or shorter than 3 s");
  return 0;
}

} // namespace

int run_info_command(const InfoFlags& flags) {
  FlagOverrides o;
  o.add("FILE", "source.file=" + yaml_string(flags.path));
  add_raw_overrides(flags.command, flags.raw, o);
  Config config;
  try {
    config = parse_config("version: 1\n", "info", o.overrides());
  } catch (...) {
    o.rethrow("info");
  }
  const std::string& path = flags.path;
  if (flags.loudness)
    return print_with_loudness(path, o);
  auto src = open_audio_file(path, config.source.raw);
  const SourceInfo& i = src->info();
  std::int64_t frames = i.frames;
  if (frames == kUnknownFrames) {
    // A stream (or a header that does not say): count the frames to its end.
    HostBlock block = make_host_block(i.sample_type, i.channels, 65536);
    frames = 0;
    for (std::int64_t got = 0; (got = src->read(block, 0, block.capacity)) > 0;)
      frames += got;
    if (frames == 0)
      throw io_error(path + ": holds no audio frames (the stream is empty)");
  }
  print_basics(path, src->format_name(), i.sample_rate, i.channels, frames);
  return 0;
}

} // namespace sigstream::app
