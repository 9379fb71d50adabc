#pragma once
// Reading a filter's kind and its cutoff (`kind: lowpass`, `cutoff_hz: 3000`
// or `[lo, hi]` for the band kinds), shared by the fir and iir designs.
#include <optional>
#include <vector>

#include "stages/types.hpp"

namespace YAML {
class Node;
}

namespace sigstream::config {

class Context;
class MapReader;
class Path;
struct Key;

// The filter kind under the mapping's `kind` key; `valid` false (and the
// problem reported, with suggestions) when it names none.
FilterKind parse_kind(Context& cx, const MapReader& r, bool& valid);

// cutoff_hz: one number for lowpass/highpass, [lo, hi] for band kinds; each in
// (0, Nyquist) when the sample rate is known (synth source; `rate_changed`:
// after a resampler).
std::vector<double> parse_cutoff(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                                 std::optional<FilterKind> kind, std::optional<double> rate,
                                 bool rate_changed);

} // namespace sigstream::config
