#pragma once
// The CUDA side of the stage kinds (stages/stage.hpp): each kind's step on a
// lane's stream, in its folder (stages/<kind>/cuda.cu), listed in the table
// of stages/cuda_steps.cu. The CUDA backend runs a chain of these without
// knowing what a FIR is.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "stages/stage.hpp"

namespace sigstream {

// One lane's instance of a stage's step: it owns what it keeps on the
// device (taps, FFT plans and buffers) and is used by that lane alone.
class CudaStageStep {
public:
  virtual ~CudaStageStep() = default;
  // Enqueues on `stream` (asynchronous): output frames [y_first, y_first + n)
  // of the stage's channels_out planes (channel c at d_y + c * y_stride) from
  // its `channels` (channels_in) input planes at d_x (element 0 is input
  // frame x_first; channel c at d_x + c * x_stride). n may be 0 (nothing is
  // launched). Throws Error(cuda) for a failed launch.
  virtual void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
                   std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
                   cudaStream_t stream) = 0;
  // For the backend's start-up log ("" = nothing to say).
  [[nodiscard]] virtual std::string describe() const { return {}; }
  // Whether this step, made for a longer call, computes what one made for
  // `shape` would, bit for bit (a lane kept for the next file of a batch).
  [[nodiscard]] virtual bool serves(const struct CudaStepShape& shape) const = 0;
  // A new signal starts (the next file of a batch on a kept lane): a step
  // that carries state (PlannedStage::carries_state) starts it from zero.
  virtual void restart() {}
};

// What a lane asks of a step: its longest call and its input channels.
struct CudaStepShape {
  std::int64_t max_n = 1;
  int channels = 1;
};

// The step of a planned stage on the current device (null for observers).
// Throws Error naming the stage when it cannot be built.
[[nodiscard]] std::unique_ptr<CudaStageStep> make_cuda_step(const PlannedStage& stage,
                                                            const CudaStepShape& shape);

// Each kind's factory (stages/<kind>/cuda.cu).
[[nodiscard]] std::unique_ptr<CudaStageStep> make_fir_cuda_step(const PlannedStage& stage,
                                                                const CudaStepShape& shape);
[[nodiscard]] std::unique_ptr<CudaStageStep> make_gain_cuda_step(const PlannedStage& stage,
                                                                 const CudaStepShape& shape);
// The gain step for a factor known otherwise (normalize's measured gain).
[[nodiscard]] std::unique_ptr<CudaStageStep> make_gain_cuda_step(double linear);
[[nodiscard]] std::unique_ptr<CudaStageStep> make_normalize_cuda_step(const PlannedStage& stage,
                                                                      const CudaStepShape& shape);
[[nodiscard]] std::unique_ptr<CudaStageStep> make_resample_cuda_step(const PlannedStage& stage,
                                                                     const CudaStepShape& shape);
[[nodiscard]] std::unique_ptr<CudaStageStep> make_mix_cuda_step(const PlannedStage& stage,
                                                                const CudaStepShape& shape);
[[nodiscard]] std::unique_ptr<CudaStageStep> make_iir_cuda_step(const PlannedStage& stage,
                                                                const CudaStepShape& shape);
// Live mode on a GPU (stages/fir/cuda_live.cu).
[[nodiscard]] std::unique_ptr<LiveKernel> make_fir_cuda_live_kernel(const PlannedStage& stage,
                                                                    const LiveContext& context);

} // namespace sigstream
