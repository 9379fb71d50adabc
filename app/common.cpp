// The flags, summary and flag-to-override plumbing that the subcommands share.
#include "app/common.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>

#include "app/plot.hpp"
#include "core/error.hpp"
#include "pipeline/io/stats_writer.hpp"

namespace sigstream::app {

void add_common(CLI::App* cmd, CommonFlags& f, BackendCheck check) {
  auto* backend = cmd->add_option("--backend", f.backend,
                                  "Where to compute: auto (CUDA if a device exists), cpu, cuda");
  // The help reads the same either way; where the schema checks the value,
  // CLI11 only names the choices.
  if (check == BackendCheck::cli)
    backend->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  else
    backend->type_name("TEXT:{auto,cpu,cuda}");
  cmd->add_flag("--verify", f.verify,
                "Check the output against a float64 CPU reference (exit 1 if off)");
  cmd->add_flag("--quiet,-q", f.quiet, "Print nothing but errors");
  cmd->add_flag("--no-progress", f.no_progress, "No progress bar");
  cmd->add_option("--stats", f.stats, "Write statistics JSON here")
      ->check(given_value("a file name"));
}

std::optional<std::string> empty_flag_value(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--")
      break;
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1)
      return std::string(a) + " has no value after '=' (an empty value: an unset shell " +
             "variable?)";
  }
  return std::nullopt;
}

CLI::Validator given_value(const std::string& what) {
  return CLI::Validator(
      [what](std::string& v) -> std::string {
        if (v.empty())
          return "expected " + what + ", got '' (an empty value: an unset shell variable?)";
        if (v.rfind("--", 0) == 0)
          return "expected " + what + ", got '" + v +
                 "', an option (was the value left empty? a name that starts with '--' is "
                 "given as ./" +
                 v + ")";
        return {};
      },
      "", "given_value");
}

void add_plot_flag(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--plot", f.plot,
                  "Also draw the run's figure (waveforms, spectra, filter responses, levels) "
                  "into FIG (.png, .svg, .pdf; needs matplotlib)")
      ->type_name("FIG")
      ->check(given_value("a figure's file name"));
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

void check_figure_name(const std::string& fig, const char* what) {
  const std::string ext = std::filesystem::path(fig).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw config_error(std::string(what) + ": '" + fig +
                       "' must end in .png, .svg or .pdf (the figure's format)");
}

void add_live_flags(CLI::App* cmd, LiveFlags& f) {
  // The range is execution.latency_ms's, checked by the schema; the type
  // name keeps the help as it was.
  cmd->add_option("--latency", f.latency,
                  "Live mode: bound on the added latency in ms (execution.latency_ms)")
      ->type_name("MS:FLOAT in [0.001 - 10000]");
  cmd->add_flag(
      "--busy-poll", f.busy_poll,
      "Live mode: wait for input and output by spinning, not sleeping; one core busy, a shorter "
      "tail on virtual machines (execution.busy_poll)");
  cmd->add_flag(
      "--redundant", f.redundant,
      "Live mode: compute every block on two spinning threads, the first to finish writes it; "
      "rides over one core's stall (execution.redundant)");
}

std::string format_double(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

namespace {

// Text that YAML reads back, plain, as the same scalar: letters, digits and
// . _ + - : only, not a document marker, no ':' at the end (a mapping), and
// not a word YAML reads as null.
bool plain_scalar(const std::string& text) {
  if (text.empty() || text == "-" || text.starts_with("---") || text.starts_with("...") ||
      text.back() == ':' || text.front() == ':')
    return false;
  std::string lower;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '_' && c != '+' && c != '-' && c != ':')
      return false;
    lower += static_cast<char>(std::tolower(u));
  }
  return lower != "null";
}

} // namespace

std::string yaml_value(const std::string& text) {
  return plain_scalar(text) ? text : yaml_string(text);
}

