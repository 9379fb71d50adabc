#pragma once
// The fir stage kind (stages/fir/): a FIR filter, designed or given by its taps.
#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& fir_schema();

}  // namespace sigstream
