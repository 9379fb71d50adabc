// Streams (SPEC §6) on the CPU backend: a FIFO of unknown length gives the
// bytes the file gives, for every mode, method and chunking; plans of unknown
// length; the header fields a stream's placeholders live in.
#include <gtest/gtest.h>

#include "pipeline/io/byte_stream.hpp"
#include "pipeline/plan.hpp"
#include "stream_support.hpp"

namespace sigstream {
namespace {

class CpuStream : public ::testing::TestWithParam<test::StreamCase> {};

TEST_P(CpuStream, FifoOfUnknownLengthGivesTheFilesBytes) {
  const auto [file, stream] = test::file_and_stream_outputs(GetParam(), BackendKind::cpu, 7);
  ASSERT_GT(file.size(), 44u);
  EXPECT_TRUE(file == stream) << GetParam().name << ": " << file.size() << " vs " << stream.size()
                              << " bytes";
}

INSTANTIATE_TEST_SUITE_P(Modes, CpuStream, ::testing::ValuesIn(test::stream_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(StreamPlan, UnknownLengthChunksFollowTheLengthOnceKnown) {
  Config cfg;
  cfg.stages = {test::fir_stage("f", {0.5, 0.25, 0.25}, FirMode::full), test::metrics_stage("m")};
  cfg.execution.chunk_frames = 100;
  SourceInfo si = test::pcm16_stereo_source(kUnknownFrames);
  const Plan plan = make_plan(cfg, si, 16);
  EXPECT_FALSE(plan.length_known);
  EXPECT_EQ(plan.source_frames, kOpenEnd);
  EXPECT_EQ(plan.output_grow, 2);
  EXPECT_EQ(plan.max_chunk_frames(), 100);
  // 250 source frames: 252 output frames in chunks of 100, 100, 52.
  EXPECT_EQ(plan.chunk_length(0, 250), 100);
  EXPECT_EQ(plan.chunk_length(2, 250), 52);
  EXPECT_EQ(plan.chunk_length(3, 250), 0);
  EXPECT_EQ(plan.stages[1].defined_in(250), 252);
  EXPECT_EQ(plan.stages[0].defined_out(250), 252);
  EXPECT_EQ(plan.stages[0].defined_in(250), 250);
}

std::vector<unsigned char> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(StreamHeaders, PlaceholdersAreFoundAndWritten) {
  // WAV: RIFF, fmt (16 bytes), LIST (odd size 3 + pad), data.
  std::string wav = std::string("RIFF") + std::string(4, '\x10') + "WAVE" + "fmt " +
                    std::string("\x10\0\0\0", 4) + std::string(16, '\x01') + "LIST" +
                    std::string("\x03\0\0\0", 4) + "abc" + std::string(1, '\0') + "data" +
                    std::string("\x20\0\0\0", 4) + std::string(32, '\x02');
  auto h = bytes_of(wav);
  EXPECT_FALSE(header_length_unknown(SF_FORMAT_WAV, h));
  patch_unknown_sizes(SF_FORMAT_WAV, h);
  EXPECT_TRUE(header_length_unknown(SF_FORMAT_WAV, h));
  const std::size_t data_at = wav.find("data");
  for (std::size_t i : {std::size_t{4}, std::size_t{5}, data_at + 4, data_at + 7})
    EXPECT_EQ(h[i], 0xFF) << i;
  EXPECT_EQ(h[data_at + 8], 0x02) << "samples untouched";
  h[data_at + 4] = h[data_at + 5] = h[data_at + 6] = h[data_at + 7] = 0;
  EXPECT_TRUE(header_length_unknown(SF_FORMAT_WAV, h)) << "a data size of 0 is a placeholder too";
  // AU: ".snd", offset, size, ...
  auto au = bytes_of(std::string(".snd") + std::string("\0\0\0\x18", 4) +
                     std::string("\0\0\x10\0", 4) + std::string(12, '\0'));
  EXPECT_FALSE(header_length_unknown(SF_FORMAT_AU, au));
  patch_unknown_sizes(SF_FORMAT_AU, au);
  EXPECT_TRUE(header_length_unknown(SF_FORMAT_AU, au));
  // CAF: "caff" v1, desc chunk (8-byte size 32), data chunk.
  auto caf = bytes_of(std::string("caff\0\x01\0\0", 8) + "desc" +
                      std::string("\0\0\0\0\0\0\0\x20", 8) + std::string(32, '\x05') + "data" +
                      std::string("\0\0\0\0\0\0\0\x0c", 8) + std::string(12, '\0'));
  EXPECT_FALSE(header_length_unknown(SF_FORMAT_CAF, caf));
  patch_unknown_sizes(SF_FORMAT_CAF, caf);
  EXPECT_TRUE(header_length_unknown(SF_FORMAT_CAF, caf));
  EXPECT_EQ(caf[8 + 12 + 32 + 4], 0xFF);
  // Not a header of that container: left alone.
  auto junk = bytes_of(std::string(64, 'x'));
  patch_unknown_sizes(SF_FORMAT_WAV, junk);
  EXPECT_EQ(junk, bytes_of(std::string(64, 'x')));
}

} // namespace
} // namespace sigstream
