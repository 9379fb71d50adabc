// Live mode's partitioned FIR step on a GPU (pipeline/block_convolver.hpp):
// pinned input -> H2D -> forward DFT into the delay line -> multiply-
// accumulate over the partitions -> inverse DFT -> D2H -> pinned output, all
// on one stream, captured once as a CUDA graph and replayed every block, so
// a block costs one graph launch and one wait, not a launch storm. The delay
// line's newest slot lives in device memory (kernels/cuda/fir_partitioned.cuh),
// which is what lets the same graph serve every block.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_partitioned.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/fir/block_convolver.hpp"
#include "stages/fir/per_channel.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

// An instantiated graph, destroyed with its graph.
class GraphExec {
public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec_ != nullptr)
      static_cast<void>(cudaGraphExecDestroy(exec_));
    if (graph_ != nullptr)
      static_cast<void>(cudaGraphDestroy(graph_));
  }
  // Ends the capture on `stream` and instantiates what it recorded.
  void end_capture(cudaStream_t stream) {
    SIGSTREAM_CUDA_TRY(cudaStreamEndCapture(stream, &graph_));
    SIGSTREAM_CUDA_TRY(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void launch(cudaStream_t stream) const { SIGSTREAM_CUDA_TRY(cudaGraphLaunch(exec_, stream)); }

private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

class CudaBlockConvolver final : public BlockConvolver {
public:
  CudaBlockConvolver(const float* taps, int count, int channels, int block, int device)
      : channels_(channels), block_(block), partitions_((count + block - 1) / block),
        device_(device) {
    SIGSTREAM_CUDA_TRY(cudaSetDevice(device));
    const auto ch = static_cast<std::size_t>(channels);
    const auto P = static_cast<std::size_t>(block);
    const auto bins2 = 2 * (P + 1);
    stream_ = kc::Stream::create();
    const std::vector<float> spectra = kc::partitioned_spectra(taps, count, block);
    const std::vector<float> twiddles = kc::partitioned_twiddles(block);
    d_spectra_ = kc::DeviceBuffer<float>(spectra.size());
    d_twiddle_ = kc::DeviceBuffer<float>(twiddles.size());
    d_new_ = kc::DeviceBuffer<float>(ch * P);
    d_prev_ = kc::DeviceBuffer<float>(ch * P);
    d_y_ = kc::DeviceBuffer<float>(ch * P);
    d_fdl_ = kc::DeviceBuffer<float>(static_cast<std::size_t>(partitions_) * ch * bins2);
    d_partial_ = kc::DeviceBuffer<float>(
        ch * static_cast<std::size_t>(kc::partitioned_splits(partitions_)) * bins2);
    d_head_ = kc::DeviceBuffer<int>(1);
    h_in_ = kc::PinnedBuffer<float>(ch * P);
    h_out_ = kc::PinnedBuffer<float>(ch * P);
    const cudaStream_t s = stream_.get();
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(d_spectra_.data(), spectra.data(),
                                       spectra.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(d_twiddle_.data(), twiddles.data(),
                                       twiddles.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_prev_.data(), 0, d_prev_.bytes(), s));
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_fdl_.data(), 0, d_fdl_.bytes(), s));
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_head_.data(), 0, d_head_.bytes(), s));
    stream_.synchronize(); // the host vectors above go away

    SIGSTREAM_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(d_new_.data(), h_in_.data(), h_in_.bytes(), cudaMemcpyHostToDevice, s));
      kc::partitioned_forward(d_new_.data(), d_prev_.data(), channels, block, d_fdl_.data(),
                              d_head_.data(), d_twiddle_.data(), s);
      kc::partitioned_mac(d_fdl_.data(), d_spectra_.data(), d_head_.data(), channels, block,
                          partitions_, d_partial_.data(), s);
      kc::partitioned_inverse(d_partial_.data(), channels, block, partitions_, d_twiddle_.data(),
                              d_y_.data(), d_head_.data(), s);
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(h_out_.data(), d_y_.data(), h_out_.bytes(), cudaMemcpyDeviceToHost, s));
    } catch (...) {
      cudaGraph_t broken = nullptr;
      static_cast<void>(cudaStreamEndCapture(s, &broken));
      if (broken != nullptr)
        static_cast<void>(cudaGraphDestroy(broken));
      throw;
    }
    graph_.end_capture(s);
  }

  [[nodiscard]] bool on_gpu() const noexcept override { return true; }
  [[nodiscard]] int block() const noexcept override { return block_; }
  [[nodiscard]] int partitions() const noexcept override { return partitions_; }
  [[nodiscard]] std::string describe() const override {
    std::ostringstream o;
    o << "partitioned on GPU " << device_ << ", " << partitions_ << " partitions of " << block_
      << " (one CUDA graph a block)";
    return o.str();
  }

  void process(const float* const* x, float* const* y) override {
    const auto P = static_cast<std::size_t>(block_);
    mark(0);
    for (int c = 0; c < channels_; ++c)
      std::memcpy(h_in_.data() + c * P, x[c], P * sizeof(float));
    mark(1);
    graph_.launch(stream_.get());
    mark(2);
    stream_.synchronize();
    mark(3);
    for (int c = 0; c < channels_; ++c)
      std::memcpy(y[c], h_out_.data() + c * P, P * sizeof(float));
    mark(4);
  }

  // "gpu step: copy in 0.010, launch 0.020, wait 0.300, copy out 0.010 ms" (host
  // clock only: it makes no CUDA call, so it cannot disturb the error state).
  [[nodiscard]] std::string last_step() const override {
    if (!tracing_)
      return {};
    auto ms = [&](int a, int b) {
      return std::chrono::duration<double, std::milli>(marks_[b] - marks_[a]).count();
    };
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(3);
    o << "gpu step: copy in " << ms(0, 1) << ", launch " << ms(1, 2) << ", wait " << ms(2, 3)
      << ", copy out " << ms(3, 4) << " ms";
    return o.str();
  }

private:
  int channels_, block_, partitions_, device_;
  kc::Stream stream_;
  kc::DeviceBuffer<float> d_spectra_, d_twiddle_, d_new_, d_prev_, d_y_, d_fdl_, d_partial_;
  kc::DeviceBuffer<int> d_head_;
  kc::PinnedBuffer<float> h_in_, h_out_;
  GraphExec graph_;
  using Clock = std::chrono::steady_clock;
  void mark(std::size_t i) {
    if (tracing_)
      marks_[i] = Clock::now();
  }
  bool tracing_ = trace_on(); // SIGSTREAM_TRACE: the step's parts for last_step()
  std::array<Clock::time_point, 5> marks_{};
};

} // namespace

std::unique_ptr<BlockConvolver> make_cuda_block_convolver(const float* taps, int count,
                                                          int channels, int block, int device) {
  return std::make_unique<CudaBlockConvolver>(taps, count, channels, block, device);
}

// Every FIR stage runs partitioned on the GPU (blocks of at most 4096).
std::unique_ptr<LiveKernel> make_fir_cuda_live_kernel(const PlannedStage& st,
                                                      const LiveContext& context) {
  // A response per channel runs live on the CPU (stages/fir/per_channel.hpp).
  if (fir_per_channel(st))
    return nullptr;
  return std::make_unique<FirLiveKernel>(
      fir_live_note(st.name, st.as<FirPlan>().taps_f32.size()),
      make_cuda_block_convolver(
          st.as<FirPlan>().taps_f32.data(), static_cast<int>(st.as<FirPlan>().taps_f32.size()),
          context.channels, static_cast<int>(std::min<std::int64_t>(context.block, 4096)),
          context.device));
}

} // namespace sigstream
