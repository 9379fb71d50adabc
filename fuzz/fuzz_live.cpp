// Fuzz target: live mode's stream reader and block loop. The input is a
// finished pipe read as a live stream (`--latency 2`) through a 31-tap
// low-pass and metrics, CPU backend, into a WAV file. The first byte picks
// raw PCM (bit 0; channels 1 + byte[1] % 4, encoding byte[2] % 12) or a
// container (WAV, AU, CAF, FLAC, ... as libsndfile reads them on a pipe).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_support.hpp"
#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"

using namespace sigstream;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3)
    return 0;
  static const std::string out_dir = [] {
    const auto d = std::filesystem::temp_directory_path() /
                   ("sigstream-fuzz-live-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  const fuzz::FinishedPipe pipe(fuzz::as_text(data + 3, size - 3));
  std::string yaml = "version: 1\nsource:\n  file: \"" + pipe.path() + "\"\n";
  if ((data[0] & 1) != 0)
    yaml += "  raw: {sample_rate: 8000, channels: " + std::to_string(1 + data[1] % 4) +
            ", encoding: " + std::string(to_string(static_cast<RawEncoding>(data[2] % 12))) + "}\n";
  yaml += "stages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 1000, taps: 31}}\n"
          "  - {type: metrics, name: out}\n"
          "sink: {file: \"" +
          out_dir +
          "/out.wav\", format: float}\n"
          "execution: {backend: cpu, latency_ms: 2}\n";
  fuzz::only_errors([&] {
    const Config config = parse_config(yaml, "fuzz-live.yaml");
    static_cast<void>(run_pipeline(config, RunOptions{}));
  });
  return 0;
}
