// Fuzz target: a YAML config, as `sigstream run` and `batch` read it, and
// (where it parses) its plan for a stereo 48 kHz source, taps designed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "stages/fir/spec.hpp"

using namespace sigstream;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  for (const ConfigUse use : {ConfigUse::run, ConfigUse::batch}) {
    fuzz::only_errors([&] {
      const Config config = parse_config(text, "fuzz.yaml", {}, use);
      // Plans that read files (taps_file) or design very long filters are
      // left out: the first could name /dev/stdin, the second is slow, not wrong.
      for (const StageSpec& s : config.stages)
        if (const FirSpec* f = s.params.find<FirSpec>();
            f && (f->taps_file || (f->design && f->design->taps > 100000)))
          return;
      SourceInfo si;
      si.sample_rate = 48000.0;
      si.channels = 2;
      si.frames = 100003;
      si.sample_type = SampleType::f32;
      static_cast<void>(make_plan(config, si, 0));
    });
  }
  return 0;
}
