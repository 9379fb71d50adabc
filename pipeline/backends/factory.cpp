// Backend selection: the one place that knows whether CUDA was built.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "pipeline/pipeline.hpp"
#include "stages/fir/spec.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/registry.hpp"

#ifdef SIGSTREAM_HAVE_CUDA
#include "kernels/cuda/fir_fft.cuh"
#include "pipeline/backends/cuda_backend.hpp"
#endif

namespace sigstream {

bool cuda_built() noexcept {
#ifdef SIGSTREAM_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool fused_fft_engine_built() noexcept {
#ifdef SIGSTREAM_HAVE_CUDA
  return kernels::cuda::fused_fft_built();
#else
  return false;
#endif
}

std::vector<DeviceDescription> list_devices() {
  std::vector<DeviceDescription> out;
#ifdef SIGSTREAM_HAVE_CUDA
  for (const CudaDeviceInfo& d : cuda_devices())
    out.push_back({d.ordinal, d.name, d.memory_bytes, d.major, d.minor, d.multiprocessors});
#endif
  return out;
}

void start_devices([[maybe_unused]] const std::vector<int>& devices) {
#ifdef SIGSTREAM_HAVE_CUDA
  cuda_start_devices(devices);
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device,
                                      const std::function<void(const std::string&)>& log) {
  if (kind == BackendKind::cpu)
    return make_cpu_backend();
  const auto devices = list_devices();
  if (kind == BackendKind::cuda) {
    if (!cuda_built())
      throw Error(ErrorKind::cuda,
                  "backend 'cuda': this sigstream was built without CUDA (no nvcc at build time); "
                  "use --backend cpu");
    if (devices.empty())
      throw Error(ErrorKind::cuda,
                  "backend 'cuda': no CUDA device found (use --backend cpu or auto)");
  }
  if (devices.empty()) {
    if (log)
      log(cuda_built() ? "backend auto: no CUDA device found, using the CPU backend"
                       : "backend auto: built without CUDA, using the CPU backend");
    return make_cpu_backend();
  }
  if (device < 0 || device >= static_cast<int>(devices.size()))
    throw Error(ErrorKind::config, "execution.device: device " + std::to_string(device) +
                                       " does not exist (" + std::to_string(devices.size()) +
                                       " CUDA device(s) found)");
#ifdef SIGSTREAM_HAVE_CUDA
  if (log && kind == BackendKind::automatic)
    log("backend auto: using CUDA device " + std::to_string(device) + " (" +
        devices[static_cast<std::size_t>(device)].name + ")");
  return make_cuda_backend();
#else
  return make_cpu_backend();
#endif
}

namespace {

// The FFT the CUDA backend runs on `device` (the automatic method's crossover
// depends on it); device < 0: the build's, without asking the driver (a
// compute capability 9.0 device, what the build targets).
CudaFftEngine cuda_fft_engine([[maybe_unused]] int device) {
#ifdef SIGSTREAM_HAVE_CUDA
  if (!kernels::cuda::fused_fft_built())
    return CudaFftEngine::cufft;
  if (device < 0)
    return CudaFftEngine::fused;
  for (const DeviceDescription& d : list_devices())
    if (d.ordinal == device)
      return kernels::cuda::fused_fft_runs_on(d.major, d.minor) ? CudaFftEngine::fused
                                                                : CudaFftEngine::cufft;
#endif
  return CudaFftEngine::cufft;
}

// Whether every fir stage of a resolved plan runs direct: the only FIR
// method that is bit-identical on the CPU and CUDA (FFT libraries differ).
bool all_direct(const Plan& plan) {
  return std::none_of(plan.stages.begin(), plan.stages.end(), [](const PlannedStage& st) {
    return st.type == kFirType && st.as<FirPlan>().method != FirMethod::direct;
  });
}

} // namespace

bool adopt_kept_backend(Backend& kept, const Config& config, int device, Plan& plan,
                        const BackendOptions& options) {
  // Only a backend asked for by name: auto's choice depends on the job.
  if (config.execution.backend == BackendKind::automatic)
    return false;
  const std::string name = config.execution.backend == BackendKind::cuda ? "cuda" : "cpu";
  if (kept.name() != name)
    return false;
  Plan candidate = plan;
  resolve_methods(candidate, name, name == "cuda" ? cuda_fft_engine(device) : CudaFftEngine::cufft);
  if (!kept.adopt(candidate, options))
    return false;
  plan = std::move(candidate);
  return true;
}

namespace {

bool measures_loudness(const Plan& plan) {
  for (const PlannedStage& st : plan.stages)
    if (const MetricsPlan* m = st.params.find<MetricsPlan>(); m != nullptr && m->loudness)
      return true;
  return false;
}

} // namespace

const StageSpec* cpu_only_stage([[maybe_unused]] const std::vector<StageSpec>& stages) {
#ifdef SIGSTREAM_HAVE_CUDA
  for (const StageSpec& s : stages)
    if (!has_cuda_step(s.type) ||
        (stage_kind(s.type).cpu_only != nullptr && stage_kind(s.type).cpu_only(s) != nullptr))
      return &s;
#endif
  return nullptr;
}

std::string cpu_only_message(const StageSpec& stage) {
  const StageKind& k = stage_kind(stage.type);
  const char* setting = k.cpu_only != nullptr ? k.cpu_only(stage) : nullptr;
  return "stage '" + stage.name + "' (" + std::string(to_string(stage.type)) + ") " +
         (setting != nullptr ? "asks for " + std::string(setting) + ", which has no CUDA path yet"
                             : std::string("has no CUDA step yet")) +
         ": it runs on the CPU backend (--backend cpu or auto, execution.backend: cpu)";
}

std::unique_ptr<Backend> choose_backend(const Config& config, int device, Plan& plan,
                                        const std::function<void(const std::string&)>& log) {
  // A stage without a CUDA step puts the whole job on the CPU.
  if (const StageSpec* s = cpu_only_stage(config.stages)) {
    if (config.execution.backend == BackendKind::cuda)
      throw config_error(cpu_only_message(*s));
    if (log && config.execution.backend == BackendKind::automatic)
      log("backend auto: stage '" + s->name + "' (" + std::string(to_string(s->type)) +
          ") runs on the CPU only: using the CPU backend");
    resolve_methods(plan, "cpu");
    return make_cpu_backend();
  }
  // The backend asked for (or auto's plain choice), with its own methods.
  auto as_asked = [&] {
    std::unique_ptr<Backend> backend = make_backend(config.execution.backend, device, log);
    // The engine matters (and the driver is asked) only for CUDA.
    const bool cuda = backend->name() == "cuda";
    resolve_methods(plan, backend->name(), cuda ? cuda_fft_engine(device) : CudaFftEngine::cufft);
    return backend;
  };
  // Without the NVIDIA driver's device node there is nothing to wait for:
  // make_backend() finds no device at once and says so.
  if (config.execution.backend != BackendKind::automatic || !cuda_built() ||
      !std::filesystem::exists("/dev/nvidiactl"))
    return as_asked();
  // A job the CPU finishes before CUDA could start runs there, with the CPU's methods.
  Plan on_cpu = plan;
  resolve_methods(on_cpu, "cpu");
  const int threads = config.execution.threads > 0 ? config.execution.threads : hardware_threads();
  if (cpu_finishes_before_cuda_starts(on_cpu, threads)) {
    if (log) {
      char note[200];
      std::snprintf(note, sizeof note,
                    "backend auto: the CPU (%d thread%s) should finish this job in ~%.2f s, before "
                    "CUDA could start: using the CPU backend (--backend cuda forces the GPU)",
                    threads, threads == 1 ? "" : "s", cpu_seconds_estimate(on_cpu, threads));
      log(note);
    }
    plan = std::move(on_cpu);
    return make_cpu_backend();
  }
  // CPU and GPU together only where both give the same bits.
  // (The build's FFT engine, as the driver is not asked yet: where the device
  // turns out to run cuFFT instead, whose crossover is higher, a plan direct
  // under this rule is direct under that one too.)
  Plan on_cuda = plan;
  resolve_methods(on_cuda, "cuda", cuda_fft_engine(-1));
  // (A plan that carries state cannot split: its chunks run in order on one
  // backend. Nor one that measures loudness: the writer's meter filters the
  // CPU's frames on from its own state, which the GPU's measured chunks do
  // not carry; kernels/cpu/loudness.hpp, add_measured.)
  if (!all_direct(on_cpu) || !all_direct(on_cuda) || plan.carries_state() ||
      measures_loudness(plan))
    return as_asked();
  plan = std::move(on_cuda);
  // The CPU works while the GPU starts (see make_hybrid_backend).
  return make_hybrid_backend(
      make_cpu_backend(), [] { return static_cast<int>(list_devices().size()); },
      [device] { return make_backend(BackendKind::cuda, device, nullptr); }, log);
}

} // namespace sigstream
