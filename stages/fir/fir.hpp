#pragma once
// The fir stage kind (SPEC §2, §3): a windowed-sinc design, inline taps or a
// taps file; causal, same or full; direct or FFT overlap-save (and, in live
// mode, partitioned: pipeline/live.cpp).
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stages/stage.hpp"

namespace sigstream {

// Reads a taps file: one coefficient per line, '#' starts a comment, blank
// lines ignored. Throws Error(io) if unreadable, Error(config) for a bad line
// ("FILE:LINE: ...") or non-finite/empty taps.
std::vector<double> read_taps_file(const std::string& path);
// A taps file that may also be audio (SPEC §11: WAV, FLAC, anything
// libsndfile reads): its channel c is response c, as read as float64
// samples (PCM scaled to [-1, 1)); a text file is one response. Throws as
// read_taps_file, and Error(config) for an audio file that is empty, longer
// than kMaxTaps frames or holds a non-finite sample.
std::vector<std::vector<double>> read_channel_taps_file(const std::string& path);
// The same from a stream; `path` names it in messages.
std::vector<double> read_taps(std::istream& in, const std::string& path);

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& fir_schema();

// Taps (designed or read), the note that says where they came from, and the
// window: causal K-1 back; same K-1-(K-1)/2 back and (K-1)/2 ahead; full
// adds K-1 frames. stages/fir/plan.cpp.
void plan_fir(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);

// The step for the stage's resolved method: direct (taps ascending, fma) or
// FFT overlap-save; the float64 path is always the direct sum.
std::unique_ptr<const CpuStageStep> make_fir_cpu_step(const PlannedStage& stage);
// The rule behind `method: auto` for one FIR of `taps` taps run in calls of
// `frames_per_call` frames over `channels` channels (CPU: per channel; CUDA:
// all channels in one launch, FFT by `engine`). Never FirMethod::automatic.
// stages/fir/method_rule.cpp, with the measurements behind it.
FirMethod automatic_fir_method(bool cuda, int taps, std::int64_t frames_per_call, int channels,
                               CudaFftEngine engine = CudaFftEngine::cufft);
// The stage's method for `where`: as asked, or the rule above for auto.
void fir_resolve(PlannedStage& stage, const MethodContext& where);
// The cost model of the method that runs (kernels/cpu/fir_fft.hpp), per frame.
double fir_cpu_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call);
// The CUDA kernels' cost per frame and channel on one GPU, and the direct
// kernel's rate (taps x samples a ns), from the measurements beside the method rule.
double fir_cuda_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call);
double fir_cuda_fma_per_ns();

// taps, mode, method, design.
StatFields fir_stats(const StageReport& stage);
// The taps' response (stages/design.hpp taps_response).
std::optional<kernels::cpu::FilterResponse> fir_response(const PlannedStage& stage, double rate_in);
// mode, method, then the design, the taps file or the inline taps (a batch's fingerprint).
void fir_facts(const StageSpec& spec, std::ostream& out);
std::vector<std::string> fir_files(const StageSpec& spec); // its taps file, if any

// Live mode (stages/fir/live.cpp): the kernel on the CPU (direct or
// partitioned) and the running convolution over it.
std::unique_ptr<LiveKernel> make_fir_live_kernel(const PlannedStage& stage,
                                                 const LiveContext& context);
std::unique_ptr<LiveOp> make_fir_live_op(const PlannedStage& stage, const LiveOpContext& where);

} // namespace sigstream