std::string yaml_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void FlagOverrides::add(std::string flag, std::string key_value) {
  texts_.push_back(key_value);
  flags_.emplace_back(std::move(key_value), std::move(flag));
}

void FlagOverrides::name(std::string key, std::string flag) {
  keys_.emplace_back(std::move(key), std::move(flag));
}

namespace {

// The flag behind `override_text`, if it is one of `flags`.
const std::string* flag_of(const std::vector<std::pair<std::string, std::string>>& flags,
                           std::string_view override_text) {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->first == override_text)
      return &it->second;
  return nullptr;
}

// One line of a config error, in the flag's words where it is about a flag's
// override. The reader (pipeline/config/yaml_reader.hpp) writes a problem in
// a value an override set as "ORIGIN: KEY.PATH: WHAT (from --set KEY=VALUE)",
// and a problem with the override itself as "ORIGIN: --set KEY=VALUE: WHAT".
std::string reword(const std::string& line, const std::string& origin,
                   const std::vector<std::pair<std::string, std::string>>& flags) {
  const std::string prefix = origin + ": ";
  if (!line.starts_with(prefix))
    return line;
  const std::string_view rest = std::string_view(line).substr(prefix.size());
  constexpr std::string_view kSet = "--set ";
  if (rest.starts_with(kSet)) {
    // The override's own text may hold ": " (a quoted value): try each split.
    for (std::size_t at = rest.find(": "); at != std::string_view::npos;
         at = rest.find(": ", at + 1))
      if (const std::string* flag = flag_of(flags, rest.substr(kSet.size(), at - kSet.size())))
        return *flag + ": " + std::string(rest.substr(at + 2));
    return line;
  }
  constexpr std::string_view kFrom = " (from --set ";
  const auto from = rest.rfind(kFrom);
  if (from == std::string_view::npos || !rest.ends_with(")"))
    return line;
  const std::string_view text =
      rest.substr(from + kFrom.size(), rest.size() - 1 - from - kFrom.size());
  const std::string* flag = flag_of(flags, text);
  if (flag == nullptr)
    return line;
  std::string_view what = rest.substr(0, from);
  // Drop the key path: the user typed a flag, not a key.
  const auto colon = what.find(": ");
  if (colon != std::string_view::npos &&
      std::all_of(what.begin(), what.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
      }))
    what = what.substr(colon + 2);
  // Where yaml_value() quoted the value, the quotes are ours, not the user's.
  std::string out(what);
  constexpr std::string_view kQuoted = "the quoted string '";
  constexpr std::string_view kUnquote = "; write it without quotes";
  if (const auto q = out.find(kQuoted); q != std::string::npos)
    out.erase(q, kQuoted.size() - 1);
  if (const auto u = out.find(kUnquote); u != std::string::npos)
    out.erase(u, kUnquote.size());
  return *flag + ": " + out;
}

} // namespace

void FlagOverrides::rethrow(const std::string& origin) const {
  try {
    throw;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::config)
      throw;
    std::istringstream in(e.what());
    std::string message;
    for (std::string line; std::getline(in, line);) {
      std::string text = reword(line, origin, flags_);
      if (text != line)
        for (const auto& [key, flag] : keys_)
          for (auto at = text.find(key); at != std::string::npos;
               at = text.find(key, at + flag.size()))
            text.replace(at, key.size(), flag);
      message += (message.empty() ? "" : "\n") + text;
    }
    throw config_error(message);
  }
}

RunOptions run_options(const CommonFlags& f) {
  RunOptions o;
  o.verify = f.verify;
  o.progress = !f.quiet && !f.no_progress;
  o.exiting = true;
  o.chunk_rows = !f.plot.empty(); // the figure's levels; statistics files keep them anyway
  if (!f.quiet)
    o.log = [](const std::string& m) { std::cerr << "sigstream: " << m << "\n"; };
  return o;
}

