#include "pipeline/io/stats_writer.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <variant>

#include "core/error.hpp"
#include "core/version.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace {

// `paired`: the block pairs with the input frame by frame (no rate change
// before it); else dot_input and correlation_input are null.
nlohmann::ordered_json channel_json(const ChannelMetrics& m, bool paired) {
  using json = nlohmann::ordered_json;
  return {{"energy", m.energy},
          {"rms", m.rms()},
          {"peak", m.peak},
          {"mean", m.mean()},
          {"dot_input", paired ? json(m.dot) : json(nullptr)},
          {"correlation_input", paired ? json(m.correlation()) : json(nullptr)},
          {"nonfinite", m.nonfinite}};
}

// A block's spectrum: its settings, then freq_hz and psd[channel][bin]
// (psd null when no segment fit: a signal shorter than nfft).
nlohmann::ordered_json spectrum_json(const SpectrumReport& s) {
  nlohmann::ordered_json o = {{"nfft", s.nfft},         {"overlap_frames", s.overlap_frames},
                              {"window", s.window},     {"sample_rate", s.sample_rate},
                              {"segments", s.segments}, {"freq_hz", s.freq_hz}};
  o["psd"] = s.segments > 0 ? nlohmann::ordered_json(s.psd) : nlohmann::ordered_json(nullptr);
  return o;
}

nlohmann::ordered_json channels_json(const std::vector<ChannelMetrics>& ms, bool paired) {
  auto a = nlohmann::ordered_json::array();
  for (const auto& m : ms)
    a.push_back(channel_json(m, paired));
  return a;
}

nlohmann::ordered_json rate_json(double rate) {
  // Rates are whole numbers in practice: write them as integers, like SPEC §4.
  using json = nlohmann::ordered_json;
  return rate == std::floor(rate) ? json(static_cast<std::int64_t>(rate)) : json(rate);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The excerpt's samples (SPEC §8) are most of a statistics file: 2 x 40 ms of
// every channel. Written by the JSON library they cost a double's shortest
// form (after a float's round trip through text) and a line each; written
// here, each is the float's shortest decimal form (the same digits), the
// channels' arrays on one line. The value holds these strings in their
// place; put_samples finds them under the top-level "excerpt" key, after
// every name and path a report holds and before any key a caller adds.
constexpr const char* kSourcePlaceholder = "\x01excerpt source";
constexpr const char* kOutputPlaceholder = "\x01excerpt output";

void put_samples(std::string& text, const char* placeholder,
                 const std::vector<std::vector<float>>& planes) {
  // As dump(2) writes the placeholder: quoted, the control character
  // escaped, under the top-level key (no name or path a report holds can
  // put text there).
  const std::string quoted = nlohmann::ordered_json(placeholder).dump();
  const std::size_t key = text.find("\n  \"excerpt\": {");
  const std::size_t at = key == std::string::npos ? key : text.find(quoted, key);
  if (at == std::string::npos)
    throw internal_error("statistics: the excerpt's place was not found in the text");
  std::size_t samples = 0;
  for (const auto& p : planes)
    samples += p.size();
  std::string a;
  a.reserve(17 * samples + 4 * planes.size() + 2); // "-1.17549435e-38, " at most
  a += "[";
  for (std::size_t c = 0; c < planes.size(); ++c) {
    a += c == 0 ? "[" : ", [";
    for (std::size_t i = 0; i < planes[c].size(); ++i) {
      if (i > 0)
        a += ", ";
      const float v = planes[c][i];
      if (!std::isfinite(v)) { // JSON has no NaN or Inf: null, as the library writes them
        a += "null";
        continue;
      }
      if (v == 0.0f && std::signbit(v)) { // "-0" would read back as the integer 0
        a += "-0.0";
        continue;
      }
      char buf[32];
      const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
      a.append(buf, end);
    }
    a += "]";
  }
  a += "]";
  text.replace(at, quoted.size(), a);
}

} // namespace

