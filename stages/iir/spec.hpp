#pragma once
// An iir stage as the config gives it (SPEC §12): exactly one of a design
// (scipy.signal.iirfilter's), inline second-order sections, a file of them,
// or an RBJ cookbook biquad.
// StageSpec::params holds the IirSpec; PlannedStage::params and
// StageReport::params the IirPlan that runs.
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/iir.hpp"
#include "model/stage_type.hpp"
#include "stages/iir/design.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: iir`).
inline constexpr StageType kIirType{"iir"};

// The RBJ Audio EQ Cookbook's filters (Robert Bristow-Johnson).
enum class BiquadKind { lowpass, highpass, bandpass, notch, allpass, peaking, lowshelf, highshelf };

struct BiquadSpec {
  BiquadKind kind = BiquadKind::lowpass;
  double freq_hz = 0.0;
  double q = 0.7071067811865476;
  double gain_db = 0.0; // peaking and shelves
};

struct IirSpec {
  std::optional<IirDesignSpec> design;
  std::vector<std::vector<double>> sos; // rows of six: b0 b1 b2 a0 a1 a2 (empty unless given)
  std::optional<std::string> sos_file;  // six numbers a line
  std::optional<BiquadSpec> biquad;
  bool zero_phase = false; // forward-backward, = scipy.signal.sosfiltfilt (files only)
};

struct IirPlan {
  std::string how;                            // "sos", "sos_file" or the biquad's kind
  std::vector<kernels::cpu::Biquad> sections; // a0 divided out
  bool zero_phase = false;
  bool operator==(const IirPlan&) const = default;
};

} // namespace sigstream
