#pragma once
// cuFFT, loaded on first use (dlopen) rather than linked: loading libcufft
// costs every process ~6 ms (measured: an empty program linked with -lcufft
// starts in 7.0 ms instead of 0.8 ms), and only runs with an FFT stage on the
// GPU need it. cufft_api() throws Error(cuda) naming the library when it
// cannot be loaded; the types and constants still come from <cufft.h>.
#include <cufft.h>

namespace sigstream::kernels::cuda {

struct CufftApi {
  decltype(&::cufftCreate) create = nullptr;
  decltype(&::cufftDestroy) destroy = nullptr;
  decltype(&::cufftSetAutoAllocation) set_auto_allocation = nullptr;
  decltype(&::cufftMakePlanMany64) make_plan_many64 = nullptr;
  decltype(&::cufftSetWorkArea) set_work_area = nullptr;
  decltype(&::cufftSetStream) set_stream = nullptr;
  decltype(&::cufftExecR2C) exec_r2c = nullptr;
  decltype(&::cufftExecC2R) exec_c2r = nullptr;
  decltype(&::cufftExecD2Z) exec_d2z = nullptr;
};

// The loaded library's entry points (thread-safe; loaded once per process).
const CufftApi& cufft();

} // namespace sigstream::kernels::cuda
