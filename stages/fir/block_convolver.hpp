#pragma once
// A running FIR over fixed blocks, all channels at once: live mode's
// partitioned step of the fir stage (stages/fir/live.cpp), on the CPU
// (kernels/cpu/fir_partitioned.hpp) or on a GPU (stages/fir/cuda_live.cu).
// Plain C++: no CUDA headers.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "stages/stage.hpp"

namespace sigstream {

class BlockConvolver {
public:
  virtual ~BlockConvolver() = default;
  [[nodiscard]] virtual bool on_gpu() const noexcept { return false; }
  // Samples of each channel per process() call.
  [[nodiscard]] virtual int block() const noexcept = 0;
  [[nodiscard]] virtual int partitions() const noexcept = 0;
  // For the log: "partitioned, 86 partitions of 48 (cuda, graph)".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Takes the next block() samples x[c][0..block()) of every channel and
  // writes the next block() outputs y[c][...] (y[n] = sum h[k] x[n-k], with
  // the samples of earlier calls as history). Throws Error on failure.
  virtual void process(const float* const* x, float* const* y) = 0;
  // Where the last process() call's time went, for SIGSTREAM_TRACE ("" = nothing to say).
  [[nodiscard]] virtual std::string last_step() const { return {}; }
};

// The GPU one, on `device` (stages/fir/cuda_live.cu; only in CUDA
// builds): the step captured once as a CUDA graph, pinned host buffers.
// Throws Error(cuda) when the device cannot be used.
std::unique_ptr<BlockConvolver> make_cuda_block_convolver(const float* taps, int count,
                                                          int channels, int block, int device);

// The fir stage's live kernel (stages/fir/live.cpp): its partitioned
// convolver, or none (direct).
class FirLiveKernel final : public LiveKernel {
public:
  FirLiveKernel(std::string note, std::unique_ptr<BlockConvolver> partitioned)
      : note_(std::move(note)), partitioned_(std::move(partitioned)) {}
  [[nodiscard]] std::string describe() const override {
    return note_ + (partitioned_ ? partitioned_->describe() : std::string("direct"));
  }
  [[nodiscard]] std::string detail() const override {
    return partitioned_ ? "live: " + partitioned_->describe() : std::string();
  }
  [[nodiscard]] std::optional<FirMethod> method() const override {
    return partitioned_ ? FirMethod::fft : FirMethod::direct;
  }
  [[nodiscard]] bool on_gpu() const noexcept override {
    return partitioned_ && partitioned_->on_gpu();
  }
  [[nodiscard]] BlockConvolver* partitioned() const noexcept { return partitioned_.get(); }
  [[nodiscard]] std::string last_step() const override {
    return partitioned_ ? partitioned_->last_step() : std::string();
  }

private:
  std::string note_;
  std::unique_ptr<BlockConvolver> partitioned_;
};

// "fir 'lp' (4095 taps): " for a kernel's note.
[[nodiscard]] std::string fir_live_note(const std::string& name, std::size_t taps);

} // namespace sigstream
