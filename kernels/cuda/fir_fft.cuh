#pragma once
// FIR convolution by FFT overlap-save (cuFFT R2C/C2R), with the contract of
// fir_direct (kernels/cuda/fir_direct.cuh):
//
//   y[c][i] = sum_{k=0}^{K-1} h[k] * x[c][i + K - 1 - k],   i = 0 .. n-1, c = 0 .. channels-1
//
// channel c's input at d_x + c * x_stride holding n + K - 1 samples (the K - 1
// before output 0, then n more), its output at d_y + c * y_stride. Results
// agree with the direct method to float32 FFT rounding (about 1e-7 relative
// L2 for white-noise inputs), not bit for bit; a NaN or Inf input spreads to
// the whole segment (L samples) that contains it, as in any FFT convolution.
//
// An FftFir is built once (per lane and stage: it owns cuFFT plans, a work
// area and a segment buffer, and the taps' spectrum), then run() is called
// per chunk: asynchronous on the given stream, no allocation, no
// synchronisation. One FftFir must not run on two streams at once (its
// buffers are shared by consecutive runs, which a single stream orders).
// The strategy is described at the top of fir_fft.cu.
#include <cuda_runtime.h>
#include <cufft.h>

#include "kernels/cuda/cufft_api.hpp"
#include "kernels/cuda/fir_direct.cuh" // FirInputSpan

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cuda/resources.hpp"

namespace sigstream::kernels::cuda {

// cuFFT plans are made and destroyed one at a time in the process: made
// concurrently by 16-32 threads (a batch's workers starting), cuFFT's plan
// creation failed with CUFFT_INTERNAL_ERROR and an illegal address followed
// (H100, 2026-11-26). Held by every plan's creation and destruction
// (recursive: a plan made under it may be destroyed under it).
std::recursive_mutex& cufft_plan_mutex();

// The spectrum of `taps` taps zero-padded to `fft` (fft / 2 + 1 bins, times
// 1 / fft, computed in float64) on the current device, shared by every filter
// of the same taps and length while one holds it. Blocks until it is ready.
std::shared_ptr<const DeviceBuffer<float2>> taps_spectrum(const float* h_taps, int taps, int fft);

// A cuFFT plan handle, move-only; the destructor destroys it (never throws).
class CufftPlan {
public:
  CufftPlan() noexcept = default;
  // cufftCreate (Error(cuda) on failure); the caller makes the plan.
  [[nodiscard]] static CufftPlan create();
  ~CufftPlan() { reset(); }
  CufftPlan(CufftPlan&& o) noexcept : handle_(o.handle_), valid_(o.valid_) { o.valid_ = false; }
  CufftPlan& operator=(CufftPlan&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = o.handle_;
      valid_ = o.valid_;
      o.valid_ = false;
    }
    return *this;
  }
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  [[nodiscard]] cufftHandle get() const noexcept { return handle_; }
  [[nodiscard]] bool valid() const noexcept { return valid_; }

private:
  void reset() noexcept {
    if (valid_) {
      const std::lock_guard lock(cufft_plan_mutex());
      static_cast<void>(cufft().destroy(handle_)); // loaded: create() succeeded
    }
    valid_ = false;
  }
  cufftHandle handle_ = 0;
  bool valid_ = false;
};

// How an FftFir computes its segments.
enum class FftEngine {
  automatic, // fused where fused_fft_available() says so for the FFT length, else cufft
  cufft,     // five passes a group: gather, cuFFT R2C, multiply, cuFFT C2R, scatter
  fused,     // one kernel (cuFFTDx): Error(invalid_argument) where unavailable
};

// Tuning of an FftFir. Zeros pick the measured defaults.
struct FftFirOptions {
  // FFT length L (even, >= taps; 2^a 3^b 5^c 7^d is fast). 0: fft_size_automatic()
  // for the automatic engine, fft_size_for(.., engine == fused) otherwise.
  int fft_size = 0;
  // Bytes of segments transformed per cuFFT call (the segment buffer, at
  // most every segment of a max_n call). 0: fft_default_group_bytes().
  std::int64_t group_bytes = 0;
  // Transforms in place (one buffer of rows of L + 2 floats) or out of place
  // (rows of L reals and of L/2 + 2 bins, 16-byte aligned; more memory).
  bool in_place = true;
  // Benchmarks only (results are wrong): bit p skips pass p of each group
  // (0 gather, 1 R2C, 2 multiply, 3 C2R, 4 scatter), to time the others.
  // The cuFFT engine only.
  unsigned skip_passes = 0;
  FftEngine engine = FftEngine::automatic;
};

// Whether the fused engine runs FFT length `fft` on the current device (a
// build with cuFFTDx, a compiled size, a compute capability 9.0 device).
[[nodiscard]] bool fused_fft_available(int fft);
// Whether this build holds the fused engine (the cuFFTDx headers were found),
// and whether it runs on a device of compute capability major.minor.
[[nodiscard]] bool fused_fft_built() noexcept;
[[nodiscard]] constexpr bool fused_fft_runs_on(int major, int minor) noexcept {
  return major == 9 && minor == 0;
}

// The FFT length FftFir picks for `taps` taps and at most `max_n` outputs per
// channel and call: the measured best ratio of FFT work to the L - K + 1 new
// outputs per segment, no longer than one segment covering max_n + K - 1.
// `fused`: the length for the fused engine (which may not run it: check
// fused_fft_available()).
[[nodiscard]] int fft_size_for(int taps, std::int64_t max_n, bool fused = false);

