#include "pipeline/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace sigstream {

Progress::Progress(std::int64_t total_frames, double sample_rate, bool enabled)
    : total_(total_frames), rate_(sample_rate), enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::update(std::int64_t done) {
  if (!enabled_)
    return;
  const auto now = std::chrono::steady_clock::now();
  if ((total_ <= 0 || done < total_) && now - last_ < std::chrono::milliseconds(100))
    return;
  last_ = now;
  draw(done);
}

void Progress::draw(std::int64_t done) {
  constexpr int kWidth = 30;
  if (total_ <= 0) {
    // A stream: no end to measure against, so no bar and no ETA.
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double fps = secs > 0 ? static_cast<double>(done) / secs : 0.0;
    std::fprintf(stderr, "\r%.2f Mframes  %.1f Mframes/s (%.1fx real time) ",
                 static_cast<double>(done) * 1e-6, fps * 1e-6, rate_ > 0 ? fps / rate_ : 0.0);
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  const double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fps = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  const double eta = fps > 0 ? static_cast<double>(total_ - done) / fps : 0.0;
  char bar[kWidth + 1];
  const int filled = static_cast<int>(frac * kWidth);
  for (int i = 0; i < kWidth; ++i)
    bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  std::fprintf(stderr,
               "\r[%s] %3.0f%%  %.2f/%.2f Mframes  %.1f Mframes/s (%.0fx real time)  ETA %.0f s ",
               bar, frac * 100.0, static_cast<double>(done) * 1e-6,
               static_cast<double>(total_) * 1e-6, fps * 1e-6, rate_ > 0 ? fps / rate_ : 0.0, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!drawn_)
    return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

} // namespace sigstream
