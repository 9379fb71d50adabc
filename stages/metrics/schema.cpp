// The metrics kind has no keys of its own: an observer needs only the `type`
// and `name` that every stage has.
#include "pipeline/config/stage_schema.hpp"
#include "stages/metrics/metrics.hpp"

namespace sigstream {

const StageSchema& metrics_schema() {
  static constexpr StageSchema kSchema{{}, {}, nullptr};
  return kSchema;
}

}  // namespace sigstream
