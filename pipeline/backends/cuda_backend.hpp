#pragma once
// The CUDA backend (pipeline/backends/cuda_backend.cu): chunks on S lanes
// (streams), each with its own pinned host and device buffers, allocated once
// in prepare(). Plain C++ header: callers need no CUDA headers.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/backends/backend.hpp"

namespace sigstream {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int major = 0;
  int minor = 0;
  int multiprocessors = 0;
};

// The CUDA devices visible to this process, in ordinal order. Empty when
// there is no driver, no device, or the runtime fails; never throws.
std::vector<CudaDeviceInfo> cuda_devices();

// A CUDA backend for BackendOptions::device. Creating it touches no device;
// prepare() selects the device and allocates (Error(cuda) on failure).
std::unique_ptr<Backend> make_cuda_backend();

// Creates the CUDA context of each device, all at once (a thread each), so
// that a batch's workers find them made rather than each waiting in turn.
// Errors are left to the backends' own calls (they report them with context).
void cuda_start_devices(const std::vector<int>& devices);

} // namespace sigstream
