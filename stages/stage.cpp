#include "stages/stage.hpp"

#include "model/config.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

// The `filter` command's one filter is known to the user by its flags, not
// by an internal stage name; a YAML run's by its file, line and key path.
std::string stage_where(const StagePlanContext& where, const StageSpec& s) {
  const Config& config = where.config;
  // A designed or file FIR names its design or file (other kinds hold no FirSpec).
  const FirSpec* fir = s.params.find<FirSpec>();
  if (config.origin == "filter")
    return "filter for " + config.source.file.value_or("the input") +
           (s.flag.empty() ? std::string() : " (" + s.flag + ")");
  std::string text = config.origin.empty() ? std::string() : config.origin + ":";
  if (s.line > 0 && !config.origin.empty())
    text += std::to_string(s.line) + ": ";
  else if (!text.empty())
    text += " ";
  text += "stages." + std::to_string(where.index) + (fir && fir->design ? ".design" : "") +
          " (stage '" + s.name + "')";
  if (fir && fir->design && config.source.file)
    text += ", source " + *config.source.file;
  return text;
}

} // namespace sigstream
