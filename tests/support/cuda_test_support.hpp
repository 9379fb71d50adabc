#pragma once
// What the GPU tests share: whether a device is there to test on.
#include <cuda_runtime.h>

namespace sigstream::test {

// True when a CUDA device is usable; GPU tests GTEST_SKIP() otherwise.
inline bool have_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    static_cast<void>(cudaGetLastError()); // clear the sticky "no device" error
    return false;
  }
  return n > 0;
}

} // namespace sigstream::test
