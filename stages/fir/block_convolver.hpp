#pragma once
// A running FIR over fixed blocks, all channels at once: live mode's
// partitioned step (pipeline/live.cpp), on the CPU (kernels/cpu/fir_partitioned.hpp)
// or on a GPU (pipeline/backends/cuda_live.cu). Plain C++: no CUDA headers.
#include <memory>
#include <string>

namespace sigstream {

class BlockConvolver {
 public:
  virtual ~BlockConvolver() = default;
  // Samples of each channel per process() call.
  [[nodiscard]] virtual int block() const noexcept = 0;
  [[nodiscard]] virtual int partitions() const noexcept = 0;
  // For the log: "partitioned, 86 partitions of 48 (cuda, graph)".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Takes the next block() samples x[c][0..block()) of every channel and
  // writes the next block() outputs y[c][...] (y[n] = sum h[k] x[n-k], with
  // the samples of earlier calls as history). Throws Error on failure.
  virtual void process(const float* const* x, float* const* y) = 0;
};

// The GPU one, on `device` (pipeline/backends/cuda_live.cu; only in CUDA
// builds): the step captured once as a CUDA graph, pinned host buffers.
// Throws Error(cuda) when the device cannot be used.
std::unique_ptr<BlockConvolver> make_cuda_block_convolver(const float* taps, int count, int channels, int block,
                                                          int device);

}  // namespace sigstream
