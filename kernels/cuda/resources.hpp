#pragma once
// Move-only owners of CUDA resources: streams, events, device memory and
// pinned host memory. Constructors that acquire throw Error(cuda) (through
// SIGSTREAM_CUDA_TRY); destructors never throw (a failure to release is
// ignored: at process exit the runtime may already be gone). A default-
// constructed or moved-from owner holds nothing.
//
// Resources belong to the device that was current when they were created;
// callers select the device (cudaSetDevice) first.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/memory_cache.hpp"

namespace sigstream::kernels::cuda {

// A non-blocking stream (never synchronises with the legacy default stream).
class Stream {
public:
  Stream() noexcept = default;
  [[nodiscard]] static Stream create() {
    Stream s;
    SIGSTREAM_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking));
    return s;
  }
  ~Stream() { reset(); }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      reset();
      stream_ = std::exchange(o.stream_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  // Blocks the calling thread until the stream's work is done.
  void synchronize() const { SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(stream_)); }

private:
  void reset() noexcept {
    if (stream_ != nullptr)
      static_cast<void>(cudaStreamDestroy(stream_));
    stream_ = nullptr;
  }
  cudaStream_t stream_ = nullptr;
};

// An event. By default timing is disabled (the cheapest event); `timing`
// enables cudaEventElapsedTime, `blocking_sync` makes waiting threads sleep
// instead of spinning.
class Event {
public:
  Event() noexcept = default;
  [[nodiscard]] static Event create(bool timing = false, bool blocking_sync = false) {
    Event e;
    unsigned flags = timing ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking_sync)
      flags |= cudaEventBlockingSync;
    SIGSTREAM_CUDA_TRY(cudaEventCreateWithFlags(&e.event_, flags));
    return e;
  }
  ~Event() { reset(); }
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      reset();
      event_ = std::exchange(o.event_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) const { SIGSTREAM_CUDA_TRY(cudaEventRecord(event_, stream)); }
  void synchronize() const { SIGSTREAM_CUDA_TRY(cudaEventSynchronize(event_)); }
  // Milliseconds from `start` to this event (both recorded, both timing events).
  [[nodiscard]] float elapsed_ms_since(const Event& start) const {
    float ms = 0.0f;
    SIGSTREAM_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

private:
  void reset() noexcept {
    if (event_ != nullptr)
      static_cast<void>(cudaEventDestroy(event_));
    event_ = nullptr;
  }
  cudaEvent_t event_ = nullptr;
};

// `count` elements of T in device memory (from the process-wide cache of
// memory_cache.hpp, so freeing needs the device's work on it finished;
// uninitialised).
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() noexcept = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) {
      SIGSTREAM_CUDA_TRY(cudaGetDevice(&device_));
      data_ = static_cast<T*>(device_alloc(device_, bytes()));
    }
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)),
        device_(o.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
      device_ = o.device_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return count_ * sizeof(T); }

private:
  void reset() noexcept {
    if (data_ != nullptr)
      device_free(device_, data_, bytes());
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0; // where it was allocated (the cache is per device)
};

// `count` elements of T in page-locked host memory (memory_cache.hpp, portable:
// pinned for every device's context; uninitialised).
template <typename T> class PinnedBuffer {
public:
  PinnedBuffer() noexcept = default;
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count_ > 0)
      data_ = static_cast<T*>(pinned_alloc(bytes()));
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return data_[i]; }

private:
  void reset() noexcept {
    if (data_ != nullptr)
      pinned_free(data_, bytes());
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// `count` host values' copy on the current device, there when this returns:
// copied on a stream of its own and waited for, once (a pageable cudaMemcpy
// may return before its DMA lands, and the lanes' non-blocking streams do
// not wait for the legacy stream). For a step's constants (taps, gains).
template <typename T> DeviceBuffer<T> upload_and_wait(const T* host, std::size_t count) {
  DeviceBuffer<T> d(count);
  if (count == 0)
    return d;
  const Stream s = Stream::create();
  SIGSTREAM_CUDA_TRY(
      cudaMemcpyAsync(d.data(), host, count * sizeof(T), cudaMemcpyHostToDevice, s.get()));
  s.synchronize();
  return d;
}

} // namespace sigstream::kernels::cuda
