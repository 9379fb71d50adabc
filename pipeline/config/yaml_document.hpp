#pragma once
// The YAML text as one document, and `--set KEY.PATH=VALUE` overrides applied
// to it before it is read (pipeline/config/yaml_reader.hpp), so that an
// overridden value is checked exactly like one written in the file.
#include <yaml-cpp/yaml.h>

#include <string>

#include "pipeline/config/yaml_reader.hpp"

namespace sigstream::config {

// Loads the only YAML document in `text`. A syntax error throws
// Error(config) at once ("ORIGIN:LINE:COL: YAML syntax error: ..."); further
// documents are reported to `cx`.
YAML::Node load_document(const std::string& text, const std::string& origin, Context& cx);

// Applies one "key.path=value" (the value parsed as YAML) to the tree. Map
// keys on the way are created; list indices must exist. A bad override is
// reported to `cx`; a good one is remembered there, so that problems with the
// values it set name it.
void apply_override(Context& cx, YAML::Node& root, const std::string& text);

} // namespace sigstream::config
