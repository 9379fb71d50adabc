// The resample kind's YAML keys (SPEC §7) and their reader: to_hz, or up
// and down; the window and half_taps_per_phase of the anti-alias filter.
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/resample/resample.hpp"
#include "stages/resample/spec.hpp"
#include "stages/schema_enums.hpp"
#include "stages/window_schema.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr Key kResampleKeys[] = {
    Key("to_hz", Type::number,
        "Output rate in Hz (a whole number); exactly one of to_hz / up and down.")
        .above(0)
        .at_most(kMaxInt),
    Key("up", Type::integer, "Up-sampling factor, with down (the ratio is reduced by the gcd).")
        .at_least(1)
        .at_most(kMaxInt),
    Key("down", Type::integer, "Down-sampling factor, with up.").at_least(1).at_most(kMaxInt),
    Key("window", Type::custom, "Window of the anti-alias filter, as resample_poly's.")
        .one_of(&enum_names<WindowKind>)
        .defaults("kaiser:5.0"),
    Key("beta", Type::number, "Kaiser beta, with window: kaiser.").at_least(0),
    Key("half_taps_per_phase", Type::integer,
        "Filter half-length per phase: K = 2 * this * max(up, down) + 1 taps (at most 64: longer "
        "sums "
        "in float32 leave SPEC §3's 1e-5).")
        .defaults("10")
        .at_least(1)
        .at_most(kMaxHalfTapsPerPhase),
};

void read_resample(MapReader& r, const StageReadContext& where, StageSpec& out) {
  ResampleSpec& spec = out.as<ResampleSpec>();
  const bool up_down = r.has("up") || r.has("down");
  if (r.has("to_hz") && up_down) {
    r.error(r.has("up") ? "up" : "down",
            "to_hz and up/down are both given (expected exactly one of to_hz / up and down)");
  } else if (!r.has("to_hz") && !up_down) {
    where.cx.error(
        r.node(), r.path(),
        "neither to_hz nor up and down is given (expected exactly one of to_hz / up and down)");
  } else if (up_down && !(r.has("up") && r.has("down"))) {
    const char* given = r.has("up") ? "up" : "down";
    r.error(given, std::string(given) + " needs " + (r.has("up") ? "down" : "up") +
                       " next to it (expected both, e.g. up: 160 and down: 147)");
  }
  if (auto v = r.number("to_hz")) {
    if (*v != std::floor(*v))
      r.error("to_hz", r.value("to_hz").Scalar() + " Hz is not a whole number of Hz (expected an "
                                                   "integer rate, as audio files store it)");
    else
      spec.to_hz = *v;
  }
  if (auto v = r.integer("up"))
    spec.up = *v;
  if (auto v = r.integer("down"))
    spec.down = *v;
  spec.window = read_window_setting(where.cx, r);
  if (auto v = r.int32("half_taps_per_phase"))
    spec.half_taps_per_phase = *v;
}

// The rate the next stages see, where the config already knows it.
std::optional<double> rate_after(const StageSpec& s, std::optional<double> rate) {
  if (s.as<ResampleSpec>().to_hz)
    return s.as<ResampleSpec>().to_hz;
  if (rate && s.as<ResampleSpec>().up > 0 && s.as<ResampleSpec>().down > 0)
    return *rate * static_cast<double>(s.as<ResampleSpec>().up) /
           static_cast<double>(s.as<ResampleSpec>().down);
  return std::nullopt;
}

} // namespace

const StageSchema& resample_schema() {
  static constexpr StageSchema kSchema{kResampleKeys, {}, &read_resample, &rate_after};
  return kSchema;
}

} // namespace sigstream
