#include "stages/cuda_steps.cuh"

#include <array>

#include "core/error.hpp"
#include "model/plan.hpp"
#include "stages/fir/spec.hpp"
#include "stages/gain/spec.hpp"
#include "stages/iir/spec.hpp"
#include "stages/mix/spec.hpp"
#include "stages/normalize/spec.hpp"
#include "stages/registry.hpp"
#include "stages/resample/spec.hpp"

namespace sigstream {

namespace {

// The CUDA half of stages/registry.cpp: one row per kind that runs a step.
struct CudaKind {
  StageType type;
  std::unique_ptr<CudaStageStep> (*step)(const PlannedStage&, const CudaStepShape&);
  // Live mode's kernel on a GPU (null: the kind's live op runs on the CPU).
  std::unique_ptr<LiveKernel> (*live_kernel)(const PlannedStage&, const LiveContext&);
};

constexpr std::array<CudaKind, 6> kCudaKinds = {{
    {kFirType, &make_fir_cuda_step, &make_fir_cuda_live_kernel},
    {kGainType, &make_gain_cuda_step, nullptr},
    {kResampleType, &make_resample_cuda_step, nullptr},
    {kMixType, &make_mix_cuda_step, nullptr},
    {kIirType, &make_iir_cuda_step, nullptr},
    {kNormalizeType, &make_normalize_cuda_step, nullptr},
}};

const CudaKind* cuda_kind(StageType type) {
  for (const CudaKind& k : kCudaKinds)
    if (k.type == type)
      return &k;
  return nullptr;
}

} // namespace

bool has_cuda_step(StageType type) {
  return stage_kind(type).observer || cuda_kind(type) != nullptr;
}

std::unique_ptr<CudaStageStep> make_cuda_step(const PlannedStage& stage,
                                              const CudaStepShape& shape) {
  if (stage_kind(stage.type).observer)
    return nullptr;
  if (const CudaKind* k = cuda_kind(stage.type))
    return k->step(stage, shape);
  throw internal_error("stage '" + stage.name + "' (" + std::string(to_string(stage.type)) +
                       ") has no CUDA step");
}

std::unique_ptr<LiveKernel> make_cuda_live_kernel(const PlannedStage& stage,
                                                  const LiveContext& context) {
  const CudaKind* k = cuda_kind(stage.type);
  return k != nullptr && k->live_kernel != nullptr ? k->live_kernel(stage, context) : nullptr;
}

} // namespace sigstream
