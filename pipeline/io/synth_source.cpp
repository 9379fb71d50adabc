#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/error.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream {

namespace {

// Tones are evaluated from the frame index (no phase accumulation), and noise
// is drawn from one seeded stream in frame-major order, so the signal depends
// only on the spec, never on how it is read.
class SynthSource final : public Source {
public:
  explicit SynthSource(SynthSpec spec)
      : spec_(std::move(spec)), rng_(spec_.noise ? spec_.noise->seed : 1) {
    info_.sample_rate = spec_.sample_rate;
    info_.channels = spec_.channels;
    info_.frames = spec_.frames;
    info_.sample_type = SampleType::f32;
    info_.bits = 0;
    if (info_.frames < 1)
      throw config_error("source.synth: needs at least 1 frame");
  }

  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return "synth"; }
  [[nodiscard]] std::string format_name() const override { return "synth float"; }

  std::int64_t read(HostBlock& block, std::int64_t at, std::int64_t n) override {
    n = std::min(n, info_.frames - position_);
    const int ch = info_.channels;
    float* out = block.as<float>() + at * ch;
    const double two_pi = 2.0 * std::numbers::pi;
    for (std::int64_t i = 0; i < n; ++i) {
      const double t = static_cast<double>(position_ + i) / spec_.sample_rate;
      for (int c = 0; c < ch; ++c) {
        double v = 0.0;
        for (const ToneSpec& tone : spec_.tones) {
          if (tone.channel && *tone.channel != c)
            continue;
          // Reduce f*t to [0,1) first so long signals keep their phase accuracy.
          const double cycles = tone.freq_hz * t;
          const double frac = cycles - std::floor(cycles);
          v += tone.amplitude * std::sin(two_pi * frac + tone.phase_deg * std::numbers::pi / 180.0);
        }
        if (spec_.noise)
          v += spec_.noise->amplitude * noise();
        out[i * ch + c] = static_cast<float>(v);
      }
    }
    position_ += n;
    return n;
  }

private:
  // Uniform in [-1, 1) or standard normal (Box-Muller), from 53-bit uniforms,
  // written out so the stream is the same with every standard library.
  double uniform01() { return static_cast<double>(rng_() >> 11) * 0x1p-53; }
  double noise() {
    if (spec_.noise->kind == NoiseKind::uniform)
      return 2.0 * uniform01() - 1.0;
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(); // (0, 1]
    const double u2 = uniform01();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    have_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

  SynthSpec spec_;
  SourceInfo info_;
  std::mt19937_64 rng_;
  std::int64_t position_ = 0;
  double spare_ = 0.0;
  bool have_spare_ = false;
};

} // namespace

std::unique_ptr<Source> make_synth_source(const SynthSpec& spec) {
  return std::make_unique<SynthSource>(spec);
}

} // namespace sigstream
