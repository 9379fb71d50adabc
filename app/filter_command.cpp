// `sigstream filter`: its flags are written as a config (stages mix, fir,
// resample, gain as given) plus one override a flag, and read by
// parse_config, so that the schema is the one rule for every value and its
// messages come back in the flags' words (FlagOverrides). What the command
// still checks itself is what no YAML key says: which flags go together.
#include "app/filter_command.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "pipeline/visible_devices.hpp"
#include "stages/fir/spec.hpp"
#include "stages/iir/spec.hpp"

namespace sigstream::app {

CLI::App* add_filter_command(CLI::App& app, FilterCommandFlags& f, CommonFlags& common) {
  auto* filter = app.add_subcommand("filter", "Filter one audio file or stream");
  filter->add_option("INPUT", f.input, "Input audio file; - = standard input (a stream)")
      ->required();
  filter
      ->add_option(
          "OUTPUT", f.output,
          "Output audio file (container from the extension); - = standard output (needs --type)")
      ->required();
  add_raw_flags(filter, f.raw);
  // The choices and ranges in the type names are the schema's, which checks them.
  filter
      ->add_option("--type,-t", f.sink_type,
                   "Output container: wav | raw | au | flac | caf (required for -)")
      ->type_name("TEXT:{wav,raw,au,flac,caf}");
  add_filter_flags(filter, f.filter, true);
  filter
      ->add_option(
          "--mix", f.mix,
          "Mix the channels first: mono | 5.1-stereo | select:1,0 | a matrix \"0.5,0.5;1,0\" "
          "(rows = output channels, separated by ';', gains by ',')")
      ->type_name("MIX");
  filter->add_option("--mode", f.mode, "causal (like lfilter) | same (delay compensated) | full")
      ->type_name("TEXT:{causal,same,full}")
      ->capture_default_str();
  filter->add_option("--method", f.method, "auto | direct | fft")
      ->type_name("TEXT:{auto,direct,fft}")
      ->capture_default_str();
  filter->add_flag("--zero-phase", f.zero_phase,
                   "With --iir: filter forward and backward (scipy.signal.sosfiltfilt: no phase "
                   "shift, the magnitude squared; files only)");
  add_live_flags(filter, f.live);
  filter->add_option("--gain-db", f.gain_db, "Gain after the filter, in dB")->type_name("DB");
  filter
      ->add_option(
          "--normalize", f.normalize,
          "Last, one gain for the whole file from a first pass: lufs:-23 (EBU R128 "
          "integrated loudness), peak:-1 (sample peak, dBFS) or rms:-20 (dBFS); files only")
      ->type_name("MODE:DB");
  filter
      ->add_option("--true-peak-max", f.true_peak_max,
                   "With --normalize lufs:...: the true peak the gain may not push past (default "
                   "-1 dBTP)")
      ->type_name("DB");
  filter
      ->add_option("--resample", f.resample,
                   "Resample to this rate after the filter (as scipy.signal.resample_poly)")
      ->type_name("HZ");
  filter->add_option("--format", f.format, "same | pcm16 | pcm24 | pcm32 | float | double")
      ->type_name("TEXT:{same,pcm16,pcm24,pcm32,float,double}")
      ->capture_default_str();
  filter
      ->add_option("--quality", f.quality,
                   "MP3/Vorbis/Opus output: 0 (smallest) .. 1 (best); default libsndfile's")
      ->type_name("Q:FLOAT in [0 - 1]");
  add_common(filter, common, BackendCheck::schema);
  add_plot_flag(filter, common);
  f.command = filter;
  return filter;
}

namespace {

// The fir stage's overrides (stages.<index>). A designed filter's cutoffs come in
// the flag's own syntax (HZ, LO:HI), so they are read here; their values are
// the schema's to check, but for one case: a cutoff at or below 0 Hz. The
// schema rejects it without knowing the input's rate, while this command has
// always said which Nyquist frequency the cutoff must stay under (and the
// input's rate is known only once it is open). So such a design is given to
// the schema with stand-in cutoffs, and its own are put back after it, for
// the plan to reject with the input's rate. Returns those cutoffs (empty
// when the schema had the real ones).
std::vector<double> add_fir_overrides(const FilterCommandFlags& f, std::size_t index,
                                      FlagOverrides& o) {
  CLI::App* cmd = f.command;
  const std::string at = "stages." + std::to_string(index) + ".";
  std::vector<double> deferred;
  if (!f.filter.taps_file.empty()) {
    // --taps and --window shape a designed filter; with a taps file they
    // would be ignored, so say so rather than run something else.
    for (const char* flag : {"--taps", "--window"})
      if (cmd->count(flag) > 0)
        throw config_error(std::string(flag) +
                           " applies to --lowpass/--highpass/--bandpass/"
                           "--bandstop designs, not to --taps-file (the file gives the taps)");
    o.add("--taps-file", at + "taps_file=" + yaml_string(f.filter.taps_file));
  } else {
    const DesignFlag d = design_flag(f.filter);
    const bool iir = cmd->count("--iir") > 0;
    const bool band = d.kind == std::string("bandpass") || d.kind == std::string("bandstop");
    const std::vector<double> cutoffs =
        band ? parse_band(*d.text, d.flag) : std::vector<double>{parse_hz(*d.text, d.flag)};
    const bool above_zero =
        std::all_of(cutoffs.begin(), cutoffs.end(), [](double v) { return v > 0; });
    if (!above_zero)
      deferred = cutoffs;
    const auto value = [&](std::size_t i) {
      return above_zero ? format_double(cutoffs[i]) : std::to_string(i + 1);
    };
    o.add(d.flag, std::string(at + "design.kind=") + d.kind);
    o.add(d.flag,
          at + "design.cutoff_hz=" + (band ? "[" + value(0) + ", " + value(1) + "]" : value(0)));
    if (iir) {
      for (const char* flag : {"--taps", "--window", "--mode", "--method"})
        if (cmd->count(flag) > 0)
          throw config_error(std::string(flag) + " shapes a FIR; --iir " +
                             std::to_string(f.filter.iir) + " designs an IIR instead");
      o.add("--iir", at + "design.order=" + std::to_string(f.filter.iir));
      if (f.zero_phase)
        o.add("--zero-phase", at + "zero_phase=true");
      return deferred;
    }
    if (cmd->count("--taps") > 0)
      o.add("--taps", at + "design.taps=" + std::to_string(f.filter.taps));
    if (cmd->count("--window") > 0)
      o.add("--window", at + "design.window=" + yaml_value(f.filter.window));
  }
  if (cmd->count("--mode") > 0)
    o.add("--mode", at + "mode=" + yaml_value(f.mode));
  if (cmd->count("--method") > 0)
    o.add("--method", at + "method=" + yaml_value(f.method));
  return deferred;
}

// --normalize MODE:DB as the normalize stage's keys (stages.<index>): lufs,
// peak (peak_db) or rms (rms_db); --true-peak-max as true_peak_max_db.
void add_normalize_overrides(const FilterCommandFlags& f, std::size_t index, FlagOverrides& o) {
  const std::string at = "stages." + std::to_string(index) + ".";
  const std::string& text = f.normalize;
  const auto colon = text.find(':');
  const std::string mode = text.substr(0, colon);
  const char* key = mode == "lufs"   ? "lufs"
                    : mode == "peak" ? "peak_db"
                    : mode == "rms"  ? "rms_db"
                                     : nullptr;
  if (colon == std::string::npos || key == nullptr || colon + 1 == text.size())
    throw config_error("--normalize '" + text +
                       "': expected lufs:TARGET, peak:DB or rms:DB (e.g. lufs:-23, peak:-1, "
                       "rms:-20)");
  o.add("--normalize", at + key + "=" + yaml_value(text.substr(colon + 1)));
  if (f.command->count("--true-peak-max") > 0)
    o.add("--true-peak-max", at + "true_peak_max_db=" + yaml_value(f.true_peak_max));
}

// --mix's text as the mix stage's key (stages.<index>): mono | 5.1-stereo
// (a preset), select:1,0 (a select list), or a matrix "0.5,0.5;1,0" (rows
// separated by ';', gains by ','). Only the syntax is read here: the schema
// checks the values (a preset's name, a gain, an index, an empty row) and
// the plan the counts, as for a config's mix.
void add_mix_override(const std::string& text, std::size_t index, FlagOverrides& o) {
  const std::string at = "stages." + std::to_string(index) + ".";
  // "a,b" -> [a, b]: each item as a YAML value, quoted where it is not a plain scalar.
  const auto list = [](const std::string& items) {
    std::string out = "[";
    std::size_t from = 0;
    for (;;) {
      const std::size_t comma = items.find(',', from);
      std::string item = items.substr(from, comma - from);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty())
        out += (out.size() > 1 ? ", " : "") + yaml_value(item);
      if (comma == std::string::npos)
        break;
      from = comma + 1;
    }
    return out + "]";
  };
  constexpr std::string_view kSelect = "select:";
  if (text.rfind(kSelect, 0) == 0) {
    o.add("--mix", at + "select=" + list(text.substr(kSelect.size())));
    return;
  }
  // A preset is a name ("5.1-stereo" has digits too); a matrix has
  // separators, or is numbers where the only letters are exponents (1e-3).
  const bool letters = std::any_of(text.begin(), text.end(), [](char ch) {
    return std::isalpha(static_cast<unsigned char>(ch)) != 0 && ch != 'e' && ch != 'E';
  });
  if (text.empty() || (letters && text.find_first_of(",;") == std::string::npos)) {
    o.add("--mix", at + "preset=" + yaml_value(text));
    return;
  }
  std::string rows = "[";
  std::size_t from = 0;
  for (;;) {
    const std::size_t semi = text.find(';', from);
    rows += (rows.size() > 1 ? ", " : "") + list(text.substr(from, semi - from));
    if (semi == std::string::npos)
      break;
    from = semi + 1;
  }
  o.add("--mix", at + "matrix=" + rows + "]");
}

} // namespace

