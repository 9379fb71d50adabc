#pragma once
// The metrics stage kind (stages/metrics/): an observer that measures the signal
// where it stands in the chain and passes it on unchanged.
#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& metrics_schema();

}  // namespace sigstream