nlohmann::ordered_json stats_json_value(const RunReport& r) {
  using json = nlohmann::ordered_json;
  json j;
  j["schema"] = 1;
  j["sigstream_version"] = kVersion;
  j["input"] = {{"path", r.input_path},
                {"sample_rate", rate_json(r.sample_rate)},
                {"channels", r.channels},
                {"frames", r.input_frames},
                {"format", r.input_format}};
  j["output"] = {
      {"path", r.output_path.empty() ? json(nullptr) : json(r.output_path)},
      {"sample_rate", rate_json(r.output_sample_rate > 0 ? r.output_sample_rate : r.sample_rate)},
      {"channels", r.output_channels > 0 ? r.output_channels : r.channels},
      {"frames", r.output_frames},
      {"format", r.output_format},
      {"clipped_samples", r.clipped_samples}};
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["execution"] = {
      {"chunk_frames", r.chunk_frames}, {"streams", r.streams}, {"threads", r.threads}};
  j["stages"] = json::array();
  for (const auto& s : r.stages) {
    json st = {{"name", s.name}, {"type", to_string(s.type)}};
    if (const StageKind& kind = stage_kind(s.type); kind.stats != nullptr)
      for (auto& field : kind.stats(s))
        std::visit([&](const auto& v) { st[field.first] = v; }, field.second);
    if (s.response)
      st["response"] = {{"freq_hz", s.response->freq_hz},
                        {"magnitude_db", s.response->magnitude_db},
                        {"group_delay_ms", s.response->group_delay_ms}}; // NaN (no phase) -> null
    j["stages"].push_back(st);
  }
  json metrics = json::object();
  for (const auto& m : r.metrics) {
    json chunks = json::array();
    for (const auto& c : m.chunks)
      chunks.push_back({{"index", c.index},
                        {"start_frame", c.start},
                        {"frames", c.frames},
                        {"channels", channels_json(c.channels, m.paired)}});
    metrics[m.name] = {{"totals", {{"channels", channels_json(m.totals, m.paired)}}},
                       {"chunks", chunks}};
    if (m.spectrum)
      metrics[m.name]["spectrum"] = spectrum_json(*m.spectrum);
    if (m.loudness) {
      const auto value = [](const std::optional<double>& v) {
        return v ? json(*v) : json(nullptr);
      };
      const LoudnessReport& l = *m.loudness;
      metrics[m.name]["loudness"] = {{"integrated_lufs", value(l.integrated_lufs)},
                                     {"range_lu", value(l.range_lu)},
                                     {"true_peak_dbtp", value(l.true_peak_dbtp)},
                                     {"max_momentary_lufs", value(l.max_momentary_lufs)},
                                     {"max_short_term_lufs", value(l.max_short_term_lufs)}};
    }
  }
  j["metrics"] = metrics;
  json stage_ms = json::object();
  for (std::size_t i = 0; i < r.stages.size() && i < r.stage_ms.size(); ++i)
    stage_ms[r.stages[i].name] = r.stage_ms[i];
  const double fps = r.wall_s > 0 ? static_cast<double>(r.output_frames) / r.wall_s : 0.0;
  j["timing"] = {
      {"wall_s", r.wall_s}, {"setup_s", r.setup_s}, {"frames_per_s", fps}, {"stages_ms", stage_ms}};
  if (r.excerpt) {
    // The samples are written into the text by stats_text (a placeholder here).
    auto part = [](std::int64_t start, double rate, const char* placeholder) {
      return json{{"start_frame", start}, {"sample_rate", rate}, {"channels", placeholder}};
    };
    j["excerpt"] = {
        {"source", part(r.excerpt->source_start, r.excerpt->source_rate, kSourcePlaceholder)},
        {"output", part(r.excerpt->output_start, r.excerpt->output_rate, kOutputPlaceholder)}};
  }
  if (r.latency)
    j["latency_ms"] = {{"target", r.latency->target},
                       {"p50", r.latency->p50},
                       {"p99", r.latency->p99},
                       {"max", r.latency->max},
                       {"late_chunks", r.latency->late_chunks},
                       {"chunks", r.latency->chunks},
                       {"block_frames", r.latency->block_frames},
                       {"compute_p99", r.latency->compute_p99},
                       {"compute_max", r.latency->compute_max}};
  if (r.latency && !r.latency->lanes.empty()) {
    nlohmann::ordered_json lanes = nlohmann::ordered_json::array();
    for (const LatencyReport::Lane& l : r.latency->lanes)
      lanes.push_back({{"written", l.written}, {"late_covered", l.late_covered}});
    j["latency_ms"]["lanes"] = lanes;
  }
  if (r.verification.ran)
    j["verification"] = {{"reference", "cpu-float64"},
                         {"rel_l2_error", r.verification.rel_l2_error},
                         {"max_abs_error", r.verification.max_abs_error},
                         {"tolerance", r.verification.tolerance},
                         {"passed", r.verification.passed}};
  else
    j["verification"] = nullptr;
  return j;
}

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool is_utf8(const std::string& s) {
  try {
    static_cast<void>(nlohmann::ordered_json(s).dump());
    return true;
  } catch (const nlohmann::ordered_json::type_error&) {
    return false;
  }
}

std::string stats_text(const nlohmann::ordered_json& value, const RunReport& r) {
  std::string text = json_text(value);
  if (r.excerpt) {
    put_samples(text, kSourcePlaceholder, r.excerpt->source);
    put_samples(text, kOutputPlaceholder, r.excerpt->output);
  }
  return text + "\n";
}

std::string stats_json(const RunReport& r) {
  return stats_text(stats_json_value(r), r);
}

std::string stats_csv_header() {
  return "stage,chunk,start_frame,frames,channel,energy,rms,peak,mean,dot_input,correlation_input,"
         "nonfinite\n";
}

std::string stats_csv_rows(const std::string& stage, const ChunkMetricsRow& c, bool paired) {
  std::string o;
  char buf[512];
  for (std::size_t ch = 0; ch < c.channels.size(); ++ch) {
    const ChannelMetrics& x = c.channels[ch];
    char pair[96] = ",";
    if (paired)
      std::snprintf(pair, sizeof pair, "%.17g,%.17g", x.dot, x.correlation());
    std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,%zu,%.17g,%.17g,%.17g,%.17g,%s,%lld\n",
                  static_cast<long long>(c.index), static_cast<long long>(c.start),
                  static_cast<long long>(c.frames), ch, x.energy, x.rms(), x.peak, x.mean(), pair,
                  static_cast<long long>(x.nonfinite));
    o += csv_field(stage);
    o += ',';
    o += buf;
  }
  return o;
}

std::string stats_csv(const RunReport& r) {
  std::string o = stats_csv_header();
  for (const auto& m : r.metrics)
    for (const auto& c : m.chunks)
      o += stats_csv_rows(m.name, c, m.paired);
  return o;
}

} // namespace sigstream
