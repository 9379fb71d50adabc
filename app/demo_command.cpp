// The demo: runs the built-in config, then says what it showed and draws
// the before/after figure where matplotlib is there.
#include "app/demo_command.hpp"

#include <iostream>
#include <string>

#include "app/plot.hpp"
#include "app/run_command.hpp"

namespace sigstream::app {

int run_demo(const CommonFlags& common) {
  std::cerr
      << "sigstream demo: 10 s of 50 Hz + 7 kHz tones (stereo, 16 kHz) through a 255-tap\n"
         "  1 kHz low-pass: the 7 kHz tone goes, so rms falls from 0.5 to 0.354 (0.5/sqrt 2).\n";
  const int rc = run_config("", {}, {}, common);
  if (rc == 0) {
    std::cerr
        << "  details: out/demo_stats.json, out/demo_chunks.csv; the config: configs/demo.yaml\n"
           "  (sigstream run configs/demo.yaml --set stages.1.design.cutoff_hz=3000)\n";
    // The before/after figure; without matplotlib the demo has still filtered.
    std::string python;
    if (draw_figure("out/demo_stats.json", "out/demo.png", &python) == 0)
      std::cerr
          << "  figure: out/demo.png (the signal before and after, spectra, the filter's response; "
             "drawn with "
          << python << ")\n";
    else
      std::cerr << "  no figure: once matplotlib is there, `sigstream plot out/demo_stats.json` "
                   "draws out/demo.png\n";
  }
  return rc;
}

} // namespace sigstream::app
