// The rule that picks the FIR method per backend. Direct is exact and fast for
// short filters; FFT overlap-save wins for long ones. The crossover is measured
// on each backend by bench/ and written here next to its measurement.
#include <algorithm>

#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "model/plan.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

namespace {

// CPU, measured with build/bench/bench_cpu_fir on the 2-core development
// machine (AMD EPYC, AVX2; one thread, n = 2^20 outputs, 2026-11-23, pocketfft
// AVX2 x8; details in bench/RESULTS-cpu-crossover.md), ns per output sample:
//
//     K      31    47    63    95   127   255   511  1023  4095  16383
//   direct  1.35  1.90  2.41  3.52  4.56  8.85  17.3  34.2   138    544
//   fft     1.94  2.14  2.09  2.35  2.47  2.61  2.51  3.53  4.22   5.27
//
// Direct costs a fixed time per tap (fir_direct_ns_per_fma: 0.034 ns here,
// 0.024 on an AVX-512 Xeon); the FFT 2-5 ns whatever K. They cross near
// K = 55 here (~75 with AVX-512). The rule asks the same cost model that
// picks the FFT's block size (FirFft::fft_cost_ns, per call of a chunk's
// frames) and takes the FFT only where it should be at least 20% faster:
// near the crossover the direct method keeps its guarantees (bit-identical
// to the CUDA direct kernel and across chunkings) for little cost.
constexpr double kCpuFftMinGain = 0.8;

// CUDA, measured with bench_gpu_fir on an H100, direct ms / fft ms per call.
// With cuFFT's five passes (2026-11-22; bench/RESULTS.md):
//
//     K        1 ch x 2^26     2 ch x 1M frames   2 ch x 16k frames
//    255      0.775 / 0.998     0.042 / 0.039      0.014 / 0.026
//    511      1.433 / 0.997     0.071 / 0.043      0.018 / 0.025
//   1023      2.750 / 1.011     0.130 / 0.048      0.029 / 0.029
//   2047      5.42  / 1.06      0.248 / 0.051      0.049 / 0.030
//   4095     10.54  / 1.20      0.410 / 0.052      0.090 / 0.030
//
// FFT when K >= 384 + 2^25 / N (N = frames x channels per call), always from
// 4096 taps. With the fused cuFFTDx kernel (2026-11-24, the default where it
// is built):
//
//     K        1 ch x 2^26     2 ch x 1M frames   2 ch x 16k frames
//     63      0.287 / 0.313     0.021 / 0.020      0.010 / 0.013
//    127      0.454 / 0.317     0.028 / 0.022      0.012 / 0.013
//    255      0.774 / 0.324     0.043 / 0.022      0.015 / 0.013
//   1023      2.716 / 0.394     0.129 / 0.025      0.029 / 0.012
//
// FFT when K >= 96 + 2^22 / N. The FFT's cost is nearly flat in K but has a
// fixed part per call that small calls cannot amortise, so the crossover
// moves up as the samples per call shrink. Which rule applies is the
// caller's to say (CudaFftEngine): the fused kernel's where it runs (a build
// with cuFFTDx, a compute capability 9.0 device), else cuFFT's.
struct CudaCrossover {
  std::int64_t base;
  double scale; // samples
};
constexpr CudaCrossover kCudaCufftCrossover{384, 33554432.0}; // 2^25
constexpr CudaCrossover kCudaFusedCrossover{96, 4194304.0};   // 2^22
constexpr std::int64_t kCudaAlwaysFftTaps = 4096;

FirMethod automatic_cpu(int k, std::int64_t frames) {
  if (!kernels::cpu::FirFft::available())
    return FirMethod::direct;
  // Short calls: an FFT call only pays off over enough outputs (at K = 4095
  // from ~2000 frames); the model sees the frames per call.
  return kernels::cpu::FirFft::fft_cost_ns(k, frames) <
                 kCpuFftMinGain * kernels::cpu::FirFft::direct_cost_ns(k, frames)
             ? FirMethod::fft
             : FirMethod::direct;
}

FirMethod automatic_cuda(std::int64_t k, std::int64_t frames, int channels, CudaFftEngine engine) {
  const CudaCrossover rule =
      engine == CudaFftEngine::fused ? kCudaFusedCrossover : kCudaCufftCrossover;
  // A call shorter than a few filter lengths leaves an FFT block mostly overlap.
  if (frames < 4 * k)
    return FirMethod::direct;
  if (k >= kCudaAlwaysFftTaps)
    return FirMethod::fft;
  const double samples = static_cast<double>(frames) * channels;
  return static_cast<double>(k) >= static_cast<double>(rule.base) + rule.scale / samples
             ? FirMethod::fft
             : FirMethod::direct;
}

} // namespace

