// The sigstream command line (SPEC §1): parses, calls the library, maps
// errors to exit codes (0 ok, 1 processing failure, 2 usage/config error).
#include <CLI/CLI.hpp>

#include "app/batch_command.hpp"
#include "app/cli_words.hpp"
#include "app/plot.hpp"

#include <charconv>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "core/version.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/pipeline.hpp"
#include "stages/design.hpp"
#include "stages/fir/spec.hpp"
#include "stages/gain/spec.hpp"
#include "stages/resample/spec.hpp"

namespace {

using namespace sigstream;

struct CommonFlags {
  std::string backend;
  bool verify = false;
  bool quiet = false;
  bool no_progress = false;
  std::string stats;
  std::string plot;  // run/filter --plot FIG
};

void add_plot_flag(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--plot", f.plot, "Also draw the run's figure (waveforms, spectra, filter responses, levels) "
                                    "into FIG (.png, .svg, .pdf; needs matplotlib)")
      ->type_name("FIG");
}

// A figure's name must say its format.
void check_figure_name(const std::string& fig, const char* what) {
  const std::string ext = std::filesystem::path(fig).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw config_error(std::string(what) + ": '" + fig + "' must end in .png, .svg or .pdf (the figure's format)");
}

void add_common(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--backend", f.backend, "Where to compute: auto (CUDA if a device exists), cpu, cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_flag("--verify", f.verify, "Check the output against a float64 CPU reference (exit 1 if off)");
  cmd->add_flag("--quiet,-q", f.quiet, "Print nothing but errors");
  cmd->add_flag("--no-progress", f.no_progress, "No progress bar");
  cmd->add_option("--stats", f.stats, "Write statistics JSON here");
}

