// The `window` (+ `beta`) setting that fir designs and resample share.
#include "stages/window_schema.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/design.hpp"
#include "stages/schema_enums.hpp"

namespace sigstream::config {

WindowSpec read_window_setting(Context& cx, MapReader& r) {
  const std::optional<double> beta = r.number("beta");
  const auto value = r.value_or_default("window");
  const YAML::Node& v = *value; // window has a default, so a value is always there
  const Path p = r.path("window");
  const Key& k = r.decl("window");
  if (!v.IsScalar()) {
    cx.error(v, p,
             describe(v) + " is not a window name (expected one of " +
                 join(enum_names<WindowKind>(), " | ") + ")");
    return {};
  }
  const std::string& text = v.Scalar();
  const std::string_view kaiser = to_string(WindowKind::kaiser);
  const bool is_kaiser = text == kaiser || text.starts_with(std::string(kaiser) + ":");
  const bool inline_beta = text.find(':') != std::string::npos;
  if (!is_kaiser && r.has("beta")) {
    r.error("beta", "beta applies only to the kaiser window (expected window: kaiser, or no beta)");
  }
  if (is_kaiser && inline_beta && r.has("beta")) {
    r.error("beta", "beta is given twice, in window '" + text +
                        "' and here (expected one of 'kaiser:BETA' / beta)");
  }
  if (is_kaiser && !inline_beta && !r.has("beta")) {
    cx.error(v, p,
             "the kaiser window needs a beta (expected 'kaiser:BETA', e.g. 'kaiser:8.6', or "
             "beta: 8.6 next to window: kaiser)");
    return {};
  }
  try {
    WindowSpec w = parse_window(text);
    if (is_kaiser && !inline_beta && beta)
      w.beta = *beta;
    return w;
  } catch (const Error& e) {
    const std::string name = text.substr(0, text.find(':'));
    const auto names = enum_names<WindowKind>();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      bad_choice(cx, v, p, k, names);
    } else {
      // A known window with a bad parameter: design.cpp says what is wrong.
      cx.error(v, p, e.what());
    }
  }
  return {};
}

} // namespace sigstream::config
