#pragma once
// The iir stage kind (SPEC §12): a cascade of second-order sections, as
// scipy.signal.sosfilt, from inline sections, a file of them, or an RBJ
// cookbook biquad. The first kind that carries state from chunk to chunk:
// its output frame i depends on every input frame before it, so it has no
// look-back a halo could cover. Its step keeps the sections' float64 state
// and serves the frames in order (PlannedStage::carries_state, which the
// CPU executor honours by running the chunks in order); the output is
// bit-identical for any chunking. Its CUDA step (stages/iir/cuda.cu) runs
// the chunks in parallel over time and joins their states.
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/config/schema.hpp"
#include "stages/iir/spec.hpp"
#include "stages/stage.hpp"

namespace sigstream {

// The most sections a stage may have (order 2 x this).
inline constexpr int kMaxIirSections = 64;

[[nodiscard]] std::string_view to_string(BiquadKind k);
[[nodiscard]] std::string_view to_string(IirFamily f);

// Its YAML keys and their reader (schema.cpp).
[[nodiscard]] const StageSchema& iir_schema();

// The sections (designed for the input's rate, or read), checked for
// stability (stages/iir/iir.cpp). Throws Error(config) naming the stage.
void plan_iir(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
std::unique_ptr<const CpuStageStep> make_iir_cpu_step(const PlannedStage& stage);
StatFields iir_stats(const StageReport& stage); // how, sections, passes (2: zero phase)
void iir_facts(const StageSpec& spec, std::ostream& out);
std::vector<std::string> iir_files(const StageSpec& spec);
std::optional<kernels::cpu::FilterResponse> iir_response(const PlannedStage& stage, double rate_in);

// Rows of six (b0 b1 b2 a0 a1 a2, scipy.signal's sos layout) as sections,
// a0 divided out; Error(config) prefixed with `where` for a row not of six,
// a coefficient not finite or a0 = 0 (the YAML's rows, a sos file's, and
// Python's sosfilt).
[[nodiscard]] std::vector<kernels::cpu::Biquad>
iir_sections(const std::vector<std::vector<double>>& rows, const std::string& where);

// The RBJ cookbook's section for `b` at `rate` Hz, a0 divided out.
[[nodiscard]] kernels::cpu::Biquad rbj_biquad(const BiquadSpec& b, double rate);

} // namespace sigstream

namespace sigstream::config {
template <> struct EnumValues<IirFamily> {
  static constexpr std::array values{IirFamily::butter, IirFamily::cheby1, IirFamily::cheby2,
                                     IirFamily::ellip, IirFamily::bessel};
};
template <> struct EnumValues<BiquadKind> {
  static constexpr std::array values{
      BiquadKind::lowpass, BiquadKind::highpass, BiquadKind::bandpass, BiquadKind::notch,
      BiquadKind::allpass, BiquadKind::peaking,  BiquadKind::lowshelf, BiquadKind::highshelf};
};
} // namespace sigstream::config