// The FFT length an FftFir with FftEngine::automatic and fft_size 0 takes on
// the current device: fft_size_for(.., true) where the fused engine runs it,
// else fft_size_for(.., false).
[[nodiscard]] int fft_size_automatic(int taps, std::int64_t max_n);

// Default segment-buffer bytes (FftFirOptions::group_bytes = 0).
[[nodiscard]] std::int64_t fft_default_group_bytes();

// What an FftFir decides from its arguments: FFT length, engine, segments
// per cuFFT call and row strides. Two filters of the same taps with equal
// layouts compute the same bits for any call both can take.
struct FftFirLayout {
  int fft = 0;
  bool fused = false;
  int block = 0;          // new outputs per segment
  int group = 0;          // segments per cuFFT call (0: fused)
  int real_stride = 0;    // floats between rows of reals
  int complex_stride = 0; // bins between rows of bins
  bool operator==(const FftFirLayout&) const = default;
};

class FftFir {
public:
  FftFir() = default;
  // The layout FftFir(h_taps, taps, max_n, max_channels, options) takes on
  // the current device. Throws as the constructor does for bad arguments.
  [[nodiscard]] static FftFirLayout layout_for(int taps, std::int64_t max_n, int max_channels,
                                               const FftFirOptions& options = {});
  // Whether this filter computes calls of up to `max_n` outputs of up to
  // `max_channels` channels bit for bit as one made for them would (it can
  // take them, and it has that one's layout): a longer file's filter then
  // serves a shorter one (a batch keeps its lanes from file to file).
  [[nodiscard]] bool serves(std::int64_t max_n, int max_channels) const;
  // Builds the plans and the taps' spectrum for `taps` float taps in host
  // memory (copied; taps >= 1), calls of up to `max_n` outputs per channel
  // (>= 1) and up to `max_channels` channels (1 .. 65535), on the current
  // device. Blocks until the spectrum is ready (uses its own stream).
  // Throws Error(invalid_argument) for bad arguments, Error(cuda) on failure.
  FftFir(const float* h_taps, int taps, std::int64_t max_n, int max_channels,
         FftFirOptions options = {});
  FftFir(FftFir&&) noexcept = default;
  FftFir& operator=(FftFir&&) noexcept = default;
  FftFir(const FftFir&) = delete;
  FftFir& operator=(const FftFir&) = delete;
  ~FftFir() = default;

  // Enqueues the filter on `stream` (asynchronous). Arguments as fir_direct's:
  //   d_x:      channel c's input at d_x + c * x_stride, n + taps - 1 samples.
  //   n:        outputs per channel, 0 .. max_n (0: nothing is launched).
  //   d_y:      channel c's output at d_y + c * y_stride, n samples; must not
  //             overlap the input.
  //   channels: 0 .. max_channels.
  //   span:     where the input samples are, as for fir_direct (default: all
  //             n + taps - 1 of them).
  // Throws Error(invalid_argument) for bad arguments, Error(cuda) on failure.
  void run(const float* d_x, std::int64_t n, float* d_y, int channels, std::int64_t x_stride,
           std::int64_t y_stride, cudaStream_t stream, FirInputSpan span = {});

  [[nodiscard]] bool valid() const noexcept { return taps_ > 0; }
  [[nodiscard]] int taps() const noexcept { return taps_; }
  [[nodiscard]] int fft_size() const noexcept { return fft_; }
  // New outputs per segment: fft_size() - taps() + 1.
  [[nodiscard]] int block() const noexcept { return block_; }
  // Segments (over all channels) per cuFFT execution (0 for the fused engine).
  [[nodiscard]] int group_segments() const noexcept { return group_; }
  // The engine that runs (never automatic).
  [[nodiscard]] FftEngine engine() const noexcept {
    return fused_ ? FftEngine::fused : FftEngine::cufft;
  }
  // Device bytes held (segment buffer, work area, spectrum).
  [[nodiscard]] std::size_t device_bytes() const noexcept;
  // For logs: "fft overlap-save L=4096 (3074 outputs/segment), one fused cuFFTDx kernel, 0 MB"
  // or "... L=16384 (12290 outputs/segment), 511 segments per cuFFT call (in place), 40 MB".
  [[nodiscard]] std::string describe() const;

private:
  void make_cufft_plans(bool in_place);
  void compute_spectrum(const float* h_taps);

  FftFirOptions options_;
  int taps_ = 0;
  int fft_ = 0;
  int block_ = 0;
  int group_ = 0;
  std::int64_t max_n_ = 0;
  int max_channels_ = 0;
  unsigned skip_ = 0;
  bool fused_ = false;
  int real_stride_ = 0;    // floats between rows of reals
  int complex_stride_ = 0; // bins between rows of bins
  // The work area before the plans that use it: destroyed after them.
  DeviceBuffer<std::byte> work_; // cuFFT work area shared by both plans
  CufftPlan r2c_;
  CufftPlan c2r_;
  DeviceBuffer<float> segments_; // group_ rows of reals (in place: also their bins)
  DeviceBuffer<float2> bins_;    // out of place: group_ rows of bins
  // fft_ / 2 + 1 bins of the taps, times 1 / fft_ (shared: taps_spectrum)
  std::shared_ptr<const DeviceBuffer<float2>> spectrum_;
};

} // namespace sigstream::kernels::cuda
