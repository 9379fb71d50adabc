#pragma once
// Helpers shared by the tests: temporary folders, fixture audio, float64
// reference convolution computed from the definition (SPEC §3).
#include <signal.h>
#include <sndfile.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "stages/types.hpp"

namespace sigstream::test {

// A fresh folder under the system temp dir, removed with the object.
class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("sigstream-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// A real child process (`sleep 600`) that lives as long as the object: a
// live writer for the temporary-file tests.
class LiveChild {
public:
  LiveChild() {
    char arg0[] = "sleep", arg1[] = "600";
    char* argv[] = {arg0, arg1, nullptr};
    if (posix_spawnp(&pid_, "sleep", nullptr, nullptr, argv, environ) != 0)
      throw std::runtime_error("cannot start 'sleep'");
  }
  ~LiveChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  LiveChild(const LiveChild&) = delete;
  LiveChild& operator=(const LiveChild&) = delete;
  [[nodiscard]] long pid() const { return pid_; }

private:
  pid_t pid_ = -1;
};

// The pid of a child process that has exited and been reaped (no process has
// it now, unless the system hands it out again at once).
inline long dead_pid() {
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  pid_t pid = -1;
  if (posix_spawnp(&pid, "true", nullptr, nullptr, argv, environ) != 0)
    throw std::runtime_error("cannot start 'true'");
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Interleaved samples of an audio file as float (libsndfile's normalisation,
// which for PCM is value / 2^(bits-1)) plus its header.
struct Audio {
  int rate = 0, channels = 0, format = 0;
  std::int64_t frames = 0;
  std::vector<float> samples;     // interleaved
  std::vector<std::int32_t> ints; // interleaved, left-justified int32 (PCM files)
};

inline Audio read_audio(const std::string& path) {
  SF_INFO info{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (f == nullptr)
    throw std::runtime_error("cannot open " + path + ": " + sf_strerror(nullptr));
  Audio a;
  a.rate = info.samplerate;
  a.channels = info.channels;
  a.frames = info.frames;
  a.format = info.format;
  a.samples.resize(static_cast<std::size_t>(info.frames * info.channels));
  sf_readf_float(f, a.samples.data(), info.frames);
  sf_seek(f, 0, SEEK_SET);
  a.ints.resize(a.samples.size());
  sf_readf_int(f, a.ints.data(), info.frames);
  sf_close(f);
  return a;
}

// Writes interleaved float samples; PCM subtypes are written from exact
// integers (value = round(x * 2^(bits-1))) so the fixture is what the test thinks.
inline void write_audio(const std::string& path, int format, int rate, int channels,
                        const std::vector<float>& interleaved) {
  SF_INFO info{};
  info.format = format;
  info.samplerate = rate;
  info.channels = channels;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr)
    throw std::runtime_error("cannot write " + path + ": " + sf_strerror(nullptr));
  const auto frames =
      static_cast<sf_count_t>(interleaved.size() / static_cast<std::size_t>(channels));
  int bits = 0;
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_16:
      bits = 16;
      break;
    case SF_FORMAT_PCM_24:
      bits = 24;
      break;
    case SF_FORMAT_PCM_32:
      bits = 32;
      break;
    default:
      break;
  }
  if (bits == 0) {
    sf_writef_float(f, interleaved.data(), frames);
  } else {
    // libsndfile's own float->int write scales by 2^(bits-1)-1 and truncates:
    // write exact integers instead.
    std::vector<std::int32_t> q(interleaved.size());
    const double s = std::ldexp(1.0, bits - 1);
    for (std::size_t i = 0; i < q.size(); ++i) {
      const double v = std::clamp(std::nearbyint(interleaved[i] * s), -s, s - 1);
      q[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v))
                                       << (32 - bits));
    }
    sf_writef_int(f, q.data(), frames);
  }
  sf_close(f);
}

// Random samples in [-amp, amp), quantized to `bits` if non-zero (so PCM
// fixtures hold exactly these values).
inline std::vector<float> random_samples(std::size_t n, std::uint32_t seed, float amp = 0.9f,
                                         int bits = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-amp, amp);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = u(rng);
    if (bits > 0) {
      const double s = static_cast<double>(1u << (bits - 1));
      x = static_cast<float>(std::nearbyint(x * s) / s);
    }
  }
  return v;
}

inline std::vector<double> random_taps(int k, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> h(static_cast<std::size_t>(k));
  for (auto& x : h)
    x = u(rng) / k;
  return h;
}

// SPEC §3 from the definition, float64: full convolution then the mode's window.
inline std::vector<double> reference_fir(const std::vector<double>& x, const std::vector<double>& h,
                                         FirMode mode) {
  const auto n = static_cast<std::int64_t>(x.size());
  const auto k = static_cast<std::int64_t>(h.size());
  std::vector<double> full(static_cast<std::size_t>(n + k - 1), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      full[static_cast<std::size_t>(i + j)] +=
          x[static_cast<std::size_t>(i)] * h[static_cast<std::size_t>(j)];
  if (mode == FirMode::full)
    return full;
  const std::int64_t off = mode == FirMode::same ? (k - 1) / 2 : 0;
  return {full.begin() + off, full.begin() + off + n};
}

inline double rel_l2(const std::vector<double>& ref, const std::vector<double>& got) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    e += (got[i] - ref[i]) * (got[i] - ref[i]);
    r += ref[i] * ref[i];
  }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

// The same over n samples: float64 reference, float32 result (or both float32).
inline double rel_l2(const double* ref, const float* got, std::int64_t n) {
  double e = 0, r = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    e += d * d;
    r += ref[i] * ref[i];
  }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}
inline double rel_l2(const float* ref, const float* got, std::int64_t n) {
  const std::vector<double> r(ref, ref + n);
  return rel_l2(r.data(), got, n);
}

} // namespace sigstream::test
