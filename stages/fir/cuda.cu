// The fir stage on a CUDA lane: the tiled direct kernel
// (kernels/cuda/fir_direct.cuh) or cuFFT overlap-save (kernels/cuda/fir_fft.cuh),
// as the plan's resolved method says.
#include <sstream>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_direct.cuh"
#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/fir/per_channel.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

class DirectStep final : public CudaStageStep {
public:
  explicit DirectStep(const PlannedStage& st)
      : stage_(st), taps_(static_cast<int>(st.as<FirPlan>().taps_f32.size())),
        d_taps_(kc::upload_and_wait(st.as<FirPlan>().taps_f32.data(),
                                    st.as<FirPlan>().taps_f32.size())) {}
  [[nodiscard]] std::string describe() const override {
    return "stage '" + stage_.name + "' (" + std::to_string(taps_) + " taps): direct, " +
           kc::fir_direct_policy();
  }
  // The direct kernel's arithmetic is the same for any call length.
  [[nodiscard]] bool serves(const CudaStepShape& /*shape*/) const override { return true; }
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    kc::fir_direct(d_x + (y_first - stage_.lookback - x_first), n, d_taps_.data(), taps_, d_y,
                   channels, x_stride, y_stride, stream);
  }

private:
  const PlannedStage& stage_;
  int taps_; // the plan's, looked up once (not per chunk)
  kc::DeviceBuffer<float> d_taps_;
};

class FftStep final : public CudaStageStep {
public:
  FftStep(const PlannedStage& st, const CudaStepShape& shape)
      : stage_(st),
        fft_(st.as<FirPlan>().taps_f32.data(), static_cast<int>(st.as<FirPlan>().taps_f32.size()),
             shape.max_n, shape.channels) {}
  // The FFT length follows the longest call: the same length, or no.
  [[nodiscard]] bool serves(const CudaStepShape& shape) const override {
    return fft_.serves(shape.max_n, shape.channels);
  }
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    fft_.run(d_x + (y_first - stage_.lookback - x_first), n, d_y, channels, x_stride, y_stride,
             stream);
  }
  [[nodiscard]] std::string describe() const override {
    std::ostringstream o;
    o << "stage '" << stage_.name << "' (" << fft_.taps() << " taps): " << fft_.describe()
      << " per lane";
    return o.str();
  }

private:
  const PlannedStage& stage_;
  kc::FftFir fft_;
};

// One response per channel (stages/fir/per_channel.hpp): channel c's plane
// through channel c's own single-channel step, one launch each.
class PerChannelStep final : public CudaStageStep {
public:
  PerChannelStep(const PlannedStage& st, const CudaStepShape& shape)
      : stages_(fir_channel_stages(st)) {
    for (const auto& one : stages_)
      steps_.push_back(make_fir_cuda_step(*one, CudaStepShape{shape.max_n, 1}));
  }
  [[nodiscard]] bool serves(const CudaStepShape& shape) const override {
    for (const auto& step : steps_)
      if (!step->serves(CudaStepShape{shape.max_n, 1}))
        return false;
    return true;
  }
  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int /*channels*/,
           cudaStream_t stream) override {
    for (std::size_t c = 0; c < steps_.size(); ++c)
      steps_[c]->run(d_x + static_cast<std::int64_t>(c) * x_stride, x_first, x_stride,
                     d_y + static_cast<std::int64_t>(c) * y_stride, y_first, y_stride, n, 1,
                     stream);
  }
  [[nodiscard]] std::string describe() const override {
    return steps_.front()->describe() + " (one response per channel, " +
           std::to_string(steps_.size()) + " channels)";
  }

private:
  std::vector<std::unique_ptr<const PlannedStage>> stages_;
  std::vector<std::unique_ptr<CudaStageStep>> steps_;
};

} // namespace

std::unique_ptr<CudaStageStep> make_fir_cuda_step(const PlannedStage& st,
                                                  const CudaStepShape& shape) {
  if (st.as<FirPlan>().taps_f32.empty())
    throw Error(ErrorKind::invalid_argument, "stage '" + st.name + "' has no taps");
  if (fir_per_channel(st))
    return std::make_unique<PerChannelStep>(st, shape);
  if (st.as<FirPlan>().method != FirMethod::fft)
    return std::make_unique<DirectStep>(st);
  try {
    return std::make_unique<FftStep>(st, shape);
  } catch (const Error& e) {
    throw Error(e.kind(), "stage '" + st.name + "' (fir, fft): " + e.what());
  }
}

} // namespace sigstream
