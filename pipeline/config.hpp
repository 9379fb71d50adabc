#pragma once
// The YAML configuration (SPEC §2) read into the plain structs of
// model/config.hpp. Only the reader includes yaml-cpp (config.cpp, pipeline/config/*.cpp and each
// stage kind's stages/<kind>/schema.cpp); it links PRIVATE to sigstream_core, and no header outside
// pipeline/config/ names it. Every value here has been checked: types, ranges, exactly-one-of
// rules, and cross-field rules that need no file or device (e.g. odd taps for highpass). Relative
// paths are kept as written (they are relative to the working directory, like paths on the command
// line).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "stages/types.hpp"

namespace sigstream {

// Parses and validates a YAML text. `origin` names it in messages.
// `overrides` are "key.path=value" strings (from --set), applied to the YAML
// tree before validation; the value is parsed as YAML (so "8", "[1,2]",
// "hann" all work). Every problem found is reported in one Error(config),
// one line each: "ORIGIN:LINE:COL: KEY.PATH: what is wrong (expected ...)".
// Unknown keys carry a "did you mean 'x'?" suggestion when one is close.
// `use` (model/config.hpp's ConfigUse): what the config is for.
Config parse_config(const std::string& yaml_text, const std::string& origin,
                    const std::vector<std::string>& overrides = {}, ConfigUse use = ConfigUse::run);

// Reads the file (Error(io) if unreadable) and calls parse_config.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                   ConfigUse use = ConfigUse::run);

// The schema as a markdown reference, one table per section (key, type, default,
// description), rendered from the same key tables that drive validation; for
// --help and the README.
std::string config_reference();

// The built-in demo config (configs/demo.yaml compiled in).
const std::string& demo_config_text();

} // namespace sigstream
