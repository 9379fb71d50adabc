#include "stages/metrics/loudness.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace sigstream {

namespace {

// libebur128's limits, which the SPEC's reference accepts.
constexpr int kMaxChannels = 64;
constexpr double kMinRate = 16.0, kMaxRate = 2822400.0;

long checked_rate(int channels, double sample_rate) {
  const auto rate = static_cast<long>(std::llround(sample_rate));
  if (channels < 1 || channels > kMaxChannels || static_cast<double>(rate) != sample_rate ||
      sample_rate < kMinRate || sample_rate > kMaxRate)
    throw config_error("loudness: " + std::to_string(channels) + " channel(s) at " +
                       std::to_string(sample_rate) +
                       " Hz (BS.1770 loudness takes 1 to 64 channels at a whole-number rate "
                       "from 16 Hz to 2.8224 MHz)");
  return rate;
}

} // namespace

LoudnessMeter::LoudnessMeter(int channels, double sample_rate)
    : meter_(channels, checked_rate(channels, sample_rate)) {}

void LoudnessMeter::add(std::span<const float* const> planes, std::int64_t n) {
  meter_.add(planes, n);
}

void LoudnessMeter::add_measured(std::int64_t first, std::int64_t n, std::span<const double> energy,
                                 std::span<const double> sample_peak,
                                 std::span<const double> true_peak) {
  if (first != meter_.frames())
    throw internal_error("loudness: frames from " + std::to_string(first) + " measured, frame " +
                         std::to_string(meter_.frames()) + " expected next");
  meter_.add_measured(n, energy, sample_peak, true_peak);
}

LoudnessReport LoudnessMeter::result() const {
  LoudnessReport r;
  r.integrated_lufs = meter_.integrated();
  // The range needs 3 s and a gated block (libebur128 says 0 otherwise).
  if (r.integrated_lufs && meter_.frames() >= 30 * meter_.step_frames())
    r.range_lu = meter_.range();
  if (const double peak = meter_.true_peak(); peak > 0.0)
    r.true_peak_dbtp = 20.0 * std::log10(peak);
  r.max_momentary_lufs = meter_.max_momentary();
  r.max_short_term_lufs = meter_.max_short_term();
  return r;
}

} // namespace sigstream