// --set takes one value per use, so that `--set a=1 CONFIG` and
// `batch CONFIG --set a=1 more.wav` keep CONFIG and the inputs positional.
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets, "Override a config value: KEY.PATH=VALUE (repeatable)")
      ->type_name("KEY.PATH=VALUE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// Filter specification shared by `filter` and `design`.
struct FilterFlags {
  std::string lowpass, highpass, bandpass, bandstop, taps_file;
  int taps = 255;
  std::string window = "hamming";
};

void add_filter_flags(CLI::App* cmd, FilterFlags& f, bool with_taps_file) {
  auto* g = cmd->add_option_group("filter", "the filter (exactly one)");
  g->add_option("--lowpass", f.lowpass, "Low-pass cutoff in Hz")->type_name("HZ");
  g->add_option("--highpass", f.highpass, "High-pass cutoff in Hz")->type_name("HZ");
  g->add_option("--bandpass", f.bandpass, "Band-pass edges in Hz")->type_name("LO:HI");
  g->add_option("--bandstop", f.bandstop, "Band-stop edges in Hz")->type_name("LO:HI");
  if (with_taps_file)
    g->add_option("--taps-file", f.taps_file, "Taps, one coefficient per line ('#' comments)")
        ->type_name("FILE");
  // `filter` also runs with --resample alone (checked after parsing).
  g->require_option(with_taps_file ? 0 : 1, 1);
  cmd->add_option("--taps", f.taps, "Number of taps (odd for highpass and bandstop)")
      ->capture_default_str();
  cmd->add_option("--window", f.window,
                  "hamming | hann | blackman | rectangular | kaiser:BETA (e.g. kaiser:8.6)")
      ->capture_default_str();
}

double parse_number(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw config_error(flag + ": '" + text + "' is not a number");
  return v;
}

double parse_hz(const std::string& text, const std::string& flag) {
  const double v = parse_number(text, flag);
  if (!std::isfinite(v)) throw config_error(flag + ": '" + text + "' is not a frequency in Hz");
  return v;
}

std::vector<double> parse_band(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw config_error(flag + ": expected LO:HI in Hz (e.g. 300:3400), got '" + text + "'");
  return {parse_hz(text.substr(0, colon), flag), parse_hz(text.substr(colon + 1), flag)};
}

DesignSpec design_from(const FilterFlags& f) {
  DesignSpec d;
  if (!f.lowpass.empty()) {
    d.kind = FilterKind::lowpass;
    d.cutoff_hz = {parse_hz(f.lowpass, "--lowpass")};
  } else if (!f.highpass.empty()) {
    d.kind = FilterKind::highpass;
    d.cutoff_hz = {parse_hz(f.highpass, "--highpass")};
  } else if (!f.bandpass.empty()) {
    d.kind = FilterKind::bandpass;
    d.cutoff_hz = parse_band(f.bandpass, "--bandpass");
  } else {
    d.kind = FilterKind::bandstop;
    d.cutoff_hz = parse_band(f.bandstop, "--bandstop");
  }
  d.taps = f.taps;
  d.window = parse_window(f.window);
  if (d.window.kind == WindowKind::kaiser && f.window.find(':') == std::string::npos)
    throw config_error("--window: kaiser needs its beta, e.g. --window kaiser:8.6");
  return d;
}

// Shortest text that reads back as the same double (for --set values).
std::string format_double(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

RawEncoding parse_raw_encoding(const std::string& text) {
  if (auto e = raw_encoding_named(text)) return *e;
  throw config_error("--encoding: '" + text +
                     "' is not a raw encoding (expected s8 u8 s16le s16be s24le s24be s32le s32be f32le "
                     "f32be f64le f64be)");
}

SinkType parse_sink_type(const std::string& text) {
  if (auto t = sink_type_named(text)) return *t;
  throw config_error("--type: '" + text + "' is not an output container (expected wav, raw, au, flac or caf)");
}

// Headerless PCM input (SPEC §6): --input-type raw with its description.
struct RawFlags {
  std::string input_type;
  double rate = 0.0;
  int channels = 0;
  std::string encoding;
};

void add_raw_flags(CLI::App* cmd, RawFlags& f) {
  cmd->add_option("--input-type", f.input_type, "raw: the input is headerless PCM (needs --rate, --channels, --encoding)")
      ->check(CLI::IsMember({"raw"}));
  cmd->add_option("--rate", f.rate, "Raw input: sample rate in Hz")->type_name("HZ");
  cmd->add_option("--channels", f.channels, "Raw input: channels (interleaved)")->type_name("N");
  cmd->add_option("--encoding", f.encoding,
                  "Raw input: s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be")
      ->type_name("E");
}

std::optional<RawSpec> raw_spec(CLI::App* cmd, const RawFlags& f) {
  const bool described = cmd->count("--rate") + cmd->count("--channels") + cmd->count("--encoding") > 0;
  if (f.input_type.empty()) {
    if (described)
      throw config_error("--rate, --channels and --encoding describe a raw input: add --input-type raw");
    return std::nullopt;
  }
  std::string missing;
  for (const char* flag : {"--rate", "--channels", "--encoding"})
    if (cmd->count(flag) == 0) missing += std::string(missing.empty() ? "" : ", ") + flag;
  if (!missing.empty())
    throw config_error("--input-type raw: the stream has no header, so it needs " + missing +
                       " (e.g. --rate 48000 --channels 2 --encoding s16le)");
  if (!(f.rate > 0) || f.rate != std::floor(f.rate) || f.rate > 2147483647.0)
    throw config_error("--rate: " + format_double(f.rate) + " is not a sample rate (expected a whole number of Hz > 0)");
  if (f.channels < 1 || f.channels > 1024)
    throw config_error("--channels: " + std::to_string(f.channels) + " is out of range (expected 1 to 1024)");
  RawSpec r;
  r.sample_rate = f.rate;
  r.channels = f.channels;
  r.encoding = parse_raw_encoding(f.encoding);
  return r;
}

struct LiveFlags {
  double latency = 0.0;
  bool busy_poll = false;
  bool redundant = false;
};

void add_live_flags(CLI::App* cmd, LiveFlags& f) {
  cmd->add_option("--latency", f.latency, "Live mode: bound on the added latency in ms (execution.latency_ms)")
      ->type_name("MS")
      ->check(CLI::Range(0.001, 10000.0));
  cmd->add_flag("--busy-poll", f.busy_poll,
                "Live mode: wait for input and output by spinning, not sleeping; one core busy, a shorter "
                "tail on virtual machines (execution.busy_poll)");
  cmd->add_flag("--redundant", f.redundant,
                "Live mode: compute every block on two spinning threads, the first to finish writes it; "
                "rides over one core's stall (execution.redundant)");
}

RunOptions run_options(const CommonFlags& f) {
  RunOptions o;
  o.verify = f.verify;
  o.progress = !f.quiet && !f.no_progress;
  o.exiting = true;
  o.chunk_rows = !f.plot.empty();  // the figure's levels; statistics files keep them anyway
  if (!f.quiet) o.log = [](const std::string& m) { std::cerr << "sigstream: " << m << "\n"; };
  return o;
}

void print_summary(const RunReport& r) {
  std::ostringstream o;
  char buf[256];
  for (const MetricsReport& m : r.metrics) {
    std::snprintf(buf, sizeof buf, "  %-16s", m.name.c_str());
    o << buf;
    for (std::size_t c = 0; c < m.totals.size(); ++c) {
      std::snprintf(buf, sizeof buf, "  ch%zu rms %.6g peak %.6g", c, m.totals[c].rms(), m.totals[c].peak);
      o << buf;
    }
    o << "\n";
  }
  const double fps = r.wall_s > 0 ? static_cast<double>(r.output_frames) / r.wall_s : 0.0;
  std::snprintf(buf, sizeof buf, "%lld frames x %d ch in %.3f s (%.1f Mframes/s, %.0fx real time) on %s",
                static_cast<long long>(r.output_frames), r.channels, r.wall_s, fps * 1e-6,
                r.sample_rate > 0 ? fps / r.sample_rate : 0.0, r.backend.c_str());
  o << "sigstream: " << buf;
  if (!r.output_path.empty()) o << "; wrote " << r.output_path << " (" << r.output_format << ")";
  if (r.clipped_samples > 0) o << "; " << r.clipped_samples << " samples clipped";
  o << "\n";
  std::cerr << o.str();
}

int finish(const RunReport& r, const CommonFlags& f, const std::optional<std::string>& stats_path) {
  if (!f.quiet) print_summary(r);
  if (r.verification.ran) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "rel L2 error %.3g, max abs error %.3g vs the float64 reference (tolerance %.0e)",
                  r.verification.rel_l2_error, r.verification.max_abs_error, r.verification.tolerance);
    if (!r.verification.passed) {
      std::cerr << "sigstream: error: verification failed: " << buf << "\n";
      return 1;
    }
    if (!f.quiet) std::cerr << "sigstream: verify passed: " << buf << "\n";
  }
  // --plot: from the statistics file the run wrote, else from the report in memory.
  if (f.plot.empty()) return 0;
  return stats_path ? app::draw_figure(*stats_path, f.plot) : app::draw_figure_from_text(stats_json(r), f.plot);
}

