#pragma once
// A mix stage as the config gives it (SPEC §11): exactly one of a matrix
// (rows = output channels, columns = input channels, linear gains), a preset
// or a select list. StageSpec::params holds it; PlannedStage::params and
// StageReport::params hold the MixPlan that runs (the channel counts are the
// plan's generic geometry: channels_in, channels_out).
#include <optional>
#include <string>
#include <vector>

#include "model/stage_type.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: mix`).
inline constexpr StageType kMixType{"mix"};

enum class MixPreset {
  mono,           // the mean of all input channels (1 output)
  surround_stereo // "5.1-stereo": ITU-R BS.775 down-mix of L R C LFE Ls Rs
};

struct MixSpec {
  std::vector<std::vector<double>> matrix; // empty unless given
  std::optional<MixPreset> preset;
  std::vector<int> select; // empty unless given
};

struct MixPlan {
  std::string how;              // "matrix", "mono", "5.1-stereo" or "select"
  int in = 0;                   // input channels
  int out = 0;                  // output channels
  std::vector<double> gains;    // out x in, row-major (empty for select): the reference's
  std::vector<float> gains_f32; // the gains that run
  std::vector<int> select;      // output c = input select[c] (empty for a matrix)
  bool operator==(const MixPlan&) const = default;
};

} // namespace sigstream
