#pragma once
// The gain stage kind (stages/gain/): a constant factor on every sample.
#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& gain_schema();

}  // namespace sigstream
