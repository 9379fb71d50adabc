// The filter kind and cutoff readers (cutoff_schema.hpp).
#include "stages/cutoff_schema.hpp"

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>

#include "core/error.hpp"
#include "pipeline/config/schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/design.hpp"
#include "stages/schema_enums.hpp"

namespace sigstream::config {

namespace {
constexpr Key kCutoffValue = Key("cutoff_hz", Type::number);
} // namespace

FilterKind parse_kind(Context& cx, const MapReader& r, bool& valid) {
  valid = false;
  const YAML::Node v = r.value("kind");
  const Key& k = r.decl("kind");
  if (v.IsScalar()) {
    try {
      const FilterKind kind = parse_filter_kind(v.Scalar());
      valid = true;
      return kind;
    } catch (const Error&) {
      // Reported below with position and suggestion.
    }
  }
  bad_choice(cx, v, r.path("kind"), k, enum_names<FilterKind>());
  return FilterKind::lowpass;
}

std::vector<double> parse_cutoff(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                                 std::optional<FilterKind> kind, std::optional<double> rate,
                                 bool rate_changed) {
  const bool band = kind && (*kind == FilterKind::bandpass || *kind == FilterKind::bandstop);
  const std::string kind_name = kind ? std::string(to_string(*kind)) : std::string();
  std::vector<std::pair<YAML::Node, Path>> items;
  if (v.IsSequence()) {
    if (kind && !band) {
      cx.error(v, p,
               "a " + kind_name + " filter takes one cutoff, got " + describe(v) +
                   " (expected a number in Hz)");
      return {};
    }
    if (v.size() != 2) {
      cx.error(v, p,
               "got " + std::to_string(v.size()) +
                   " band edges (expected [lo, hi]: two numbers in Hz)");
      return {};
    }
    items = {{v[0], p / 0}, {v[1], p / 1}};
  } else if (v.IsScalar()) {
    if (band) {
      cx.error(v, p,
               "a " + kind_name + " filter needs two band edges, got " + describe(v) +
                   " (expected [lo, hi] in Hz)");
      return {};
    }
    items = {{v, p}};
  } else {
    cx.error(v, p, describe(v) + " is not a cutoff (expected " + expected(k) + ")");
    return {};
  }
  std::vector<double> out;
  bool good = true;
  for (const auto& [node, path] : items) {
    const auto f = read_number(cx, node, path, kCutoffValue);
    if (!f) {
      good = false;
      continue;
    }
    if (*f <= 0.0) {
      cx.error(node, path,
               "cutoff " + node.Scalar() + " Hz is not above 0 (expected a frequency > 0 Hz)");
      good = false;
    } else if (rate && *f >= *rate / 2) {
      cx.error(node, path,
               "cutoff " + node.Scalar() + " Hz is not below the Nyquist frequency " +
                   format_number(*rate / 2) + " Hz of the " + format_number(*rate) +
                   (rate_changed ? " Hz signal after the resampler" : " Hz synth source") +
                   " (expected a frequency < " + format_number(*rate / 2) + " Hz)");
      good = false;
    }
    out.push_back(f.value_or(0.0));
  }
  if (good && out.size() == 2 && !(out[0] < out[1])) {
    cx.error(v, p,
             "band edges " + v[0].Scalar() + " and " + v[1].Scalar() +
                 " are not increasing (expected [lo, hi] with lo < hi)");
  }
  return out;
}

} // namespace sigstream::config
