// The live-latency harness's clock (issue P5), in C++ so that the harness
// does not add its own tail: a paced producer and a timestamping consumer
// around one filter process.
//
//   bench_live_pace --seconds 120 --rate 48000 --channels 2 --block 48 \
//       [--in-frame-bytes 4] [--out-frame-bytes 4] [--stderr FILE] [--spin] -- CMD ARGS...
//
// The producer writes one block of raw s16le (a fixed noise pattern) into
// CMD's stdin at each multiple of block/rate seconds (absolute deadlines,
// clock_nanosleep) and records when each write returned; the consumer reads
// CMD's stdout and records when each read returned and how many bytes came
// before it. Latency of a read = its return time - the return time of the
// write that held its earliest frame (causal filters; a filter's own group
// delay is not charged). Both threads ask for SCHED_FIFO 70 and lock their
// memory where the system grants it (like a sound card's interrupt, they
// outrank the filter), and say in the output whether they got it.
//
// --spin: the producer spins to each deadline and the consumer polls its
// pipe without sleeping (no real-time priority then: a spinning real-time
// thread would starve its CPU). On a virtual machine a thread that sleeps
// between blocks is woken late when its vCPU has halted, and a consumer
// woken late inside its read holds the pipe's lock, which stalls the
// filter's next write; spinning keeps the harness's own stalls out of the
// filter's numbers.
//
// Prints one JSON object on stdout: quantiles of the latency in ms, frames
// in and out, the child's CPU seconds, its exit status.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool raise_priority() {
  sched_param sp{};
  sp.sched_priority = 70;
  return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
}

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "bench_live_pace: %s\n", m.c_str());
  std::exit(2);
}

