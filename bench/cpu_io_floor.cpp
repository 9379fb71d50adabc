// The I/O floor of a file job: read a file and write it again through
// libsndfile in 1 Mi-frame blocks, in its own sample type, with no processing.
// Usage: bench_cpu_io_floor IN OUT   (prints seconds and Mframes/s)
#include <sndfile.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  SF_INFO info{};
  SNDFILE* in = sf_open(argv[1], SFM_READ, &info);
  if (in == nullptr) {
    std::fprintf(stderr, "%s: %s\n", argv[1], sf_strerror(nullptr));
    return 1;
  }
  SF_INFO out_info = info;
  SNDFILE* out = sf_open(argv[2], SFM_WRITE, &out_info);
  if (out == nullptr) {
    std::fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(nullptr));
    return 1;
  }
  constexpr sf_count_t kBlock = 1 << 20;
  std::vector<short> buf(static_cast<std::size_t>(kBlock * info.channels));
  sf_count_t total = 0;
  for (;;) {
    const sf_count_t n = sf_readf_short(in, buf.data(), kBlock);
    if (n <= 0)
      break;
    sf_writef_short(out, buf.data(), n);
    total += n;
  }
  sf_close(in);
  sf_close(out);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("io floor: %lld frames in %.3f s (%.1f Mframes/s)\n", static_cast<long long>(total),
              s, static_cast<double>(total) / s * 1e-6);
  return 0;
}
