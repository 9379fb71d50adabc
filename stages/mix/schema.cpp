// The mix kind's YAML keys (SPEC §11) and their reader: exactly one of
// matrix / preset / select. What needs the input's channel count (the
// matrix's width, a select index's range, 5.1-stereo's six inputs) is
// checked when the stage is planned (mix.cpp), where that count is known.
#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/mix/mix.hpp"
#include "stages/mix/spec.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr std::array kPresets{MixPreset::mono, MixPreset::surround_stereo};

std::span<const std::string_view> preset_names() {
  static const std::array<std::string_view, kPresets.size()> names{to_string(kPresets[0]),
                                                                   to_string(kPresets[1])};
  return names;
}

constexpr Key kMixKeys[] = {
    Key("matrix", Type::custom,
        "Rows = output channels, columns = input channels, linear gains: output c = sum of "
        "matrix[c][j] * input j; exactly one of matrix / preset / select.")
        .spelled("a list of rows, each a non-empty list of finite numbers"),
    Key("preset", Type::choice,
        "mono: the mean of all input channels; 5.1-stereo: ITU-R BS.775 down-mix of L R C LFE Ls "
        "Rs (L' = L + 0.7071068 C + 0.7071068 Ls, R' likewise, LFE dropped).")
        .one_of(&preset_names),
    Key("select", Type::custom,
        "Output c = input select[c] (0-based): reorder, duplicate or drop channels (a copy).")
        .spelled("a non-empty list of channel indices"),
};

constexpr Key kGainValue = Key("gain", Type::number);
constexpr Key kIndexValue =
    Key("channel index", Type::integer).at_least(0).at_most(65534).spelled("a channel index");

// Reports a non-list or an empty list at `v`; true when `v` is a non-empty list.
bool non_empty_list(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                    const std::string& what) {
  if (!v.IsSequence()) {
    cx.error(v, p, describe(v) + " is not a list (expected " + expected(k) + ")");
    return false;
  }
  if (v.size() == 0) {
    cx.error(v, p, what + " is empty (expected " + expected(k) + ")");
    return false;
  }
  if (v.size() > static_cast<std::size_t>(kMaxMixOutputs)) {
    cx.error(v, p,
             what + " has " + std::to_string(v.size()) + " entries (at most " +
                 std::to_string(kMaxMixOutputs) + " output channels)");
    return false;
  }
  return true;
}

void read_matrix(Context& cx, const MapReader& r, MixSpec& spec) {
  const YAML::Node m = r.value("matrix");
  const Path p = r.path("matrix");
  const Key& k = r.decl("matrix");
  if (!non_empty_list(cx, m, p, k, "the matrix"))
    return;
  std::size_t row_index = 0;
  std::size_t width = 0; // row 0's, when it is a list
  for (const YAML::Node& row : m) {
    const Path rp = p / row_index;
    std::vector<double> gains;
    if (!row.IsSequence()) {
      cx.error(row, rp,
               "row " + std::to_string(row_index) + " is " + describe(row) +
                   ", not a list of gains (expected " + expected(k) + ", e.g. [[0.5, 0.5]])");
    } else if (row.size() == 0) {
      cx.error(row, rp,
               "row " + std::to_string(row_index) +
                   " is empty (each output channel needs one gain per input channel)");
    } else {
      std::size_t j = 0;
      for (const YAML::Node& g : row) {
        if (auto x = read_number(cx, g, rp / j, kGainValue)) {
          // What runs is float32: a gain beyond its range, or one it rounds to 0
          // (a term left out there but not in the float64 reference), is refused.
          const auto f = static_cast<float>(*x);
          if (std::isinf(f) || (f == 0.0f && *x != 0.0))
            cx.error(g, rp / j,
                     g.Scalar() + " is outside float32's range (expected a gain of magnitude " +
                         "1e-45 .. 3.4e38, or 0)");
          gains.push_back(*x);
        }
        ++j;
      }
      if (row_index == 0)
        width = row.size();
      else if (width > 0 && row.size() != width)
        cx.error(row, rp,
                 "row " + std::to_string(row_index) + " has " + std::to_string(row.size()) +
                     " gains, row 0 has " + std::to_string(width) +
                     " (every row needs one gain per input channel)");
    }
    spec.matrix.push_back(std::move(gains));
    ++row_index;
  }
}

void read_select(Context& cx, const MapReader& r, MixSpec& spec) {
  const YAML::Node v = r.value("select");
  const Path p = r.path("select");
  if (!non_empty_list(cx, v, p, r.decl("select"), "the select list"))
    return;
  std::size_t i = 0;
  for (const YAML::Node& e : v) {
    if (auto x = read_integer(cx, e, p / i, kIndexValue))
      spec.select.push_back(static_cast<int>(*x));
    ++i;
  }
}

void read_mix(MapReader& r, const StageReadContext& where, StageSpec& out) {
  MixSpec& spec = out.as<MixSpec>();
  exactly_one_of(where.cx, r, {"matrix", "preset", "select"});
  if (r.has("matrix"))
    read_matrix(where.cx, r, spec);
  if (const auto i = r.choice_index("preset"))
    spec.preset = kPresets[*i];
  if (r.has("select"))
    read_select(where.cx, r, spec);
}

} // namespace

std::string_view to_string(MixPreset p) {
  return p == MixPreset::mono ? "mono" : "5.1-stereo";
}

const StageSchema& mix_schema() {
  static constexpr StageSchema kSchema{kMixKeys, {}, &read_mix};
  return kSchema;
}

} // namespace sigstream