namespace {

void print_summary(const RunReport& r) {
  std::ostringstream o;
  char buf[256];
  for (const MetricsReport& m : r.metrics) {
    std::snprintf(buf, sizeof buf, "  %-16s", m.name.c_str());
    o << buf;
    for (std::size_t c = 0; c < m.totals.size(); ++c) {
      std::snprintf(buf, sizeof buf, "  ch%zu rms %.6g peak %.6g", c, m.totals[c].rms(),
                    m.totals[c].peak);
      o << buf;
    }
    o << "\n";
  }
  // The output's frames, channels and rate (a mix or a resampler changes them).
  const double fps = r.wall_s > 0 ? static_cast<double>(r.output_frames) / r.wall_s : 0.0;
  const double rate = r.output_sample_rate > 0 ? r.output_sample_rate : r.sample_rate;
  std::snprintf(buf, sizeof buf,
                "%lld frames x %d ch in %.3f s (%.1f Mframes/s, %.0fx real time) on %s",
                static_cast<long long>(r.output_frames),
                r.output_channels > 0 ? r.output_channels : r.channels, r.wall_s, fps * 1e-6,
                rate > 0 ? fps / rate : 0.0, r.backend.c_str());
  o << "sigstream: " << buf;
  if (!r.output_path.empty())
    o << "; wrote " << r.output_path << " (" << r.output_format << ")";
  if (r.clipped_samples > 0)
    o << "; " << r.clipped_samples << " samples clipped";
  o << "\n";
  std::cerr << o.str();
}

} // namespace

int finish(const RunReport& r, const CommonFlags& f, const std::optional<std::string>& stats_path) {
  if (!f.quiet)
    print_summary(r);
  if (r.verification.ran) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "rel L2 error %.3g, max abs error %.3g vs the float64 reference (tolerance %.0e)",
                  r.verification.rel_l2_error, r.verification.max_abs_error,
                  r.verification.tolerance);
    if (!r.verification.passed) {
      std::cerr << "sigstream: error: verification failed: " << buf << "\n";
      return 1;
    }
    if (!f.quiet)
      std::cerr << "sigstream: verify passed: " << buf << "\n";
  }
  // --plot: from the statistics file the run wrote, else from the report in memory.
  if (f.plot.empty())
    return 0;
  return stats_path ? draw_figure(*stats_path, f.plot)
                    : draw_figure_from_text(stats_json(r), f.plot);
}

void add_raw_flags(CLI::App* cmd, RawFlags& f) {
  cmd->add_option("--input-type", f.input_type,
                  "raw: the input is headerless PCM (needs --rate, --channels, --encoding)")
      ->check(CLI::IsMember({"raw"}));
  cmd->add_option("--rate", f.rate, "Raw input: sample rate in Hz")->type_name("HZ");
  cmd->add_option("--channels", f.channels, "Raw input: channels (interleaved)")->type_name("N");
  cmd->add_option("--encoding", f.encoding,
                  "Raw input: s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be")
      ->type_name("E");
}

void add_raw_overrides(CLI::App* cmd, const RawFlags& f, FlagOverrides& out) {
  const bool described =
      cmd->count("--rate") + cmd->count("--channels") + cmd->count("--encoding") > 0;
  if (f.input_type.empty()) {
    if (described)
      throw config_error(
          "--rate, --channels and --encoding describe a raw input: add --input-type raw");
    return;
  }
  std::string missing;
  for (const char* flag : {"--rate", "--channels", "--encoding"})
    if (cmd->count(flag) == 0)
      missing += std::string(missing.empty() ? "" : ", ") + flag;
  if (!missing.empty())
    throw config_error("--input-type raw: the stream has no header, so it needs " + missing +
                       " (e.g. --rate 48000 --channels 2 --encoding s16le)");
  out.add("--rate", "source.raw.sample_rate=" + yaml_value(f.rate));
  out.add("--channels", "source.raw.channels=" + yaml_value(f.channels));
  out.add("--encoding", "source.raw.encoding=" + yaml_value(f.encoding));
}

} // namespace sigstream::app
