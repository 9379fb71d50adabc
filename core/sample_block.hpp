#pragma once
// Interleaved audio samples in the narrowest form the file gives or wants, so
// that no stage of the flow moves more bytes than the file holds.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sigstream {

// i16: 8/16-bit PCM, left-justified in int16 (value / 2^15 is the float sample).
// i32: 24/32-bit PCM, left-justified in int32 (value / 2^31 is the float sample).
// f32: float samples (float/double/compressed files).
enum class SampleType { i16, i32, f32 };

[[nodiscard]] constexpr std::size_t sample_bytes(SampleType t) noexcept {
  return t == SampleType::i16 ? 2 : 4;
}

// A block of interleaved frames. `data` owns (or shares) the memory, which a
// backend may have allocated (pinned host memory for CUDA); `capacity` frames fit.
struct HostBlock {
  SampleType type = SampleType::f32;
  int channels = 0;
  std::int64_t frames = 0;   // frames in use
  std::int64_t capacity = 0; // frames that fit
  std::shared_ptr<std::byte> data;
  bool pinned = false; // page-locked (CUDA copies it asynchronously)

  template <typename T> [[nodiscard]] T* as() const noexcept {
    return reinterpret_cast<T*>(data.get());
  }
  [[nodiscard]] std::size_t bytes() const noexcept {
    return static_cast<std::size_t>(frames) * static_cast<std::size_t>(channels) *
           sample_bytes(type);
  }
};

// A block of ordinary (pageable) host memory for `frames` frames, 64-byte
// aligned; frames in use 0. Throws std::bad_alloc.
[[nodiscard]] HostBlock make_host_block(SampleType type, int channels, std::int64_t frames);

} // namespace sigstream
