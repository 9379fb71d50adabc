// The statistics' excerpt (SPEC §8), written into the JSON text by hand
// (pipeline/io/stats_writer.cpp): the text parses, every sample reads back as
// the same float (sign of zero, subnormals and the largest included),
// non-finite samples are null, and names or paths that look like the
// placeholder do not move it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/io/stats_writer.hpp"

namespace sigstream {
namespace {

using json = nlohmann::ordered_json;

std::vector<float> awkward_samples(std::size_t n, std::uint32_t seed) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.1f,
                          1.0f / 3.0f,
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(),
                          1e-7f,
                          123456789.0f,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  while (v.size() < n)
    v.push_back(u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20));
  return v;
}

void expect_samples(const json& got, const std::vector<std::vector<float>>& want) {
  ASSERT_TRUE(got.is_array());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t c = 0; c < want.size(); ++c) {
    ASSERT_EQ(got[c].size(), want[c].size()) << "channel " << c;
    for (std::size_t i = 0; i < want[c].size(); ++i) {
      const float w = want[c][i];
      if (!std::isfinite(w)) {
        EXPECT_TRUE(got[c][i].is_null()) << c << ", " << i;
        continue;
      }
      ASSERT_TRUE(got[c][i].is_number()) << c << ", " << i;
      const auto back = static_cast<float>(got[c][i].get<double>());
      EXPECT_EQ(std::bit_cast<std::uint32_t>(back), std::bit_cast<std::uint32_t>(w))
          << c << ", " << i << ": " << w;
    }
  }
}

TEST(StatsWriter, TheExcerptsSamplesReadBackAsTheSameFloats) {
  RunReport r;
  r.input_path = "\x01excerpt source.wav"; // the placeholder's text, in a path and a name
  r.sample_rate = 48000;
  r.output_sample_rate = 16000;
  r.channels = 3;
  r.output_channels = 2;
  MetricsReport m;
  m.name = "\x01excerpt output";
  r.metrics.push_back(m);
  ExcerptReport e;
  e.source_start = 12000;
  e.output_start = 4000;
  e.source_rate = 48000;
  e.output_rate = 16000;
  for (std::uint32_t c = 0; c < 3; ++c)
    e.source.push_back(awkward_samples(1921 + c, c));
  for (std::uint32_t c = 0; c < 2; ++c)
    e.output.push_back(awkward_samples(641, 10 + c));
  r.excerpt = e;
  const std::string text = stats_json(r);
  const json j = json::parse(text);
  EXPECT_EQ(j["input"]["path"], r.input_path);
  EXPECT_EQ(j["excerpt"]["source"]["start_frame"], 12000);
  EXPECT_EQ(j["excerpt"]["output"]["sample_rate"], 16000.0);
  expect_samples(j["excerpt"]["source"]["channels"], e.source);
  expect_samples(j["excerpt"]["output"]["channels"], e.output);
  // A caller's own keys (batch adds one) go through the same writer.
  json v = stats_json_value(r);
  v["batch"] = {{"config_fingerprint", "\x01excerpt source"}};
  const json k = json::parse(stats_text(v, r));
  expect_samples(k["excerpt"]["source"]["channels"], e.source);
  EXPECT_EQ(k["batch"]["config_fingerprint"], "\x01excerpt source");
  // No excerpt: none written.
  r.excerpt.reset();
  EXPECT_FALSE(json::parse(stats_json(r)).contains("excerpt"));
}

} // namespace
} // namespace sigstream
