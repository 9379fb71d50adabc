// Backend selection: the one place that knows whether CUDA was built.
#include "core/error.hpp"
#include "pipeline/pipeline.hpp"

#ifdef SIGSTREAM_HAVE_CUDA
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

std::vector<DeviceDescription> list_devices() {
  std::vector<DeviceDescription> out;
#ifdef SIGSTREAM_HAVE_CUDA
  for (const CudaDeviceInfo& d : cuda_devices())
    out.push_back({d.ordinal, d.name, d.memory_bytes, d.major, d.minor, d.multiprocessors});
#endif
  return out;
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device,
                                      const std::function<void(const std::string&)>& log) {
  if (kind == BackendKind::cpu) return make_cpu_backend();
  const auto devices = list_devices();
  if (kind == BackendKind::cuda) {
    if (!cuda_built())
      throw Error(ErrorKind::cuda,
                  "backend 'cuda': this sigstream was built without CUDA (no nvcc at build time); "
                  "use --backend cpu");
    if (devices.empty())
      throw Error(ErrorKind::cuda, "backend 'cuda': no CUDA device found (use --backend cpu or auto)");
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

}  // namespace sigstream
