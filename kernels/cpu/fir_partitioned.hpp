#pragma once
// Uniformly partitioned overlap-save convolution (UPOLS) with a
// frequency-domain delay line, for live mode (SPEC §6): the latency is one
// block of P samples whatever the filter length K.
//
//   y[n] = sum_{k=0}^{K-1} h[k] * x[n-k]     (x = 0 before the first sample)
//
// Strategy: the taps are cut into M = ceil(K/P) partitions of P taps; each
// partition's spectrum H_j (2P-point real FFT, zero-padded, 1/(2P) folded in)
// is computed once. Per block of P new samples: X_t = FFT of the last 2P input
// samples; X_t goes into a ring of the last M spectra (the delay line);
// Y = sum_j X_{t-j} H_j (complex multiply-accumulate over bins, split real and
// imaginary arrays padded to 8 floats so the loop vectorises); the inverse
// FFT's last P samples are the block's outputs. Work per block: two FFTs of
// 2P points and M (P+1) complex MACs, against P K for the direct sum.
//
// Not bit-identical to the direct sum (another summation order); within
// ~1e-6 relative of the float64 result. The FFT is pocketfft; builds without
// it (FFTW builds) have available() false.
#include <cstdint>
#include <memory>
#include <vector>

namespace sigstream::kernels::cpu {

class PartitionedFir {
public:
  // One channel's delay line and buffers.
  class State {
  public:
    State() = default;

  private:
    friend class PartitionedFir;
    std::vector<float> input;          // the last 2P input samples
    std::vector<float> fdl_re, fdl_im; // M spectra, ring
    std::vector<float> acc_re, acc_im, work;
    int head = 0; // ring slot of the newest spectrum
  };

  // Throws sigstream::Error (invalid_argument) for taps < 1 or block < 1.
  PartitionedFir(const float* h, int taps, int block);
  ~PartitionedFir();
  PartitionedFir(PartitionedFir&&) noexcept;
  PartitionedFir& operator=(PartitionedFir&&) noexcept;

  [[nodiscard]] State make_state() const;
  // Takes the next P input samples x[0..P) of a channel, writes its next P
  // outputs y[0..P). const: many channels (states) share one object.
  void process(State& state, const float* x, float* y) const;

  [[nodiscard]] int block() const noexcept { return block_; }
  [[nodiscard]] int partitions() const noexcept { return partitions_; }
  // Estimated cost of one block for one channel, in ns, on this CPU.
  [[nodiscard]] double block_cost_ns() const noexcept;

  [[nodiscard]] static bool available() noexcept;

private:
  struct Plan;
  int block_ = 0, partitions_ = 0, stride_ = 0;
  std::vector<float> h_re_, h_im_; // M spectra
  std::unique_ptr<Plan> plan_;
};

} // namespace sigstream::kernels::cpu
