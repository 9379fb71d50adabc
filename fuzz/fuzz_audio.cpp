// Fuzz target: audio input through the source, as `filter`/`run` open it.
// The first byte picks how: bit 0 a finished pipe (a stream: ByteSource,
// unknown sizes, the WAV-as-raw reopening) instead of a file; bit 1 raw PCM
// with channels 1 + byte[1] % 8 and encoding byte[2] % 12. The rest is the
// file. Every frame is read, in blocks of 997, up to 2^18 frames.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "pipeline/io/source.hpp"

using namespace sigstream;

namespace {

void read_all(const std::string& path, const std::optional<RawSpec>& raw, bool stream) {
  SourceSpec spec;
  spec.file = path;
  spec.raw = raw;
  std::unique_ptr<Source> src = open_source(spec);
  if (stream)
    src = prefetch_stream(std::move(src), 4096);
  const SourceInfo& info = src->info();
  HostBlock block = make_host_block(info.sample_type, info.channels, 997);
  std::int64_t total = 0;
  while (total < (std::int64_t{1} << 18)) {
    const std::int64_t want =
        info.frames == kUnknownFrames ? 997 : std::min<std::int64_t>(997, info.frames - total);
    if (want <= 0)
      break;
    const std::int64_t got = src->read(block, 0, want);
    total += got;
    if (got < want)
      break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3)
    return 0;
  const bool stream = (data[0] & 1) != 0;
  std::optional<RawSpec> raw;
  if ((data[0] & 2) != 0) {
    raw = RawSpec{};
    raw->sample_rate = 48000.0;
    raw->channels = 1 + data[1] % 8;
    raw->encoding = static_cast<RawEncoding>(data[2] % 12); // s8 ... f64be
  }
  const std::string_view bytes = fuzz::as_text(data + 3, size - 3);
  fuzz::only_errors([&] {
    if (stream) {
      const fuzz::FinishedPipe pipe(bytes);
      read_all(pipe.path(), raw, true);
    } else {
      const fuzz::MemoryFile file(bytes);
      read_all(file.path(), raw, false);
    }
  });
  return 0;
}
