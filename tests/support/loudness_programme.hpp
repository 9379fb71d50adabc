#pragma once
// Random programme for the loudness QA (stages/metrics/test_loudness*.c*):
// Gaussian noise whose level (-50 to -12 dBFS) moves every 1.3 s of `rate`,
// so the gates and the range have work; with `clicks`, a sample of 0.9 every
// 9973 frames, so the true peak has work.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace sigstream::test {

inline std::vector<float> loudness_programme(int channels, int rate, std::int64_t frames,
                                             std::uint32_t seed, bool clicks = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::uniform_real_distribution<double> level(-50.0, -12.0);
  std::vector<float> x(static_cast<std::size_t>(frames * channels));
  double a = 0.1;
  for (std::int64_t i = 0; i < frames; ++i) {
    if (i % (static_cast<std::int64_t>(rate) * 13 / 10) == 0)
      a = std::pow(10.0, level(rng) / 20.0);
    for (int c = 0; c < channels; ++c)
      x[static_cast<std::size_t>(i * channels + c)] =
          clicks && i % 9973 == 17 ? 0.9f : static_cast<float>(a) * n(rng);
  }
  return x;
}

} // namespace sigstream::test
