#pragma once
// Error checking for the CUDA runtime and cuFFT: every runtime call goes
// through SIGSTREAM_CUDA_TRY, every cuFFT call through SIGSTREAM_CUFFT_TRY,
// every kernel launch is followed by SIGSTREAM_CUDA_CHECK_LAUNCH. A failure
// throws sigstream::Error(ErrorKind::cuda) with
// "file:line: expression: cudaErrorName: description" (or the cufftResult name);
// out of memory (cudaErrorMemoryAllocation, CUFFT_ALLOC_FAILED) is ErrorKind::cuda_memory.
//
// Defining SIGSTREAM_CUDA_SYNC_LAUNCHES (debug builds) also synchronises the
// device after each launch, so an asynchronous fault names the launch that
// caused it. Never define it for timing.
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "core/error.hpp"

namespace sigstream::kernels::cuda {

// The file name without its directories: messages stay short and stable.
[[nodiscard]] constexpr const char* source_basename(const char* path) noexcept {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p)
    if (*p == '/' || *p == '\\')
      base = p + 1;
  return base;
}

[[nodiscard]] inline std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

// "file:line: expression: what".
[[nodiscard]] inline std::string failed_call(const char* file, int line, const char* expr,
                                             const std::string& what) {
  return std::string(source_basename(file)) + ":" + std::to_string(line) + ": " + expr + ": " +
         what;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expr, const char* file,
                                          int line) {
  throw Error(status == cudaErrorMemoryAllocation ? ErrorKind::cuda_memory : ErrorKind::cuda,
              failed_call(file, line, expr, cuda_error_text(status)));
}

inline void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess)
    throw_cuda_error(status, expr, file, line);
}

inline void check_launch(const char* what, const char* file, int line) {
  check_cuda(cudaGetLastError(), what, file, line);
#ifdef SIGSTREAM_CUDA_SYNC_LAUNCHES
  check_cuda(cudaDeviceSynchronize(), what, file, line);
#endif
}

// The cufftResult's enumerator name ("CUFFT_INVALID_SIZE"), or its number.
[[nodiscard]] inline std::string cufft_result_name(cufftResult status) {
  switch (status) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "cufftResult " + std::to_string(static_cast<int>(status));
  }
}

inline void check_cufft(cufftResult status, const char* expr, const char* file, int line) {
  if (status != CUFFT_SUCCESS)
    throw Error(status == CUFFT_ALLOC_FAILED ? ErrorKind::cuda_memory : ErrorKind::cuda,
                failed_call(file, line, expr, cufft_result_name(status)));
}

} // namespace sigstream::kernels::cuda

// Evaluates a cudaError_t expression; throws Error(cuda) unless cudaSuccess.
#define SIGSTREAM_CUDA_TRY(expr)                                                                   \
  ::sigstream::kernels::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)

// Evaluates a cufftResult expression; throws Error(cuda) unless CUFFT_SUCCESS.
#define SIGSTREAM_CUFFT_TRY(expr)                                                                  \
  ::sigstream::kernels::cuda::check_cufft((expr), #expr, __FILE__, __LINE__)

// After a kernel launch: reports a launch failure (bad configuration, too much
// shared memory, no kernel image for the device) as Error(cuda) naming `name`.
#define SIGSTREAM_CUDA_CHECK_LAUNCH(name)                                                          \
  ::sigstream::kernels::cuda::check_launch("launch of " name, __FILE__, __LINE__)
