#include "model/stage_type.hpp"

namespace sigstream {

// As YAML spells it (SPEC §2), so to_string output can be pasted into a config.
std::string_view to_string(StageType t) {
  switch (t) {
    case StageType::fir:
      return "fir";
    case StageType::gain:
      return "gain";
    case StageType::metrics:
      return "metrics";
    case StageType::resample:
      return "resample";
    case StageType::mix:
      return "mix";
  }
  return "unknown";
}

} // namespace sigstream
