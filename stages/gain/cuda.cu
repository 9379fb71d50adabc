// The gain stage on a CUDA lane (kernels/cuda/layout.cuh's gain).
#include "kernels/cuda/layout.cuh"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/gain/spec.hpp"

namespace sigstream {

namespace {

class GainStep final : public CudaStageStep {
public:
  explicit GainStep(double g) : g_(static_cast<float>(g)) {}
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    kernels::cuda::gain(d_x + (y_first - x_first), x_stride, d_y, y_stride, channels, n, g_,
                        stream);
  }
  [[nodiscard]] bool serves(const CudaStepShape& /*shape*/) const override { return true; }

private:
  float g_;
};

} // namespace

std::unique_ptr<CudaStageStep> make_gain_cuda_step(const PlannedStage& stage,
                                                   const CudaStepShape& /*shape*/) {
  return make_gain_cuda_step(stage.as<GainPlan>().gain);
}

std::unique_ptr<CudaStageStep> make_gain_cuda_step(double linear) {
  return std::make_unique<GainStep>(linear);
}

} // namespace sigstream
