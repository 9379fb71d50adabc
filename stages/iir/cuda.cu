// The iir stage on a CUDA lane (kernels/cuda/iir.cuh): the sections' float64
// state on the device, carried from one call to the next, and the frames of
// the last call kept (a later stage's halo asks for them again), as the CPU
// step in stages/iir/iir.cpp keeps them. A plan with this stage runs on one
// lane, its chunks in order (CudaBackend::prepare).
#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/iir.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/iir/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

class IirCudaStep final : public CudaStageStep {
public:
  IirCudaStep(const PlannedStage& st, const CudaStepShape& shape)
      : name_(st.name), cascade_(st.as<IirPlan>().sections), channels_(shape.channels),
        max_n_(std::max<std::int64_t>(shape.max_n, 1)),
        d_state_(static_cast<std::size_t>(channels_) *
                 static_cast<std::size_t>(cascade_.state_size())),
        d_work_(cascade_.workspace_doubles(channels_, max_n_)) {
    for (auto& h : history_)
      h = kc::DeviceBuffer<float>(static_cast<std::size_t>(channels_) *
                                  static_cast<std::size_t>(max_n_));
  }

  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    if (n <= 0)
      return;
    if (channels != channels_ || n > max_n_)
      throw internal_error("iir stage '" + name_ + "': a call of " + std::to_string(n) + " x " +
                           std::to_string(channels) + " for a step made for " +
                           std::to_string(max_n_) + " x " + std::to_string(channels_));
    if (y_first < history_lo_ || y_first > frontier_)
      throw internal_error("iir stage '" + name_ + "': frames from " + std::to_string(y_first) +
                           " asked for after " + std::to_string(history_lo_) + ".." +
                           std::to_string(frontier_) + " (its chunks must come in order)");
    if (fresh_) {
      SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_state_.data(), 0, d_state_.bytes(), stream));
      fresh_ = false;
    }
    const std::int64_t end = y_first + n;
    const std::int64_t kept_to = std::min(end, frontier_);
    const float* old = history_[current_].data();
    float* fresh = history_[current_ ^ 1].data();
    const auto row = [](std::int64_t frames) { return static_cast<std::size_t>(frames) * 4; };
    if (kept_to > y_first)
      SIGSTREAM_CUDA_TRY(cudaMemcpy2DAsync(
          d_y, row(y_stride), old + (y_first - history_lo_), row(max_n_), row(kept_to - y_first),
          static_cast<std::size_t>(channels), cudaMemcpyDefault, stream));
    if (end > frontier_)
      cascade_.run(d_x + (frontier_ - x_first), x_stride, d_y + (frontier_ - y_first), y_stride,
                   channels, end - frontier_, d_state_.data(), d_work_.data(), stream);
    // Keep frames [y_first, max(end, frontier)): the next call starts here or later.
    const std::int64_t keep_to = std::max(end, frontier_);
    if (keep_to - y_first > max_n_)
      throw internal_error("iir stage '" + name_ + "': " + std::to_string(keep_to - y_first) +
                           " frames to keep, room for " + std::to_string(max_n_));
    SIGSTREAM_CUDA_TRY(cudaMemcpy2DAsync(fresh, row(max_n_), d_y, row(y_stride), row(n),
                                         static_cast<std::size_t>(channels), cudaMemcpyDefault,
                                         stream));
    if (frontier_ > end)
      SIGSTREAM_CUDA_TRY(cudaMemcpy2DAsync(
          fresh + n, row(max_n_), old + (end - history_lo_), row(max_n_), row(frontier_ - end),
          static_cast<std::size_t>(channels), cudaMemcpyDefault, stream));
    current_ ^= 1;
    history_lo_ = y_first;
    frontier_ = keep_to;
  }

  void restart() override {
    fresh_ = true;
    history_lo_ = frontier_ = 0;
  }

  [[nodiscard]] std::string describe() const override {
    return "iir '" + name_ + "': " + std::to_string(cascade_.sections()) +
           " section(s), segments joined by a scan of their states";
  }

  [[nodiscard]] bool serves(const CudaStepShape& shape) const override {
    return shape.channels == channels_ && shape.max_n <= max_n_;
  }

private:
  std::string name_;
  kc::IirCascade cascade_;
  int channels_;
  std::int64_t max_n_;
  kc::DeviceBuffer<double> d_state_;
  kc::DeviceBuffer<double> d_work_;
  kc::DeviceBuffer<float> history_[2]; // [channel][max_n]: frames [history_lo_, frontier_)
  int current_ = 0;
  bool fresh_ = true; // the state is zeroed on the stream before the next call
  std::int64_t history_lo_ = 0, frontier_ = 0;
};

// zero_phase: the whole signal in one call (the plan makes it one chunk).
class ZeroPhaseCudaStep final : public CudaStageStep {
public:
  ZeroPhaseCudaStep(const PlannedStage& st, const CudaStepShape& shape)
      : name_(st.name), cascade_(st.as<IirPlan>().sections), frames_(st.frames_out),
        channels_(shape.channels), max_n_(std::max<std::int64_t>(shape.max_n, 1)),
        d_state_(static_cast<std::size_t>(channels_) *
                 static_cast<std::size_t>(cascade_.state_size())),
        d_ext_(cascade_.ext_doubles(channels_, max_n_)),
        d_work_(cascade_.workspace_doubles(channels_, max_n_ + 2 * cascade_.pad())) {}

  void run(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
           std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
           cudaStream_t stream) override {
    if (n <= 0)
      return;
    if (y_first != 0 || n != frames_ || x_first > 0 || n > max_n_ || channels != channels_)
      throw internal_error("iir stage '" + name_ + "': zero phase asked for frames " +
                           std::to_string(y_first) + ".." + std::to_string(y_first + n) +
                           " of a signal of " + std::to_string(frames_) +
                           " (it needs all at once)");
    cascade_.filtfilt(d_x - x_first, x_stride, d_y, y_stride, channels, n, d_ext_.data(),
                      d_state_.data(), d_work_.data(), stream);
  }

  [[nodiscard]] std::string describe() const override {
    return "iir '" + name_ + "': " + std::to_string(cascade_.sections()) +
           " section(s), zero phase (forward and backward over the whole signal)";
  }

  // Nothing carries over from one call to the next; the length is the file's.
  [[nodiscard]] bool serves(const CudaStepShape& shape) const override {
    return shape.channels == channels_ && shape.max_n <= max_n_;
  }

private:
  std::string name_;
  kc::IirCascade cascade_;
  std::int64_t frames_;
  int channels_;
  std::int64_t max_n_;
  kc::DeviceBuffer<double> d_state_, d_ext_, d_work_;
};

} // namespace

std::unique_ptr<CudaStageStep> make_iir_cuda_step(const PlannedStage& stage,
                                                  const CudaStepShape& shape) {
  if (stage.as<IirPlan>().zero_phase)
    return std::make_unique<ZeroPhaseCudaStep>(stage, shape);
  return std::make_unique<IirCudaStep>(stage, shape);
}

} // namespace sigstream
