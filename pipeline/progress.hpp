#pragma once
// A one-line progress bar on stderr: frames done, throughput, ETA.
#include <chrono>
#include <cstdint>
#include <string>

namespace sigstream {

class Progress {
public:
  // Draws only when `enabled` and stderr is a terminal. `total_frames` 0 =
  // unknown (a stream): frames, throughput and real-time factor, no ETA.
  Progress(std::int64_t total_frames, double sample_rate, bool enabled);
  void update(std::int64_t frames_done);
  void finish(); // clears the line

private:
  void draw(std::int64_t done);
  std::int64_t total_;
  double rate_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

} // namespace sigstream
