#pragma once
// What a stage kind tells the config reader (DESIGN §1a): its keys under
// `stages[]`, the reference tables of its nested sections, and the reader
// that turns those keys into its part of a StageSpec. Each kind defines one
// in stages/<kind>/schema.cpp; config.cpp finds it through the registry
// (StageKind::schema) and knows no kind by name.
//
// No yaml-cpp here: the reader works on a config::MapReader
// (pipeline/config/yaml_reader.hpp), which only schema.cpp files include.
#include <optional>
#include <span>

#include "model/config.hpp"
#include "pipeline/config/schema.hpp"

namespace sigstream {

namespace config {
class Context;
class MapReader;
} // namespace config

// What a kind's reader may need besides its own keys.
struct StageReadContext {
  // Where problems go; the reader reports them all and never throws for a bad value.
  config::Context& cx;
  // The synth source's rate when the synth is the source and its rate is
  // valid, for checks against Nyquist; none for files (not known until run).
  std::optional<double> sample_rate;
  // True when sample_rate is that of a stage before (a resample), not the synth's.
  bool rate_changed = false;
};

struct StageSchema {
  // Its keys next to `type` and `name` (none for a kind without settings).
  std::span<const config::Key> keys;
  // Reference tables of the mappings under its keys (e.g. `stages[].design`),
  // printed after the table of `keys`.
  std::span<const config::Section> sections;
  // Fills `out`'s part for this kind from `stage`, the stage's mapping read
  // against `type`, `name` and `keys` (null: nothing to read). Reports every
  // problem to where.cx.
  void (*read)(config::MapReader& stage, const StageReadContext& where, StageSpec& out) = nullptr;
  // The sample rate the stages after it see, from the rate before it (none:
  // not known to the config); null: the kind keeps the rate.
  std::optional<double> (*rate_after)(const StageSpec& spec, std::optional<double> rate) = nullptr;
};

} // namespace sigstream