FirMethod automatic_fir_method(bool cuda, int taps, std::int64_t frames_per_call, int channels,
                               CudaFftEngine engine) {
  const std::int64_t frames = std::max<std::int64_t>(1, frames_per_call);
  return cuda ? automatic_cuda(taps, frames, channels, engine) : automatic_cpu(taps, frames);
}

void fir_resolve(PlannedStage& stage, const MethodContext& where) {
  FirPlan& fir = stage.as<FirPlan>();
  switch (fir.requested) {
    case FirMethod::direct:
    case FirMethod::fft:
      fir.method = fir.requested;
      break;
    case FirMethod::automatic:
      // A FIR with a response per channel runs as one single-channel FIR each.
      fir.method = automatic_fir_method(
          where.cuda, static_cast<int>(fir.taps_f32.size()), where.frames_per_call,
          fir.channel_taps.empty() ? where.channels : 1, where.engine);
      break;
  }
}

double fir_cpu_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call) {
  const FirPlan& fir = stage.as<FirPlan>();
  const int k = static_cast<int>(fir.taps_f32.size());
  const std::int64_t n = std::max<std::int64_t>(1, frames_per_call);
  const double call_ns = fir.method == FirMethod::fft ? kernels::cpu::FirFft::fft_cost_ns(k, n)
                                                      : kernels::cpu::FirFft::direct_cost_ns(k, n);
  return call_ns / static_cast<double>(n);
}

// What a batch counts a CUDA FIR at, to choose how many GPUs pay for their
// start (pipeline/backend_choice.cpp, cuda_seconds_estimate). Direct: the
// taps at the kernel's rate, 22 FMA a ps in the 255-tap row above (1 ch x
// 2^26) and 26 end to end at 65,536 taps on an H100 (bench/RESULTS.md, stop
// 47: 200 files of 30 s stereo, that FIR + a resample to 44.1 kHz + a
// spectrum, committed 7.3 ms apart on GPU 0). FFT: nearly flat in the taps,
// 0.005 ns a sample fused and 0.015 with cuFFT at 2^26 samples a call (the
// rows above), and ~13 us a call whatever its length.
constexpr double kCudaDirectFmaPerNs = 25000.0;
constexpr double kCudaFftNsPerSample = 0.01;
constexpr double kCudaFftCallNs = 13000.0;

double fir_cuda_fma_per_ns() {
  return kCudaDirectFmaPerNs;
}

double fir_cuda_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call) {
  const FirPlan& fir = stage.as<FirPlan>();
  if (fir.method != FirMethod::fft)
    return static_cast<double>(fir.taps_f32.size()) / kCudaDirectFmaPerNs;
  // A response per channel runs one single-channel FIR each: a call each.
  const double samples_per_call = static_cast<double>(std::max<std::int64_t>(1, frames_per_call)) *
                                  (fir.channel_taps.empty() ? std::max(1, stage.channels_out) : 1);
  return kCudaFftNsPerSample + kCudaFftCallNs / samples_per_call;
}

} // namespace sigstream
