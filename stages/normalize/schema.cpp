// The normalize kind's YAML keys and their reader: exactly one target (lufs,
// peak_db or rms_db), at or under full scale, and the true-peak cap of a
// loudness target.
#include <yaml-cpp/yaml.h>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/normalize/normalize.hpp"
#include "stages/normalize/spec.hpp"

namespace sigstream {

namespace {

using namespace config;

constexpr Key kNormalizeKeys[] = {
    Key("lufs", Type::number,
        "Integrated loudness to reach (EBU R128, LUFS, e.g. -23 broadcast, -16 podcasts); "
        "exactly one of lufs / peak_db / rms_db.")
        .at_least(-200),
    Key("peak_db", Type::number,
        "Sample peak to reach, dBFS (as sox --norm=DB); exactly one of lufs / peak_db / rms_db.")
        .at_least(-200),
    Key("rms_db", Type::number,
        "RMS over all channels to reach, dBFS, lowered where the sample peak would pass 0 dBFS; "
        "exactly one of lufs / peak_db / rms_db.")
        .at_least(-200),
    Key("true_peak_max_db", Type::number,
        "With lufs: the true peak (4x oversampled) the gain may not push past, dBTP.")
        .defaults("-1")
        .at_least(-200),
};

void read_normalize(MapReader& r, const StageReadContext& where, StageSpec& out) {
  NormalizeSpec& s = out.as<NormalizeSpec>();
  exactly_one_of(where.cx, r, {"lufs", "peak_db", "rms_db"});
  const struct {
    std::string_view key;
    NormalizeMode mode;
    const char* unit;
  } targets[] = {{"lufs", NormalizeMode::lufs, "LUFS"},
                 {"peak_db", NormalizeMode::peak, "dBFS"},
                 {"rms_db", NormalizeMode::rms, "dBFS"}};
  for (const auto& t : targets) {
    if (!r.has(t.key))
      continue;
    const auto v = r.number(t.key);
    if (!v)
      continue;
    if (*v > 0.0)
      r.error(t.key, format_number(*v) + " " + t.unit +
                         " is above full scale (expected a target at or under 0, e.g. " +
                         (t.mode == NormalizeMode::lufs ? "-23" : "-1") + ")");
    s.mode = t.mode;
    s.target_db = *v;
  }
  if (r.has("true_peak_max_db")) {
    if (!r.has("lufs"))
      r.error("true_peak_max_db", "caps the true peak of a lufs target (peak_db is its own cap; "
                                  "rms_db keeps the sample peak at or under 0 dBFS)");
    else if (auto v = r.number("true_peak_max_db"))
      s.true_peak_max_db = *v;
  }
}

} // namespace

const StageSchema& normalize_schema() {
  static constexpr StageSchema kSchema{kNormalizeKeys, {}, &read_normalize};
  return kSchema;
}

} // namespace sigstream
