#pragma once
// One chunk through the stages of a plan, on the CPU, in float (what the CPU
// backend runs) or double (the float64 verification reference). Both follow
// the frame geometry of pipeline/plan.hpp, so they differ only in precision
// and, for fir stages whose method is fft, in the kernel: the float path runs
// those with FFT overlap-save (kernels/cpu/fir_fft.hpp), the double path is
// always the direct float64 sum (it is the reference the FFT is checked against).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "pipeline/backends/chunk_math.hpp"
#include "pipeline/plan.hpp"

namespace sigstream {

// The FFT kernels of a plan: one per stage, built where the stage is a fir
// stage whose method is fft, null elsewhere. Built once (prepare), then only
// read, by every worker at once.
using FftStages = std::vector<std::unique_ptr<const kernels::cpu::FirFft>>;

inline FftStages make_fft_stages(const Plan& plan) {
  FftStages fft(plan.stages.size());
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    if (st.type == StageType::fir && st.method == FirMethod::fft)
      fft[j] = std::make_unique<const kernels::cpu::FirFft>(st.taps_f32.data(),
                                                            static_cast<int>(st.taps_f32.size()));
  }
  return fft;
}

// A worker's working memory for one chunk at a time. `fft` (float only) points
// at the plan's FFT kernels and is needed when a stage's method is fft.
template <typename T>
struct ChunkScratch {
  std::vector<T> a, b;
  const FftStages* fft = nullptr;
  kernels::cpu::FirFft::Scratch fft_scratch;
};

inline void fir_planar(const float* x, std::int64_t n, const PlannedStage& st, std::size_t j,
                       ChunkScratch<float>& scratch, float* y) {
  if (st.method == FirMethod::fft) {
    if (scratch.fft == nullptr || j >= scratch.fft->size() || !(*scratch.fft)[j])
      throw internal_error("cpu chunk: stage '" + st.name + "' runs fft but has no FFT kernel");
    (*scratch.fft)[j]->apply(x, n, y, scratch.fft_scratch);
    return;
  }
  kernels::cpu::fir_direct(x, n, st.taps_f32.data(), static_cast<int>(st.taps_f32.size()), y);
}
inline void fir_planar(const double* x, std::int64_t n, const PlannedStage& st, std::size_t /*j*/,
                       ChunkScratch<double>& /*scratch*/, double* y) {
  kernels::cpu::fir_direct_f64(x, n, st.taps.data(), static_cast<int>(st.taps.size()), y);
}

// Runs every stage on `src` (planar, `len` frames from start - plan.back) of
// a source `source_frames` long (see ChunkJob::source_frames).
// `on_metrics(stage, planes)` is called for each metrics stage with the
// stage's input planes (frame `start` at index stage.in_back). Returns the
// output planes ([start, start + frames)), which point into `scratch` (or are
// `src` when the plan has no fir/gain stage). If `stage_ns` is given, each
// stage's time is added to its entry (nanoseconds).
template <typename T, typename OnMetrics>
std::vector<const T*> run_stages(const Plan& plan, std::int64_t start, std::int64_t source_frames,
                                 const std::vector<const T*>& src,
                                 std::int64_t len, ChunkScratch<T>& scratch, OnMetrics&& on_metrics,
                                 std::vector<std::int64_t>* stage_ns = nullptr) {
  const auto ch = static_cast<std::size_t>(plan.channels);
  scratch.a.resize(ch * static_cast<std::size_t>(len));
  scratch.b.resize(scratch.a.size());
  std::vector<const T*> cur = src;
  std::int64_t cur_len = len;
  std::vector<T>* next = &scratch.a;
  std::vector<T>* spare = &scratch.b;
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    const auto t0 = std::chrono::steady_clock::now();
    auto charge = [&] {
      if (stage_ns != nullptr)
        (*stage_ns)[j] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - t0).count();
    };
    if (st.type == StageType::metrics) {
      on_metrics(st, cur);
      charge();
      continue;
    }
    const std::int64_t out_len = cur_len - st.lookback - st.lookahead;
    const std::int64_t first = start - st.in_back + st.lookback;
    const ValidRange valid = valid_range(first, out_len, st.defined_out(source_frames));
    std::vector<const T*> out(ch);
    for (std::size_t c = 0; c < ch; ++c) {
      const T* x = cur[c];
      T* y = next->data() + c * static_cast<std::size_t>(len);
      out[c] = y;
      std::fill(y, y + valid.lo, T(0));
      if (st.type == StageType::fir) {
        fir_planar(x + valid.lo, valid.hi - valid.lo, st, j, scratch, y + valid.lo);
      } else {
        const auto g = static_cast<T>(st.gain);
        for (std::int64_t i = valid.lo; i < valid.hi; ++i) y[i] = x[i] * g;
      }
      std::fill(y + valid.hi, y + out_len, T(0));
    }
    cur = std::move(out);
    cur_len = out_len;
    std::swap(next, spare);
    charge();
  }
  return cur;
}

}  // namespace sigstream
