// The GPU memory bound's arithmetic (issue P10), on any machine: which key
// the error names and what it says would fit. (The CUDA tests run it against
// a real GPU with most of its memory taken.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/resource_limits.hpp"
#include "stage_builders.hpp"

namespace sigstream {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

std::string device_error(std::int64_t lane, int streams, std::int64_t chunk, std::int64_t free_b) {
  try {
    check_device_memory(lane, streams, chunk, free_b, 80 * 1024 * kMiB);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    return e.what();
  }
  return "";
}

TEST(ResourceLimits, DeviceMemoryNamesTheKeyAndWhatFits) {
  // 7 lanes of 300 MiB in 0.9 x 2500 MiB: fine; 8 are not, and 7 is the advice.
  EXPECT_EQ(device_error(300 * kMiB, 7, 1 << 20, 2500 * kMiB), "");
  const std::string streams = device_error(300 * kMiB, 8, 1 << 20, 2500 * kMiB);
  EXPECT_NE(streams.find("execution.streams: 8 CUDA streams of 1048576-frame chunks"),
            std::string::npos)
      << streams;
  EXPECT_NE(streams.find("set streams to at most 7 "), std::string::npos) << streams;
  EXPECT_NE(streams.find("of the GPU's 80.0 GiB are free"), std::string::npos) << streams;
  // One lane of 3000 MiB (2^22 frames) in 0.9 x 1000 MiB: 900 / 3000 x 2^22
  // frames = 1.26M, so 2^20 is the power of two that fits.
  const std::string chunk = device_error(3000 * kMiB, 2, std::int64_t{1} << 22, 1000 * kMiB);
  EXPECT_NE(chunk.find("execution.chunk_frames: one chunk of 4194304 frames"), std::string::npos)
      << chunk;
  EXPECT_NE(chunk.find("set chunk_frames to at most 1048576 "), std::string::npos) << chunk;
}

TEST(ResourceLimits, LaneBytesGrowWithChunkChannelsAndTaps) {
  Config config;
  config.stages = {test::fir_stage("lp", test::random_taps_unit_energy(1001, 1), FirMode::causal)};
  config.execution.chunk_frames = 4096;
  SourceInfo si;
  si.sample_rate = 48000.0;
  si.channels = 3;
  si.frames = 100003;
  si.sample_type = SampleType::i16;
  si.bits = 16;
  const Plan plan = make_plan(config, si, 16);
  // The source block (chunk + 1000 look-back) as i16, the output as i16,
  // three float planes of the source block: 3 x (5096 x 2 + 4096 x 2 + 3 x 5096 x 4).
  EXPECT_EQ(lane_device_bytes(plan), 3 * (5096 * 2 + 4096 * 2 + 3 * 5096 * 4));
  si.channels = 6;
  EXPECT_EQ(lane_device_bytes(make_plan(config, si, 16)), 2 * lane_device_bytes(plan));
}

} // namespace
} // namespace sigstream