// Runs a config file (or the demo when `path` is empty); --backend and
// --stats are applied as --set overrides so they are validated the same way.
int run_config(const std::string& path, std::vector<std::string> sets, const CommonFlags& f) {
  if (!f.backend.empty()) sets.push_back("execution.backend=" + f.backend);
  if (!f.stats.empty()) sets.push_back("stats.json=" + f.stats);
  const Config config = path.empty() ? parse_config(demo_config_text(), "<built-in demo>", sets)
                                     : load_config(path, sets);
  if (!f.plot.empty()) check_figure_name(f.plot, "--plot");
  return finish(run_pipeline(config, run_options(f)), f, config.stats.json);
}

int cmd_info(const std::string& path, const std::optional<RawSpec>& raw) {
  auto src = open_audio_file(path, raw);
  const SourceInfo& i = src->info();
  std::int64_t frames = i.frames;
  if (frames == kUnknownFrames) {
    // A stream (or a header that does not say): count the frames to its end.
    HostBlock block = make_host_block(i.sample_type, i.channels, 65536);
    frames = 0;
    for (std::int64_t got = 0; (got = src->read(block, 0, block.capacity)) > 0;) frames += got;
    if (frames == 0) throw io_error(path + ": holds no audio frames (the stream is empty)");
  }
  std::printf("file:        %s\nformat:      %s\nsample_rate: %g\nchannels:    %d\nframes:      %lld\n"
              "duration_s:  %.6f\n",
              path.c_str(), src->format_name().c_str(), i.sample_rate, i.channels,
              static_cast<long long>(frames), static_cast<double>(frames) / i.sample_rate);
  return 0;
}

