#include "pipeline/plan.hpp"

#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "stages/design.hpp"

namespace sigstream {

std::vector<double> read_taps_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io_error(path + ": cannot open taps file (" + std::strerror(errno) + ")");
  std::vector<double> taps;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r,;");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r,;");
    const std::string text = line.substr(first, last - first + 1);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || errno == ERANGE)
      throw config_error(path + ":" + std::to_string(line_no) + ": '" + text +
                         "' is not a number (expected one coefficient per line)");
    if (!std::isfinite(v))
      throw config_error(path + ":" + std::to_string(line_no) + ": coefficient '" + text +
                         "' is not finite");
    taps.push_back(v);
  }
  if (in.bad()) throw io_error(path + ": read error");
  if (taps.empty()) throw config_error(path + ": taps file holds no coefficients");
  return taps;
}

namespace {

// Where a stage's problem is: the config file, line and key path of the
// stage (a YAML run), or the input file (the `filter` command, whose one
// filter the user knows by its flags, not by an internal stage name).
std::string stage_where(const Config& config, const StageSpec& s, std::size_t index) {
  if (config.origin == "filter")
    return "filter for " + config.source.file.value_or("the input") +
           (s.fir.taps_file ? " (--taps-file " + *s.fir.taps_file + ")" : std::string());
  std::string where = config.origin.empty() ? std::string() : config.origin + ":";
  if (s.line > 0 && !config.origin.empty()) where += std::to_string(s.line) + ": ";
  else if (!where.empty()) where += " ";
  where += "stages." + std::to_string(index) + (s.fir.design ? ".design" : "") + " (stage '" +
           s.name + "')";
  if (s.fir.design && config.source.file) where += ", source " + *config.source.file;
  return where;
}

std::vector<double> resolve_taps(const StageSpec& s, double sample_rate, const std::string& where) {
  if (s.fir.design) {
    try {
      return design_fir(*s.fir.design, sample_rate);
    } catch (const Error& e) {
      throw Error(e.kind(), where + ": " + e.what());
    }
  }
  if (s.fir.taps_file) return read_taps_file(*s.fir.taps_file);
  if (s.fir.taps.empty()) throw config_error(where + ": no taps");
  for (double t : s.fir.taps)
    if (!std::isfinite(t)) throw config_error(where + ": taps must be finite");
  return s.fir.taps;
}

std::string describe_design(const DesignSpec& d) {
  std::ostringstream o;
  o << to_string(d.kind) << ' ';
  for (std::size_t i = 0; i < d.cutoff_hz.size(); ++i) o << (i ? ":" : "") << d.cutoff_hz[i];
  o << " Hz, " << d.taps << " taps, " << to_string(d.window);
  return o.str();
}

}  // namespace

Plan make_plan(const Config& config, const SourceInfo& source, int output_bits) {
  Plan plan;
  plan.sample_rate = source.sample_rate;
  plan.channels = source.channels;
  plan.length_known = source.frames != kUnknownFrames;
  plan.source_frames = plan.length_known ? source.frames : kOpenEnd;
  plan.input_type = source.sample_type;
  plan.output_bits = output_bits;
  plan.output_type = output_bits == 0 ? SampleType::f32
                     : output_bits <= 16 ? SampleType::i16
                                         : SampleType::i32;

  std::int64_t frames = plan.source_frames;
  for (std::size_t index = 0; index < config.stages.size(); ++index) {
    const StageSpec& s = config.stages[index];
    PlannedStage p;
    p.type = s.type;
    p.name = s.name;
    p.frames_in = frames;
    switch (s.type) {
      case StageType::fir: {
        p.taps = resolve_taps(s, source.sample_rate, stage_where(config, s, index));
        p.taps_f32.assign(p.taps.begin(), p.taps.end());
        if (s.fir.design) p.design_note = describe_design(*s.fir.design);
        else if (s.fir.taps_file) p.design_note = "taps file " + *s.fir.taps_file;
        else p.design_note = "inline taps";
        p.mode = s.fir.mode;
        p.requested = s.fir.method;
        p.method = FirMethod::direct;  // until resolve_methods() says otherwise
        const auto k = static_cast<std::int64_t>(p.taps.size());
        const std::int64_t centre = (k - 1) / 2;
        p.lookback = p.mode == FirMode::same ? k - 1 - centre : k - 1;
        p.lookahead = p.mode == FirMode::same ? centre : 0;
        p.frames_out = p.mode == FirMode::full ? frames + k - 1 : frames;
        break;
      }
      case StageType::gain:
        p.gain = s.gain_linear;
        p.frames_out = frames;
        break;
      case StageType::metrics:
        p.metrics_slot = static_cast<int>(plan.metric_names.size());
        plan.metric_names.push_back(s.name);
        p.frames_out = frames;
        break;
    }
    frames = p.frames_out;
    p.grow_in = p.frames_in - plan.source_frames;
    p.grow_out = p.frames_out - plan.source_frames;
    plan.stages.push_back(std::move(p));
  }
  plan.metric_names.emplace_back("output");
  plan.output_frames = frames;
  plan.output_grow = frames - plan.source_frames;

  // Halos: a stage's input buffer must cover what every later stage still needs.
  std::int64_t back = 0;
  std::int64_t ahead = 0;
  for (auto it = plan.stages.rbegin(); it != plan.stages.rend(); ++it) {
    back += it->lookback;
    ahead += it->lookahead;
    it->in_back = back;
    it->in_ahead = ahead;
  }
  plan.back = back;
  plan.ahead = ahead;
  plan.chunk_frames = config.execution.chunk_frames;
  plan.num_chunks = (plan.output_frames + plan.chunk_frames - 1) / plan.chunk_frames;
  return plan;
}

}  // namespace sigstream
