#pragma once
// A gain stage as the config gives it: the linear factor (db converted,
// 10^(db/20)). StageSpec::params holds it.

namespace sigstream {

struct GainSpec {
  double linear = 1.0;
};

}  // namespace sigstream
