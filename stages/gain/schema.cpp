// The gain kind's YAML keys and their reader: exactly one of db / linear,
// stored as the linear factor.
#include <yaml-cpp/yaml.h>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/gain/gain.hpp"
#include "stages/gain/spec.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr Key kGainKeys[] = {
    Key("db", Type::number, "Gain in dB, 10^(db/20); exactly one of db / linear."),
    Key("linear", Type::number, "Linear gain factor; exactly one of db / linear."),
};

void read_gain(MapReader& r, const StageReadContext& where, StageSpec& out) {
  exactly_one_of(where.cx, r, {"db", "linear"});
  if (r.has("db")) {
    if (auto db = r.number("db")) {
      if (const auto g = gain_from_db(*db))
        out.as<GainSpec>().linear = *g;
      else
        r.error("db", r.value("db").Scalar() +
                          " dB is beyond float32 range (expected a gain below 770 dB)");
    }
  }
  if (r.has("linear")) {
    if (auto g = r.number("linear"))
      out.as<GainSpec>().linear = *g;
  }
}

} // namespace

const StageSchema& gain_schema() {
  static constexpr StageSchema kSchema{kGainKeys, {}, &read_gain};
  return kSchema;
}

} // namespace sigstream
