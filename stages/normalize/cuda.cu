// The normalize stage on a CUDA lane: the gain its first pass found, run as
// the gain kind's step.
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/normalize/spec.hpp"

namespace sigstream {

std::unique_ptr<CudaStageStep> make_normalize_cuda_step(const PlannedStage& stage,
                                                        const CudaStepShape& /*shape*/) {
  return make_gain_cuda_step(stage.as<NormalizePlan>().linear);
}

} // namespace sigstream
