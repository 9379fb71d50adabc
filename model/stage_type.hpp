#pragma once
// The stage kinds a config names (`type: fir`), the key of the registry
// (stages/registry.cpp); below stages/ so that the config, plan and report
// types (model/) can say which kind a stage is.
#include <string_view>

namespace sigstream {

enum class StageType { fir, gain, metrics, resample, mix };

std::string_view to_string(StageType t);

} // namespace sigstream
