#pragma once
// What the Python module computes on arrays (SPEC §9), without Python types:
// a batch of `rows` signals, each `n` float32 samples at x + r * x_stride,
// filtered, resampled or measured row by row, on the CPU (here) or on the
// GPU (array_ops_cuda.cpp, on the caller's stream, reading the caller's
// memory in place). The binding (module.cpp) turns arrays into these calls.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/channel_metrics.hpp"
#include "kernels/cpu/iir.hpp"
#include "pipeline/plan.hpp" // CudaFftEngine
#include "stages/types.hpp"

namespace sigstream::py {

// numpy.convolve's modes plus SPEC §3's causal (= lfilter).
enum class Mode { causal, same, full, valid };
// Throws Error(invalid_argument) naming the accepted values.
[[nodiscard]] Mode parse_mode(std::string_view text);
[[nodiscard]] FirMethod parse_method(std::string_view text);

// For n input samples and K taps: outputs per row, and where the input sits
// in the kernels' contract (y[i] = sum_k h[k] v[i + K - 1 - k], v[j] = x[j - lead],
// zero outside x): causal lead K-1, same K-1-(K-1)/2, full K-1 with N+K-1
// outputs, valid 0 with max(N-K+1, 0) outputs.
struct FirShape {
  std::int64_t n_out = 0;
  std::int64_t lead = 0;
};
[[nodiscard]] FirShape fir_shape(Mode mode, std::int64_t n, int taps);

// A batch of rows in memory (host or device, as the call says).
struct Rows {
  const float* x = nullptr;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  std::int64_t stride = 0; // floats between rows
};
struct OutRows {
  float* y = nullptr;
  std::int64_t stride = 0;
};

// The method `automatic` resolves to for this call (the CLI's rule,
// pipeline/method_rule.cpp: a call is a row on the CPU, the batch on the GPU).
// The FFT the current CUDA device runs (fused cuFFTDx kernel or cuFFT), for
// resolve_method. Defined in array_ops_cuda.cpp (CUDA builds only).
[[nodiscard]] CudaFftEngine cuda_fft_engine();

[[nodiscard]] FirMethod resolve_method(FirMethod requested, bool cuda, int taps, std::int64_t n_out,
                                       std::int64_t rows,
                                       CudaFftEngine engine = CudaFftEngine::cufft);

// CPU: y row r = the mode's output of x row r with taps h (float64, rounded
// to float32 as the CLI does). Rows run on the shared thread pool when the
// work is large; direct results are the CLI's bits whatever the split.
void fir_cpu(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method, OutRows y);

// resample_poly(x, up, down) per row (up, down reduced, filter from
// stages/resample): ceil(n * up / down) outputs.
struct Resampler {
  std::int64_t up = 1;
  std::int64_t down = 1;
  std::vector<double> taps;
};
[[nodiscard]] Resampler make_resampler(std::int64_t up, std::int64_t down, int half_taps_per_phase,
                                       std::string_view window);
[[nodiscard]] std::int64_t resampled_length(const Resampler& r, std::int64_t n);
// What resampling n frames reads: the filter's delay (K-1)/2 (zero phase),
// the m_out outputs, and the input frames [lo, hi) they touch (zeros
// outside [0, n)); the longest phase has ceil(K / up) taps.
struct ResampleWindow {
  std::int64_t delay = 0;
  std::int64_t m_out = 0;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};
[[nodiscard]] ResampleWindow resample_window(const Resampler& r, std::int64_t n);
void resample_cpu(const Rows& x, const Resampler& r, OutRows y);

// SPEC §4's metrics of each row (reference: the same shape, or null).
[[nodiscard]] std::vector<ChannelMetrics> metrics_cpu(const Rows& y, const float* reference,
                                                      std::int64_t reference_stride);

// Welch's PSD of each row (kernels/cpu/welch): scipy.signal.welch(row, rate,
// window, nperseg=nfft, noverlap, detrend=False, scaling='density'), the
// window periodic as get_window makes it. `psd` holds rows x (nfft/2 + 1)
// values, row-major. Throws Error(invalid_argument) for bad arguments.
struct Spectrum {
  std::vector<double> freq_hz;
  std::vector<double> psd;
  std::int64_t bins = 0;
};
[[nodiscard]] Spectrum spectrum_cpu(const Rows& x, double rate, int nfft, int noverlap,
                                    std::string_view window);

// Taps as firwin designs them (stages/design): kind lowpass/highpass/
// bandpass/bandstop, cutoffs in Hz, window "hamming", "kaiser:8.6", ...
[[nodiscard]] std::vector<double> design(std::string_view kind,
                                         const std::vector<double>& cutoff_hz, double rate,
                                         int taps, std::string_view window);

// sosfilt's sections from `count` rows of six (b0 b1 b2 a0 a1 a2), checked
// and normalised by the iir kind's own rule (stages/iir/iir.hpp; a bad row
// is Error(config), a ValueError in Python).
[[nodiscard]] std::vector<kernels::cpu::Biquad> sos_sections(const double* rows, std::size_t count);

#ifdef SIGSTREAM_HAVE_CUDA
// GPU: the same operations on device memory, enqueued on `stream` (the
// caller's), asynchronous; taps and plans are cached per device between
// calls. x and y must not overlap.
void fir_cuda(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method, OutRows y,
              std::uintptr_t stream);
void resample_cuda(const Rows& x, const Resampler& r, OutRows y, std::uintptr_t stream);
// Synchronises `stream` (the results are host values).
[[nodiscard]] std::vector<ChannelMetrics> metrics_cuda(const Rows& y, const float* reference,
                                                       std::int64_t reference_stride,
                                                       std::uintptr_t stream);
// sosfilt (kernels/cuda/iir.cuh: in parallel over time, float64 state):
// rows x n in place on the device, each row's state (2 per section) from
// and into host memory at `state`; synchronises `stream` (the state comes
// back, and the scratch is freed). x == y allowed.
void sosfilt_cuda(const Rows& x, const std::vector<kernels::cpu::Biquad>& sections, double* state,
                  OutRows y, std::uintptr_t stream);
// Host arrays through the GPU: copies in, computes, copies out (the
// call's own stream; returns when y is written).
void fir_cuda_host(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method,
                   OutRows y);
// The device pointers the last fir_cuda call handed its kernel (tests: the
// input is read in place).
struct LastLaunch {
  const void* x = nullptr;
  void* y = nullptr;
  std::string method;
};
[[nodiscard]] LastLaunch last_cuda_launch();
[[nodiscard]] int cuda_device_count();
#endif

} // namespace sigstream::py
