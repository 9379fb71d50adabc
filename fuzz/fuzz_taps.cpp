// Fuzz target: a taps file (`taps_file:`, `--taps-file`).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "stages/fir/fir.hpp"

using namespace sigstream;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(fuzz::as_text(data, size))};
  fuzz::only_errors([&] { static_cast<void>(read_taps(in, "fuzz.txt")); });
  return 0;
}
