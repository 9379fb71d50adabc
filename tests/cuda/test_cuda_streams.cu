// Streams (SPEC §6) on the CUDA backend: a FIFO of unknown length gives the
// bytes the file gives, for every mode, method and chunking.
#include <gtest/gtest.h>

#include "cuda_test_support.hpp"
#include "stream_support.hpp"

namespace sigstream {
namespace {

class CudaStream : public ::testing::TestWithParam<test::StreamCase> {};

TEST_P(CudaStream, FifoOfUnknownLengthGivesTheFilesBytes) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const auto [file, stream] = test::file_and_stream_outputs(GetParam(), BackendKind::cuda, 9);
  ASSERT_GT(file.size(), 44u);
  EXPECT_TRUE(file == stream) << GetParam().name << ": " << file.size() << " vs " << stream.size()
                              << " bytes";
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaStream, ::testing::ValuesIn(test::stream_cases()),
                         [](const auto& info) { return info.param.name; });

} // namespace
} // namespace sigstream
