#pragma once
// Plain enums and specs shared by the config loader, the planner and the stages.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sigstream {

enum class FirMode { causal, same, full };
enum class FirMethod { automatic, direct, fft };
enum class FilterKind { lowpass, highpass, bandpass, bandstop };
enum class WindowKind { hamming, hann, blackman, rectangular, kaiser };
enum class StageType { fir, gain, metrics, resample };
enum class SampleFormat { same, pcm16, pcm24, pcm32, float32, float64 };
enum class BackendKind { automatic, cpu, cuda };
enum class NoiseKind { gaussian, uniform };
// Raw PCM sample encodings (SPEC §6), as `--encoding` and `raw.encoding` spell them.
enum class RawEncoding { s8, u8, s16le, s16be, s24le, s24be, s32le, s32be, f32le, f32be, f64le, f64be };
// Containers an output stream ('-') can be written as (`--type`, `sink.type`).
enum class SinkType { wav, raw, au, flac, caf };

// The factor a gain of `db` decibels multiplies samples by (10^(db/20)), or
// nullopt when it is not usable: samples are float32 in flight, so the factor
// must be finite there (|db| below ~770).
[[nodiscard]] std::optional<double> gain_from_db(double db) noexcept;

struct WindowSpec {
  WindowKind kind = WindowKind::hamming;
  double beta = 0.0;  // kaiser only
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
std::string_view to_string(StageType t);
std::string_view to_string(SampleFormat f);
std::string_view to_string(BackendKind b);
std::string_view to_string(RawEncoding e);
std::string_view to_string(SinkType t);
std::string to_string(const WindowSpec& w);  // "hamming", "kaiser:8.6"

// The value whose to_string is `name`, or nullopt.
[[nodiscard]] std::optional<RawEncoding> raw_encoding_named(std::string_view name) noexcept;
[[nodiscard]] std::optional<SinkType> sink_type_named(std::string_view name) noexcept;

}  // namespace sigstream