struct Read {
  std::int64_t t_ns;
  std::int64_t bytes_before;
};

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty())
    return std::nan("");
  const auto i = static_cast<std::size_t>(
      std::clamp<double>(std::ceil(q * static_cast<double>(sorted.size())) - 1, 0,
                         static_cast<double>(sorted.size() - 1)));
  return sorted[i];
}

} // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  int rate = 48000, channels = 2, block = 48, in_frame = 0, out_frame = 0;
  std::string err_path = "/dev/null";
  bool spin = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--spin") {
      spin = true;
      continue;
    }
    if (i + 1 >= argc)
      die("missing value for " + a);
    const char* v = argv[++i];
    if (a == "--seconds")
      seconds = std::atof(v);
    else if (a == "--rate")
      rate = std::atoi(v);
    else if (a == "--channels")
      channels = std::atoi(v);
    else if (a == "--block")
      block = std::atoi(v);
    else if (a == "--in-frame-bytes")
      in_frame = std::atoi(v);
    else if (a == "--out-frame-bytes")
      out_frame = std::atoi(v);
    else if (a == "--stderr")
      err_path = v;
    else
      die("unknown option " + a);
  }
  if (i >= argc)
    die("no command after --");
  if (rate <= 0 || channels <= 0 || block <= 0 || seconds <= 0)
    die("rate, channels, block and seconds must be > 0");
  if (in_frame == 0)
    in_frame = 2 * channels;
  if (out_frame == 0)
    out_frame = in_frame;

  const auto n_writes = static_cast<std::int64_t>(seconds * rate / block);
  const auto write_bytes = static_cast<std::size_t>(block) * static_cast<std::size_t>(in_frame);
  std::vector<std::int16_t> payload(write_bytes / 2);
  for (std::size_t k = 0; k < payload.size(); ++k)
    payload[k] = static_cast<std::int16_t>((k * 7919) % 2001) - 1000;
  std::vector<std::int64_t> write_done(static_cast<std::size_t>(n_writes), 0);
  std::vector<Read> reads;
  reads.reserve(static_cast<std::size_t>(n_writes) * 2 + 1024);

  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0)
    die("pipe: " + std::string(std::strerror(errno)));
  signal(SIGPIPE, SIG_IGN);
  const pid_t child = fork();
  if (child < 0)
    die("fork: " + std::string(std::strerror(errno)));
  if (child == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    if (err >= 0)
      dup2(err, 2);
    for (const int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err})
      if (fd > 2)
        close(fd);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "exec %s: %s\n", argv[i], std::strerror(errno));
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  const bool locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;

  bool consumer_rt = false;
  if (spin)
    static_cast<void>(fcntl(out_pipe[0], F_SETFL, fcntl(out_pipe[0], F_GETFL) | O_NONBLOCK));
  std::thread consumer([&] {
    consumer_rt = spin || raise_priority();
    std::vector<char> buf(1 << 16);
    std::int64_t total = 0;
    for (;;) {
      const ssize_t got = read(out_pipe[0], buf.data(), buf.size());
      const std::int64_t t = now_ns();
      if (got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (got <= 0)
        break;
      reads.push_back({t, total});
      total += got;
    }
    reads.push_back({now_ns(), total}); // the end: total bytes
  });

  const bool producer_rt = spin || raise_priority();
  timespec pause{0, 500000000};
  nanosleep(&pause, nullptr); // let the filter start (config, plans, devices) before the clock runs
  const std::int64_t period_num = static_cast<std::int64_t>(block) * 1000000000; // ns * rate
  const std::int64_t t0 = now_ns();
  std::int64_t written = 0;
  for (std::int64_t w = 0; w < n_writes; ++w) {
    const std::int64_t deadline = t0 + w * period_num / rate;
    timespec ts{static_cast<time_t>(deadline / 1000000000),
                static_cast<long>(deadline % 1000000000)};
    if (spin) {
      while (now_ns() < deadline) {
      }
    } else {
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
    }
    const auto* p = reinterpret_cast<const char*>(payload.data());
    std::size_t left = write_bytes;
    bool broken = false;
    while (left > 0) {
      const ssize_t n = write(in_pipe[1], p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        broken = true;
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    if (broken)
      break;
    write_done[static_cast<std::size_t>(w)] = now_ns();
    ++written;
  }
  close(in_pipe[1]);
  consumer.join();
  int status = 0;
  rusage ru{};
  wait4(child, &status, 0, &ru);
  const double cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  const double wall_s = static_cast<double>(now_ns() - t0) * 1e-9;

  std::vector<double> lat;
  lat.reserve(reads.size());
  for (std::size_t r = 0; r + 1 < reads.size(); ++r) {
    const std::int64_t frame = reads[r].bytes_before / out_frame;
    const std::int64_t w = frame / block;
    if (w < written && write_done[static_cast<std::size_t>(w)] > 0)
      lat.push_back(static_cast<double>(reads[r].t_ns - write_done[static_cast<std::size_t>(w)]) *
                    1e-6);
  }
  std::sort(lat.begin(), lat.end());
  const std::int64_t bytes_out = reads.empty() ? 0 : reads.back().bytes_before;
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // Python's json reads NaN (no reads at all), not C's "nan".
  auto num = [](double v) { return std::isnan(v) ? std::string("NaN") : std::to_string(v); };
  std::printf(
      "{\"p50\": %s, \"p99\": %s, \"p999\": %s, \"max\": %s, \"reads\": %zu, \"frames_in\": %lld, "
      "\"frames_out\": %lld, \"cpu_s\": %.6f, \"wall_s\": %.6f, \"exit\": %d, \"harness_rt\": %s, "
      "\"harness_mlock\": %s, \"harness_spin\": %s}\n",
      num(quantile(lat, 0.5)).c_str(), num(quantile(lat, 0.99)).c_str(),
      num(quantile(lat, 0.999)).c_str(), num(lat.empty() ? std::nan("") : lat.back()).c_str(),
      lat.size(), static_cast<long long>(written * block),
      static_cast<long long>(bytes_out / out_frame), cpu_s, wall_s, rc,
      !spin && producer_rt && consumer_rt ? "true" : "false", locked ? "true" : "false",
      spin ? "true" : "false");
  return 0;
}
