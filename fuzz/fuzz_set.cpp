// Fuzz target: `--set KEY.PATH=VALUE` strings (one a line) applied to the
// built-in demo config, as `sigstream run --set ...` applies them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "pipeline/config.hpp"

using namespace sigstream;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> overrides;
  std::string line;
  for (const char c : fuzz::as_text(data, size)) {
    if (c == '\n') {
      overrides.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  overrides.push_back(line);
  fuzz::only_errors(
      [&] { static_cast<void>(parse_config(demo_config_text(), "demo.yaml", overrides)); });
  return 0;
}
