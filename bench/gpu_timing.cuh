#pragma once
// The GPU benchmarks' clock: the median of `reps` runs of work() on `stream`,
// each between two CUDA events, after one untimed warm-up run (and whatever
// it queued) has finished. Milliseconds.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/resources.hpp"

namespace sigstream::bench {

template <typename Work> double median_ms(cudaStream_t stream, int reps, Work&& work) {
  auto start = kernels::cuda::Event::create(true);
  auto stop = kernels::cuda::Event::create(true);
  work();
  SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

} // namespace sigstream::bench
