#pragma once
// Statistics in the JSON schema of SPEC §4 and the per-chunk CSV.
#include <string>

#include "pipeline/pipeline.hpp"

namespace sigstream {

std::string stats_json(const RunReport& report);
std::string stats_csv(const RunReport& report);

}  // namespace sigstream