int run_filter_command(const FilterCommandFlags& f, const CommonFlags& common) {
  CLI::App* cmd = f.command;
  FlagOverrides o;
  o.name("sink.type", "--type");
  o.add("INPUT", "source.file=" + yaml_string(f.input));
  add_raw_overrides(cmd, f.raw, o);
  o.add("OUTPUT", "sink.file=" + yaml_string(f.output));
  if (cmd->count("--type") > 0)
    o.add("--type", "sink.type=" + yaml_value(f.sink_type));

  const bool has_filter = has_design(f.filter) || !f.filter.taps_file.empty();
  const bool has_resample = cmd->count("--resample") > 0;
  const bool has_mix = cmd->count("--mix") > 0;
  const bool has_normalize = cmd->count("--normalize") > 0;
  if (!has_filter && !has_resample && !has_mix && !has_normalize)
    throw config_error(
        "filter: give a filter (--lowpass, --highpass, --bandpass, --bandstop or "
        "--taps-file), --resample HZ, --mix or --normalize, or any of them together");
  // The stages in their order: the mix, the filter, then the resampler (a
  // filter's cutoffs are in the input's Hz), then the gain.
  std::string stages;
  std::size_t next = 0;
  if (has_mix) {
    stages += "{type: mix}, ";
    add_mix_override(f.mix, next++, o);
  }
  std::vector<double> deferred_cutoffs;
  const std::size_t fir_index = next;
  const bool iir = cmd->count("--iir") > 0;
  if (f.zero_phase && !iir)
    throw config_error("--zero-phase applies to an --iir design (forward and backward, as "
                       "scipy.signal.sosfiltfilt)");
  if (iir && (!has_design(f.filter) || !f.filter.taps_file.empty()))
    throw config_error("--iir designs a filter from --lowpass, --highpass, --bandpass or "
                       "--bandstop (a taps file is a FIR's)");
  if (has_filter) {
    stages += iir ? "{type: iir}, " : "{type: fir}, ";
    deferred_cutoffs = add_fir_overrides(f, next++, o);
  } else {
    for (const char* flag : {"--taps", "--window", "--mode", "--method"})
      if (cmd->count(flag) > 0)
        throw config_error(std::string(flag) +
                           " shapes a filter, and none is given (expected --lowpass, "
                           "--highpass, --bandpass, --bandstop or --taps-file with it)");
  }
  if (has_resample) {
    stages += "{type: resample}, ";
    o.add("--resample", "stages." + std::to_string(next++) + ".to_hz=" + yaml_value(f.resample));
  }
  if (cmd->count("--gain-db") > 0) {
    stages += "{type: gain}, ";
    o.add("--gain-db", "stages." + std::to_string(next++) + ".db=" + yaml_value(f.gain_db));
  }
  if (cmd->count("--normalize") > 0) {
    stages += "{type: normalize}, ";
    add_normalize_overrides(f, next++, o);
  } else if (cmd->count("--true-peak-max") > 0) {
    throw config_error("--true-peak-max caps the gain of --normalize lufs:TARGET (none is given)");
  }
  stages.resize(stages.size() - 2);

  if (cmd->count("--quality") > 0)
    o.add("--quality", "sink.quality=" + yaml_value(f.quality));
  if (cmd->count("--format") > 0)
    o.add("--format", "sink.format=" + yaml_value(f.format));
  if (!common.stats.empty())
    o.add("--stats", "stats.json=" + yaml_string(common.stats));
  if (!common.backend.empty())
    o.add("--backend", "execution.backend=" + yaml_value(common.backend));
  if (cmd->count("--latency") > 0)
    o.add("--latency", "execution.latency_ms=" + yaml_value(f.live.latency));
  if (f.live.busy_poll)
    o.add("--busy-poll", "execution.busy_poll=true");
  if (f.live.redundant)
    o.add("--redundant", "execution.redundant=true");

  Config c;
  try {
    c = parse_config("version: 1\nstages: [" + stages + "]\n", "filter", o.overrides());
  } catch (...) {
    o.rethrow("filter");
  }
  if (!deferred_cutoffs.empty()) {
    if (iir)
      c.stages[fir_index].as<IirSpec>().design->cutoff_hz = deferred_cutoffs;
    else
      c.stages[fir_index].as<FirSpec>().design->cutoff_hz = deferred_cutoffs;
  }
  // Plan errors name the flag that made the stage.
  if (has_mix)
    c.stages.front().flag = "--mix";
  if (!f.filter.taps_file.empty())
    c.stages[fir_index].flag = "--taps-file " + f.filter.taps_file;
  if (!common.plot.empty())
    check_figure_name(common.plot, "--plot");
  see_only_devices_used(c, false); // one GPU: the driver starts faster seeing only it
  return finish(run_pipeline(c, run_options(common)), common, c.stats.json);
}

} // namespace sigstream::app
