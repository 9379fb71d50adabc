// The metrics kind's one key: `spectrum`, Welch's PSD of the signal it sees
// (SPEC §8). Without it the stage needs only the `type` and `name` that every
// stage has.
#include <yaml-cpp/yaml.h>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/metrics/metrics.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/schema_enums.hpp"
#include "stages/window_schema.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr Key kMetricsKeys[] = {
    Key("spectrum", Type::section,
        "Welch's power spectral density per channel, as scipy.signal.welch(detrend=False): "
        "{} for the defaults."),
    Key("loudness", Type::boolean,
        "EBU R128 / ITU-R BS.1770-4 loudness of the block (libebur128): integrated, range, true "
        "peak, max momentary and short-term. The CPU backend: files, streams, live mode.")
        .defaults("false"),
};

constexpr Key kSpectrumKeys[] = {
    Key("nfft", Type::integer, "Segment length in frames (the FFT size; any length).")
        .defaults("4096")
        .at_least(8)
        .at_most(1 << 20),
    Key("overlap", Type::number,
        "Overlap of neighbouring segments as a fraction of nfft, 0 <= o < 1.")
        .defaults("0.5")
        .at_least(0)
        .at_most(1),
    Key("window", Type::custom, "Window of each segment (periodic, as scipy.signal.get_window).")
        .one_of(&enum_names<WindowKind>)
        .defaults("hann"),
    Key("beta", Type::number, "Kaiser beta, with window: kaiser.").at_least(0),
};

void read_metrics(MapReader& r, const StageReadContext& where, StageSpec& out) {
  if (auto v = r.boolean("loudness"))
    out.as<MetricsSpec>().loudness = *v;
  if (!r.has("spectrum"))
    return;
  const YAML::Node v = r.value("spectrum");
  SpectrumSpec spec;
  MapReader s(where.cx, v, r.path("spectrum"), keys_of({kSpectrumKeys}));
  if (!s.ok())
    return;
  if (auto n = s.int32("nfft"))
    spec.nfft = *n;
  if (auto o = s.number("overlap")) {
    if (*o >= 1.0)
      s.error("overlap",
              "overlap 1 leaves no hop between segments (expected 0 <= overlap < 1, e.g. 0.5)");
    else
      spec.overlap = *o;
  }
  spec.window = read_window_setting(where.cx, s);
  out.as<MetricsSpec>().spectrum = spec;
}

constexpr Section kMetricsSections[] = {
    {"stages[].spectrum", "type: metrics", kSpectrumKeys},
};

} // namespace

const StageSchema& metrics_schema() {
  static constexpr StageSchema kSchema{kMetricsKeys, kMetricsSections, &read_metrics};
  return kSchema;
}

} // namespace sigstream
