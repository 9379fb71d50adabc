// The mix stage on a CUDA lane (kernels/cuda/mix.cuh), with the lane's own
// copy of the gains or of the selection.
#include <string>
#include <vector>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/mix.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/mix/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

class MixStep final : public CudaStageStep {
public:
  explicit MixStep(const PlannedStage& st)
      : plan_(st.as<MixPlan>()),
        d_gains_(kc::upload_and_wait(plan_.gains_f32.data(), plan_.gains_f32.size())),
        d_pick_(kc::upload_and_wait(plan_.select.data(), plan_.select.size())) {}
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int /*channels*/,
           cudaStream_t stream) override {
    const float* x = d_x + (y_first - x_first);
    if (plan_.select.empty())
      kc::mix(x, x_stride, plan_.in, d_gains_.data(), d_y, y_stride, plan_.out, n, stream);
    else
      kc::select_planes(x, x_stride, plan_.in, d_pick_.data(), d_y, y_stride, plan_.out, n, stream);
  }
  // Nothing of it depends on the call length.
  [[nodiscard]] bool serves(const CudaStepShape& /*shape*/) const override { return true; }

private:
  MixPlan plan_;
  kc::DeviceBuffer<float> d_gains_;
  kc::DeviceBuffer<int> d_pick_;
};

} // namespace

std::unique_ptr<CudaStageStep> make_mix_cuda_step(const PlannedStage& stage,
                                                  const CudaStepShape& /*shape*/) {
  return std::make_unique<MixStep>(stage);
}

} // namespace sigstream
