// `sigstream info`: opens the input as `filter` would (its raw flags are the
// same source.raw overrides, checked by the schema) and prints what it is.
#include "app/info_command.hpp"

#include <cstdint>
#include <cstdio>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream::app {

CLI::App* add_info_command(CLI::App& app, InfoFlags& flags) {
  auto* info =
      app.add_subcommand("info", "Show an audio file's rate, channels, frames, duration, format");
  info->add_option("FILE", flags.path, "Audio file; - = standard input (read to its end)")
      ->required();
  add_raw_flags(info, flags.raw);
  flags.command = info;
  return info;
}

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
  std::printf(
      "file:        %s\nformat:      %s\nsample_rate: %g\nchannels:    %d\nframes:      %lld\n"
      "duration_s:  %.6f\n",
      path.c_str(), src->format_name().c_str(), i.sample_rate, i.channels,
      static_cast<long long>(frames), static_cast<double>(frames) / i.sample_rate);
  return 0;
}

} // namespace sigstream::app
