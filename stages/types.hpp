#pragma once
// Plain enums and specs of the stage kinds, shared by the config loader, the
// planner and the stages (the enums every layer uses are in core/formats.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats.hpp"
#include "model/stage_type.hpp"

namespace sigstream {

enum class FirMode { causal, same, full };
enum class FirMethod { automatic, direct, fft };
enum class FilterKind { lowpass, highpass, bandpass, bandstop };
enum class WindowKind { hamming, hann, blackman, rectangular, kaiser };
// Which FFT the CUDA backend runs (kernels/cuda/fir_fft.cuh): the fused
// cuFFTDx kernel or cuFFT's passes. Their crossovers with direct differ.
enum class CudaFftEngine { cufft, fused };

// The factor a gain of `db` decibels multiplies samples by (10^(db/20)), or
// nullopt when it is not usable: samples are float32 in flight, so the factor
// must be finite there (|db| below ~770).
[[nodiscard]] std::optional<double> gain_from_db(double db) noexcept;

struct WindowSpec {
  WindowKind kind = WindowKind::hamming;
  double beta = 0.0; // kaiser only
};

// A windowed-sinc design request, in Hz. cutoff_hz has one value for
// lowpass/highpass and two (lo < hi) for bandpass/bandstop.
struct DesignSpec {
  FilterKind kind = FilterKind::lowpass;
  std::vector<double> cutoff_hz;
  int taps = 255;
  WindowSpec window;
};

std::string_view to_string(FirMode m);
std::string_view to_string(FirMethod m);
std::string_view to_string(FilterKind k);
std::string_view to_string(WindowKind k);
std::string to_string(const WindowSpec& w); // "hamming", "kaiser:8.6"

} // namespace sigstream
