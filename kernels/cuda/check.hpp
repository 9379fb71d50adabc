#pragma once
// Error checking for the CUDA runtime: every call goes through
// SIGSTREAM_CUDA_TRY, every kernel launch is followed by
// SIGSTREAM_CUDA_CHECK_LAUNCH. A failure throws sigstream::Error(ErrorKind::cuda)
// with "file:line: expression: cudaErrorName: description".
//
// Defining SIGSTREAM_CUDA_SYNC_LAUNCHES (debug builds) also synchronises the
// device after each launch, so an asynchronous fault names the launch that
// caused it. Never define it for timing.
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace sigstream::kernels::cuda {

// The file name without its directories: messages stay short and stable.
[[nodiscard]] constexpr const char* source_basename(const char* path) noexcept {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p)
    if (*p == '/' || *p == '\\') base = p + 1;
  return base;
}

[[nodiscard]] inline std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expr, const char* file,
                                          int line) {
  throw Error(ErrorKind::cuda, std::string(source_basename(file)) + ":" + std::to_string(line) +
                                   ": " + expr + ": " + cuda_error_text(status));
}

inline void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expr, file, line);
}

inline void check_launch(const char* what, const char* file, int line) {
  check_cuda(cudaGetLastError(), what, file, line);
#ifdef SIGSTREAM_CUDA_SYNC_LAUNCHES
  check_cuda(cudaDeviceSynchronize(), what, file, line);
#endif
}

}  // namespace sigstream::kernels::cuda

// Evaluates a cudaError_t expression; throws Error(cuda) unless cudaSuccess.
#define SIGSTREAM_CUDA_TRY(expr) \
  ::sigstream::kernels::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)

// After a kernel launch: reports a launch failure (bad configuration, too much
// shared memory, no kernel image for the device) as Error(cuda) naming `name`.
#define SIGSTREAM_CUDA_CHECK_LAUNCH(name) \
  ::sigstream::kernels::cuda::check_launch("launch of " name, __FILE__, __LINE__)
