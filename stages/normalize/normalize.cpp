#include "stages/normalize/normalize.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "core/error.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"
#include "stages/gain/gain.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/normalize/spec.hpp"

namespace sigstream {

namespace {

const char* mode_name(NormalizeMode m) {
  switch (m) {
    case NormalizeMode::lufs:
      return "lufs";
    case NormalizeMode::peak:
      return "peak";
    case NormalizeMode::rms:
      return "rms";
  }
  return "?";
}

const char* unit(NormalizeMode m) {
  return m == NormalizeMode::lufs ? "LUFS" : "dBFS";
}

// The highest sample peak that a 16-bit sink writes unclipped, 32767/32768
// (-0.00027 dBFS): a sample-peak cap of 0 dBFS means it, as sox --norm's.
const double kFullScaleDb = 20.0 * std::log10(32767.0 / 32768.0);

// The cap on the peak after the gain (see NormalizeSpec).
double cap_of(const NormalizeSpec& s) {
  switch (s.mode) {
    case NormalizeMode::lufs:
      return s.true_peak_max_db.value_or(-1.0);
    case NormalizeMode::peak:
      return std::min(s.target_db, kFullScaleDb);
    case NormalizeMode::rms:
      return kFullScaleDb;
  }
  return 0.0;
}

std::string db(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

double to_db(double amplitude) {
  return 20.0 * std::log10(amplitude);
}

} // namespace

void plan_normalize(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) {
  const NormalizeSpec& s = spec.as<NormalizeSpec>();
  NormalizePlan& p = out.as<NormalizePlan>();
  p.mode = s.mode;
  p.target_db = s.target_db;
  p.cap_db = cap_of(s);
  // Unmeasured (a plan made for an estimate, not for a run): unity.
  p.result = s.result.value_or(NormalizeResult{});
  p.linear = std::pow(10.0, p.result.gain_db / 20.0);
  out.frames_out = where.frames_in;
}

std::unique_ptr<const CpuStageStep> make_normalize_cpu_step(const PlannedStage& stage) {
  return make_gain_cpu_step(stage.as<NormalizePlan>().linear);
}

StatFields normalize_stats(const StageReport& stage) {
  const NormalizePlan& p = stage.as<NormalizePlan>();
  StatFields f = {{"mode", std::string(mode_name(p.mode))}, {"target_db", p.target_db}};
  if (p.result.measured_db)
    f.emplace_back("measured_db", *p.result.measured_db);
  if (p.result.peak_db)
    f.emplace_back(p.mode == NormalizeMode::lufs ? "true_peak_dbtp" : "peak_dbfs",
                   *p.result.peak_db);
  f.emplace_back("gain_db", p.result.gain_db);
  f.emplace_back("linear", p.linear);
  f.emplace_back("limited_by_peak", std::int64_t{p.result.limited ? 1 : 0});
  return f;
}

void normalize_facts(const StageSpec& spec, std::ostream& o) {
  const NormalizeSpec& s = spec.as<NormalizeSpec>();
  o << ':' << mode_name(s.mode) << ':' << s.target_db << ':' << cap_of(s);
}

std::optional<StageSpec> normalize_first_pass(const StageSpec& spec) {
  const NormalizeSpec& s = spec.as<NormalizeSpec>();
  if (s.result)
    return std::nullopt;
  StageSpec m;
  m.type = kMetricsType;
  m.name = spec.name + ".first_pass";
  m.line = spec.line;
  m.flag = spec.flag;
  MetricsSpec ms;
  ms.loudness = s.mode == NormalizeMode::lufs;
  m.params = KindData(ms);
  return m;
}

void normalize_measured(StageSpec& spec, const MetricsReport& block,
                        const std::function<void(const std::string&)>& log) {
  NormalizeSpec& s = spec.as<NormalizeSpec>();
  NormalizeResult r;
  double peak_amplitude = 0.0, energy = 0.0, samples = 0.0;
  for (const ChannelMetrics& c : block.totals) {
    peak_amplitude = std::max(peak_amplitude, c.peak);
    energy += c.energy;
    samples += static_cast<double>(c.frames);
  }
  if (s.mode == NormalizeMode::lufs) {
    if (block.loudness) {
      r.measured_db = block.loudness->integrated_lufs;
      r.peak_db = block.loudness->true_peak_dbtp;
    }
  } else {
    if (peak_amplitude > 0.0)
      r.peak_db = to_db(peak_amplitude);
    if (s.mode == NormalizeMode::peak)
      r.measured_db = r.peak_db;
    else if (energy > 0.0 && samples > 0.0)
      r.measured_db = 10.0 * std::log10(energy / samples);
  }
  const std::string who = "normalize '" + spec.name + "'";
  if (!r.measured_db) {
    if (log)
      log(who + ": warning: " +
          (s.mode == NormalizeMode::lufs ? std::string("no 400 ms block above the gates (silence)")
                                         : std::string("the signal is silent")) +
          ": gain 0 dB, the signal is left as it is");
  } else {
    const double cap = cap_of(s);
    r.gain_db = (s.mode == NormalizeMode::peak ? cap : s.target_db) - *r.measured_db;
    if (r.peak_db && *r.peak_db + r.gain_db > cap + 1e-9 && s.mode != NormalizeMode::peak) {
      const double wanted = r.gain_db;
      r.gain_db = cap - *r.peak_db;
      r.limited = true;
      if (log)
        log(who + ": gain lowered from " + db(wanted) + " to " + db(r.gain_db) +
            " dB so that the " +
            (s.mode == NormalizeMode::lufs ? "true peak stays at " + db(cap) + " dBTP"
                                           : "peak stays at " + db(cap) + " dBFS") +
            " (reaches " + db(*r.measured_db + r.gain_db) + " " + unit(s.mode) + ")");
    } else if (log) {
      log(who + ": measured " + db(*r.measured_db) + " " + unit(s.mode) + ": gain " +
          (r.gain_db >= 0 ? "+" : "") + db(r.gain_db) + " dB");
    }
  }
  s.result = r;
}

} // namespace sigstream
