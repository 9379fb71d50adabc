// The resample stage on a CUDA lane: the polyphase kernel
// (kernels/cuda/resample.cuh) with the lane's own copy of the filter.
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/resample.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/resample/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

class ResampleStep final : public CudaStageStep {
public:
  explicit ResampleStep(const PlannedStage& st)
      : d_taps_(kc::upload_and_wait(st.as<ResamplePlan>().taps_f32.data(),
                                    st.as<ResamplePlan>().taps_f32.size())) {
    filter_ = {d_taps_.data(),
               static_cast<int>(st.as<ResamplePlan>().taps_f32.size()),
               static_cast<int>(st.up),
               static_cast<int>(st.down),
               st.lookahead,
               st.lookback};
    describe_ = "stage '" + st.name + "': " + st.detail + ", polyphase on the GPU";
  }
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    kc::resample(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, filter_, stream);
  }
  [[nodiscard]] std::string describe() const override { return describe_; }
  // Nothing of it depends on the call length.
  [[nodiscard]] bool serves(const CudaStepShape& /*shape*/) const override { return true; }

private:
  kc::DeviceBuffer<float> d_taps_;
  kc::DevicePolyphase filter_;
  std::string describe_;
};

} // namespace

std::unique_ptr<CudaStageStep> make_resample_cuda_step(const PlannedStage& stage,
                                                       const CudaStepShape& /*shape*/) {
  return std::make_unique<ResampleStep>(stage);
}

} // namespace sigstream
