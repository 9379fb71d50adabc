#include "kernels/cuda/cufft_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/error.hpp"

namespace sigstream::kernels::cuda {

namespace {

// The soname of the cuFFT this was compiled against, then the copy in the
// toolkit it was built with (for machines where that folder is not on the
// loader's path).
void* open_cufft(std::string& tried) {
  const std::string soname = "libcufft.so." + std::to_string(CUFFT_VER_MAJOR);
  std::string candidates[] = {soname,
#ifdef SIGSTREAM_CUDA_LIBRARY_DIR
                              std::string(SIGSTREAM_CUDA_LIBRARY_DIR) + "/" + soname
#endif
  };
  for (const std::string& name : candidates) {
    if (name.empty())
      continue;
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return h;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (why != nullptr ? why : "not found");
  }
  return nullptr;
}

template <typename F> void bind(void* lib, F& fn, const char* symbol, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (fn == nullptr)
    missing += std::string(missing.empty() ? "" : ", ") + symbol;
}

} // namespace

const CufftApi& cufft() {
  static CufftApi api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    void* lib = open_cufft(tried);
    if (lib == nullptr) {
      failure = "cannot load cuFFT (needed by FFT stages on the GPU): " + tried;
      return;
    }
    std::string missing;
    bind(lib, api.create, "cufftCreate", missing);
    bind(lib, api.destroy, "cufftDestroy", missing);
    bind(lib, api.set_auto_allocation, "cufftSetAutoAllocation", missing);
    bind(lib, api.make_plan_many64, "cufftMakePlanMany64", missing);
    bind(lib, api.set_work_area, "cufftSetWorkArea", missing);
    bind(lib, api.set_stream, "cufftSetStream", missing);
    bind(lib, api.exec_r2c, "cufftExecR2C", missing);
    bind(lib, api.exec_c2r, "cufftExecC2R", missing);
    bind(lib, api.exec_d2z, "cufftExecD2Z", missing);
    if (!missing.empty())
      failure = "cuFFT library lacks " + missing;
  });
  if (!failure.empty())
    throw Error(ErrorKind::cuda, failure);
  return api;
}

} // namespace sigstream::kernels::cuda