int cmd_devices() {
  const auto devices = list_devices();
  if (devices.empty()) {
    std::printf("none: %s\n", cuda_built() ? "no CUDA device found (the CPU backend will be used)"
                                          : "this sigstream was built without CUDA");
    return 0;
  }
  for (const auto& d : devices)
    std::printf("%d: %s, %.1f GiB, compute capability %d.%d, %d multiprocessors\n", d.ordinal,
                d.name.c_str(), static_cast<double>(d.memory_bytes) / (1 << 30), d.major, d.minor,
                d.multiprocessors);
  return 0;
}

int cmd_design(const FilterFlags& f, double rate) {
  const auto taps = design_fir(design_from(f), rate);
  for (double t : taps) std::printf("%.17g\n", t);
  return 0;
}

}  // namespace

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

int main(int argc, char** argv) { leave(run_main(argc, argv)); }

int run_main(int argc, char** argv) {
  trace("main");
  install_signal_handlers();
  // A reader that closes our piped output makes write() fail with EPIPE,
  // which the sink turns into a quiet stop, instead of killing us silently.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"sigstream: filter audio on the GPU (or CPU), checked against a float64 reference.\n"
               "With no command, runs the built-in demo (writes out/demo.wav, out/demo_stats.json and out/demo_chunks.csv)."};
  app.set_version_flag("--version", std::string("sigstream ") + kVersion + " (CPU FFT: " +
                                        kernels::cpu::FirFft::library() + "; CUDA backend: " +
                                        (cuda_built() ? std::string("built; fused FFT engine: ") + (fused_fft_engine_built() ? "on" : "off")
                                                   : std::string("not built")) + ")");
  app.require_subcommand(0, 1);

  CommonFlags common;
  std::vector<std::string> sets;
  std::string config_path;

  auto* run = app.add_subcommand("run", "Run a YAML pipeline config");
  run->add_option("CONFIG", config_path, "YAML config (SPEC §2)")->required();
  add_set_option(run, sets);
  add_common(run, common);
  add_plot_flag(run, common);
  LiveFlags run_live_flags;
  add_live_flags(run, run_live_flags);

  std::string input, output, mode = "causal", method = "auto", format = "same";
  FilterFlags filter_flags;
  auto* filter = app.add_subcommand("filter", "Filter one audio file or stream");
  filter->add_option("INPUT", input, "Input audio file; - = standard input (a stream)")->required();
  filter->add_option("OUTPUT", output, "Output audio file (container from the extension); - = standard output (needs --type)")
      ->required();
  RawFlags raw_flags;
  add_raw_flags(filter, raw_flags);
  std::string sink_type;
  filter->add_option("--type,-t", sink_type, "Output container: wav | raw | au | flac | caf (required for -)")
      ->check(CLI::IsMember({"wav", "raw", "au", "flac", "caf"}));
  add_filter_flags(filter, filter_flags, true);
  filter->add_option("--mode", mode, "causal (like lfilter) | same (delay compensated) | full")
      ->check(CLI::IsMember({"causal", "same", "full"}))->capture_default_str();
  filter->add_option("--method", method, "auto | direct | fft")
      ->check(CLI::IsMember({"auto", "direct", "fft"}))->capture_default_str();
  LiveFlags filter_live_flags;
  add_live_flags(filter, filter_live_flags);
  std::string gain_text, resample_hz;
  auto* gain_opt = filter->add_option("--gain-db", gain_text, "Gain after the filter, in dB")->type_name("DB");
  auto* resample_opt = filter->add_option("--resample", resample_hz,
                                          "Resample to this rate after the filter (as scipy.signal.resample_poly)")
                           ->type_name("HZ");
  filter->add_option("--format", format, "same | pcm16 | pcm24 | pcm32 | float | double")
      ->check(CLI::IsMember({"same", "pcm16", "pcm24", "pcm32", "float", "double"}))->capture_default_str();
  double quality = 0.0;
  auto* quality_opt = filter->add_option("--quality", quality,
                                         "MP3/Vorbis/Opus output: 0 (smallest) .. 1 (best); default libsndfile's")
                          ->check(CLI::Range(0.0, 1.0))->type_name("Q");
  add_common(filter, common);
  add_plot_flag(filter, common);

  app::BatchFlags batch_flags;
  auto* batch = app::add_batch_command(app, batch_flags);
  add_set_option(batch, sets);
  add_common(batch, common);
  batch->get_option("--stats")->description(
      "Write the batch summary JSON here (default: OUT_DIR/batch_summary.json; "
      "OUT_DIR/batch_summary.I-of-N.json with --shard)");

  FilterFlags design_flags;
  double rate = 0.0;
  auto* design = app.add_subcommand("design", "Print FIR taps (one per line, %.17g), like scipy.signal.firwin");
  add_filter_flags(design, design_flags, false);
  design->add_option("--rate", rate, "Sample rate in Hz")->required();

  std::string info_path;
  auto* info = app.add_subcommand("info", "Show an audio file's rate, channels, frames, duration, format");
  info->add_option("FILE", info_path, "Audio file; - = standard input (read to its end)")->required();
  RawFlags info_raw;
  add_raw_flags(info, info_raw);
  std::string plot_stats, plot_out;
  auto* plot = app.add_subcommand("plot", "Draw a run's figure from its statistics JSON (needs matplotlib)");
  plot->add_option("STATS", plot_stats, "Statistics JSON of a run (stats.json / --stats)")->required();
  plot->add_option("-o,--output", plot_out, "Figure: .png, .svg or .pdf (default: STATS with .png)")
      ->type_name("FIG");
  auto* devices = app.add_subcommand("devices", "List CUDA devices");
  auto* schema = app.add_subcommand("schema", "Print every YAML key (type, default, meaning) as markdown "
                                              "(docs/yaml-reference.md)");

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
    std::cerr << "sigstream: error: " << (typo ? *typo : std::string(e.what()))
              << "\n(run 'sigstream --help' or 'sigstream COMMAND --help')\n";
    return 2;
  }

  try {
    if (*run) {
      if (run->count("--latency") > 0) sets.push_back("execution.latency_ms=" + format_double(run_live_flags.latency));
      if (run_live_flags.busy_poll) sets.push_back("execution.busy_poll=true");
      if (run_live_flags.redundant) sets.push_back("execution.redundant=true");
      return run_config(config_path, sets, common);
    }
    if (*filter) {
      Config c;
      c.origin = "filter";
      c.source.file = input;
      c.source.raw = raw_spec(filter, raw_flags);
      if (!sink_type.empty()) c.sink.type = parse_sink_type(sink_type);
      else if (output == "-")
        throw config_error("OUTPUT '-' is standard output and needs its container: --type wav|raw|au|flac|caf");
      if (filter->count("--latency") > 0) c.execution.latency_ms = filter_live_flags.latency;
      c.execution.busy_poll = filter_live_flags.busy_poll;
      c.execution.redundant = filter_live_flags.redundant;
      const bool has_filter = !(filter_flags.lowpass.empty() && filter_flags.highpass.empty() &&
                                filter_flags.bandpass.empty() && filter_flags.bandstop.empty() &&
                                filter_flags.taps_file.empty());
      if (!has_filter && resample_opt->count() == 0)
        throw config_error("filter: give a filter (--lowpass, --highpass, --bandpass, --bandstop or "
                           "--taps-file), --resample HZ, or both");
      StageSpec fir;
      fir.type = StageType::fir;
      fir.name = "fir0";
      if (!has_filter) {
        for (const char* flag : {"--taps", "--window", "--mode", "--method"})
          if (filter->count(flag) > 0)
            throw config_error(std::string(flag) + " shapes a filter, and none is given (expected --lowpass, "
                               "--highpass, --bandpass, --bandstop or --taps-file with it)");
      } else if (!filter_flags.taps_file.empty()) {
        // --taps and --window shape a designed filter; with a taps file they
        // would be ignored, so say so rather than run something else.
        for (const char* flag : {"--taps", "--window"})
          if (filter->count(flag) > 0)
            throw config_error(std::string(flag) + " applies to --lowpass/--highpass/--bandpass/"
                               "--bandstop designs, not to --taps-file (the file gives the taps)");
        fir.as<FirSpec>().taps_file = filter_flags.taps_file;
      } else {
        fir.as<FirSpec>().design = design_from(filter_flags);
      }
      fir.as<FirSpec>().mode = mode == "same" ? FirMode::same : mode == "full" ? FirMode::full : FirMode::causal;
      fir.as<FirSpec>().method = method == "direct" ? FirMethod::direct : method == "fft" ? FirMethod::fft : FirMethod::automatic;
      if (has_filter) c.stages.push_back(fir);
      if (resample_opt->count() > 0) {
        // After the filter: a filter's cutoffs are in the input's Hz.
        StageSpec r;
        r.type = StageType::resample;
        r.name = "resample" + std::to_string(c.stages.size());
        const double to = parse_hz(resample_hz, "--resample");
        if (to <= 0 || to != std::floor(to) || to > 2147483647.0)
          throw config_error("--resample: '" + resample_hz + "' is not a rate (expected a whole number of Hz > 0)");
        r.as<ResampleSpec>().to_hz = to;
        c.stages.push_back(r);
      }
      if (gain_opt->count() > 0) {
        StageSpec g;
        g.type = StageType::gain;
        g.name = "gain" + std::to_string(c.stages.size());
        const auto linear = gain_from_db(parse_number(gain_text, "--gain-db"));
        if (!linear)
          throw config_error("--gain-db: " + gain_text +
                             " is not a usable gain (expected a finite number of dB below 770)");
        g.as<GainSpec>().linear = *linear;
        c.stages.push_back(g);
      }
      c.sink.file = output;
      if (quality_opt->count() > 0) c.sink.quality = quality;
      c.sink.format = format == "pcm16" ? SampleFormat::pcm16 : format == "pcm24" ? SampleFormat::pcm24
                    : format == "pcm32" ? SampleFormat::pcm32 : format == "float" ? SampleFormat::float32
                    : format == "double" ? SampleFormat::float64 : SampleFormat::same;
      if (!common.stats.empty()) c.stats.json = common.stats;
      c.execution.backend = common.backend == "cpu" ? BackendKind::cpu : common.backend == "cuda" ? BackendKind::cuda
                                                                                       : BackendKind::automatic;
      if (!common.plot.empty()) check_figure_name(common.plot, "--plot");
      return finish(run_pipeline(c, run_options(common)), common, c.stats.json);
    }
    if (*batch)
      return app::run_batch_command(
          batch_flags, sets,
          {common.backend, common.verify, common.quiet, common.no_progress, common.stats});
    if (*design) return cmd_design(design_flags, rate);
    if (*info) return cmd_info(info_path, raw_spec(info, info_raw));
    if (*devices) return cmd_devices();
    if (*plot) {
      const std::string fig =
          plot_out.empty() ? std::filesystem::path(plot_stats).replace_extension(".png").string() : plot_out;
      check_figure_name(fig, "plot -o");
      if (!std::filesystem::exists(plot_stats)) throw io_error(plot_stats + ": no such file");
      return app::draw_figure(plot_stats, fig);
    }
    if (*schema) {
      std::cout << "# YAML reference\n\nEvery key of a sigstream config (SPEC §2), printed by `sigstream schema` "
                   "from the tables the config reader validates with.\n\n"
                << config_reference();
      return 0;
    }
    // No command: the built-in demo, with a word on what it shows.
    std::cerr << "sigstream demo: 10 s of 50 Hz + 7 kHz tones (stereo, 16 kHz) through a 255-tap\n"
                 "  1 kHz low-pass: the 7 kHz tone goes, so rms falls from 0.5 to 0.354 (0.5/sqrt 2).\n";
    const int rc = run_config("", {}, common);
    if (rc == 0) {
      std::cerr << "  details: out/demo_stats.json, out/demo_chunks.csv; the config: configs/demo.yaml\n"
                   "  (sigstream run configs/demo.yaml --set stages.1.design.cutoff_hz=3000)\n";
      // The before/after figure; without matplotlib the demo has still filtered.
      std::string python;
      if (app::draw_figure("out/demo_stats.json", "out/demo.png", &python) == 0)
        std::cerr << "  figure: out/demo.png (the signal before and after, spectra, the filter's response; "
                     "drawn with "
                  << python << ")\n";
      else
        std::cerr << "  no figure: once matplotlib is there, `sigstream plot out/demo_stats.json` draws out/demo.png\n";
    }
    return rc;
  } catch (const Error& e) {
    // A reader that closed our output pipe has all it wants: stop quietly.
    if (e.kind() == ErrorKind::output_closed) return exit_code(e.kind());
    std::cerr << "sigstream: error: " << e.what() << "\n";
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "sigstream: internal error: " << e.what() << "\n";
    return 1;
  }
}
