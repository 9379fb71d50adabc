#include "pipeline/io/stats_writer.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <variant>

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
    // Each float as the double of its shortest decimal form, so the JSON
    // prints ~9 digits a sample rather than a float widened to 17.
    auto part = [](std::int64_t start, double rate, const std::vector<std::vector<float>>& planes) {
      json channels = json::array();
      for (const auto& plane : planes) {
        json a = json::array();
        for (const float v : plane) {
          char buf[32];
          const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
          double d = 0.0;
          std::from_chars(buf, end, d);
          a.push_back(d);
        }
        channels.push_back(std::move(a));
      }
      return json{{"start_frame", start}, {"sample_rate", rate}, {"channels", std::move(channels)}};
    };
    j["excerpt"] = {
        {"source", part(r.excerpt->source_start, r.excerpt->source_rate, r.excerpt->source)},
        {"output", part(r.excerpt->output_start, r.excerpt->output_rate, r.excerpt->output)}};
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

std::string stats_json(const RunReport& r) {
  return stats_json_value(r).dump(2) + "\n";
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
