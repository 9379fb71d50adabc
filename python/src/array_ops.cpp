// The CPU half of the array operations (array_ops.hpp): the CLI's kernels
// (kernels/cpu) on rows of a batch, split into pieces over a shared thread
// pool when the work is large enough to pay for the hand-off.
#include "array_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "core/thread_pool.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "kernels/cpu/reduce.hpp"
#include "kernels/cpu/resample.hpp"
#include "kernels/cpu/welch.hpp"
#include "pipeline/plan.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"
#include "stages/iir/iir.hpp"
#include "stages/resample/resample.hpp"

namespace sigstream::py {

namespace {

Error bad(const std::string& m) {
  return {ErrorKind::invalid_argument, m};
}

// Work below this many multiply-adds runs on the calling thread: a hand-off
// to the pool costs tens of microseconds, the budget of a small call.
constexpr double kParallelMinFma = 4e6;
// Outputs per piece, at least (FFT blocks and the kernels' vector loops want
// long runs).
constexpr std::int64_t kMinPieceOutputs = 16384;

ThreadPool& pool() {
  static ThreadPool p(hardware_threads());
  return p;
}

// Runs body(row, first, last) over every row cut into pieces of outputs
// [first, last), in parallel when `fma` (the call's work) is large.
void for_pieces(std::int64_t rows, std::int64_t n_out, double fma,
                const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& body) {
  if (rows == 0 || n_out == 0)
    return;
  const int threads = hardware_threads();
  if (fma < kParallelMinFma || threads == 1) {
    for (std::int64_t r = 0; r < rows; ++r)
      body(r, 0, n_out);
    return;
  }
  // Enough pieces for every thread, none shorter than kMinPieceOutputs.
  const std::int64_t want = ceil_div(static_cast<std::int64_t>(2 * threads), rows);
  const std::int64_t pieces =
      std::clamp<std::int64_t>(want, 1, std::max<std::int64_t>(1, n_out / kMinPieceOutputs));
  const std::int64_t per = ceil_div(n_out, pieces);
  const std::int64_t units = rows * pieces;
  const std::int64_t tasks = std::min<std::int64_t>(units, threads);
  run_tasks(pool(), tasks, [&](std::int64_t t) {
    for (std::int64_t u = t; u < units; u += tasks) {
      const std::int64_t r = u / pieces;
      const std::int64_t first = (u % pieces) * per;
      const std::int64_t last = std::min(n_out, first + per);
      if (first < last)
        body(r, first, last);
    }
  });
}

// The inputs [first, first + len) of the contract's virtual input (row data
// at lead .. lead + n - 1, zeros elsewhere): the row itself where it covers
// them, else a zero-padded copy in `scratch`.
const float* window_of(const float* row, std::int64_t n, std::int64_t lead, std::int64_t first,
                       std::int64_t len, std::vector<float>& scratch) {
  if (first >= lead && first + len <= lead + n)
    return row + (first - lead);
  scratch.assign(static_cast<std::size_t>(len), 0.0f);
  const std::int64_t a = std::max(first, lead);
  const std::int64_t b = std::min(first + len, lead + n);
  if (a < b)
    std::memcpy(scratch.data() + (a - first), row + (a - lead),
                static_cast<std::size_t>(b - a) * sizeof(float));
  return scratch.data();
}

// The FFT filter of these taps, built once (its spectra cost K log K, which
// a stream's chunks or a loop of calls with one filter should not pay each
// time). FirFft::apply is const: one object serves every thread.
std::shared_ptr<const kernels::cpu::FirFft> cpu_fft(const std::vector<double>& h,
                                                    const std::vector<float>& hf) {
  static std::mutex mutex;
  static std::map<std::vector<double>, std::shared_ptr<const kernels::cpu::FirFft>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(h);
  if (it != cache.end())
    return it->second;
  if (cache.size() >= 16)
    cache.clear(); // many one-off filters: start again
  auto fir = std::make_shared<const kernels::cpu::FirFft>(hf.data(), static_cast<int>(hf.size()));
  cache.emplace(h, fir);
  return fir;
}

} // namespace

Mode parse_mode(std::string_view t) {
  if (t == "causal")
    return Mode::causal;
  if (t == "same")
    return Mode::same;
  if (t == "full")
    return Mode::full;
  if (t == "valid")
    return Mode::valid;
  throw bad("mode must be 'causal', 'same', 'full' or 'valid' (got '" + std::string(t) + "')");
}

FirMethod parse_method(std::string_view t) {
  if (t == "auto")
    return FirMethod::automatic;
  if (t == "direct")
    return FirMethod::direct;
  if (t == "fft")
    return FirMethod::fft;
  throw bad("method must be 'auto', 'direct' or 'fft' (got '" + std::string(t) + "')");
}

FirShape fir_shape(Mode mode, std::int64_t n, int taps) {
  const std::int64_t k = taps;
  switch (mode) {
    case Mode::causal:
      return {n, k - 1};
    case Mode::same:
      return {n, (k - 1) - (k - 1) / 2};
    case Mode::full:
      return {n + k - 1, k - 1};
    case Mode::valid:
      return {std::max<std::int64_t>(n - k + 1, 0), 0};
  }
  return {};
}

FirMethod resolve_method(FirMethod requested, bool cuda, int taps, std::int64_t n_out,
                         std::int64_t rows, CudaFftEngine engine) {
  if (requested != FirMethod::automatic)
    return requested;
  // A GPU launch covers the batch (channels = rows, at most 65535 a launch).
  return automatic_fir_method(
      cuda, taps, n_out, cuda ? static_cast<int>(std::min<std::int64_t>(rows, 65535)) : 1, engine);
}

void fir_cpu(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method, OutRows y) {
  if (h.empty())
    throw bad("taps must not be empty");
  const int k = static_cast<int>(h.size());
  const std::vector<float> hf(h.begin(), h.end());
  const FirShape shape = fir_shape(mode, x.n, k);
  const FirMethod m = resolve_method(method, false, k, shape.n_out, x.rows);
  std::shared_ptr<const kernels::cpu::FirFft> fft;
  if (m == FirMethod::fft)
    fft = cpu_fft(h, hf);
  const double fma = static_cast<double>(x.rows) * static_cast<double>(shape.n_out) *
                     (m == FirMethod::fft ? 64.0 : static_cast<double>(k));
  for_pieces(x.rows, shape.n_out, fma, [&](std::int64_t r, std::int64_t first, std::int64_t last) {
    thread_local std::vector<float> scratch;
    thread_local kernels::cpu::FirFft::Scratch fft_scratch;
    const float* row = x.x + r * x.stride;
    const float* in = window_of(row, x.n, shape.lead, first, last - first + k - 1, scratch);
    float* out = y.y + r * y.stride + first;
    if (fft)
      fft->apply(in, last - first, out, fft_scratch);
    else
      kernels::cpu::fir_direct(in, last - first, hf.data(), k, out);
  });
}

Resampler make_resampler(std::int64_t up, std::int64_t down, int half_taps_per_phase,
                         std::string_view window) {
  if (up < 1 || down < 1)
    throw bad("up and down must be >= 1 (got " + std::to_string(up) + ", " + std::to_string(down) +
              ")");
  if (half_taps_per_phase < 1 || half_taps_per_phase > kMaxHalfTapsPerPhase)
    throw bad("half_taps_per_phase must be in 1.." + std::to_string(kMaxHalfTapsPerPhase) +
              " (got " + std::to_string(half_taps_per_phase) + ")");
  // The stage's rule (stages/resample): reduced, then within the limit.
  const ReducedRatio ratio = reduce_ratio(up, down);
  Resampler r;
  r.up = ratio.up;
  r.down = ratio.down;
  if (!ratio.within_limit())
    throw bad("up/down reduce to " + std::to_string(r.up) + "/" + std::to_string(r.down) +
              ", above the limit of " + std::to_string(kMaxResampleFactor) +
              " (expected a ratio of smaller whole numbers)");
  WindowSpec w;
  try {
    w = parse_window(window);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  r.taps = resample_filter(r.up, r.down, half_taps_per_phase, w);
  return r;
}

std::int64_t resampled_length(const Resampler& r, std::int64_t n) {
  return ceil_div(n * r.up, r.down);
}

ResampleWindow resample_window(const Resampler& r, std::int64_t n) {
  const auto k = static_cast<std::int64_t>(r.taps.size());
  ResampleWindow w;
  w.delay = (k - 1) / 2;
  w.m_out = resampled_length(r, n);
  w.lo = floor_div(w.delay, r.up) - ceil_div(k, r.up) + 1;
  w.hi = w.m_out > 0 ? floor_div((w.m_out - 1) * r.down + w.delay, r.up) + 1 : w.lo;
  return w;
}

void resample_cpu(const Rows& x, const Resampler& r, OutRows y) {
  const ResampleWindow w = resample_window(r, x.n);
  const kernels::cpu::PolyphaseTaps p = kernels::cpu::make_polyphase(
      r.taps, static_cast<int>(r.up), static_cast<int>(r.down), w.delay);
  const std::int64_t m_out = w.m_out, lo = w.lo, hi = w.hi;
  if (m_out == 0 || x.rows == 0)
    return;
  std::vector<std::vector<float>> padded(static_cast<std::size_t>(x.rows));
  const double fma = static_cast<double>(x.rows) * static_cast<double>(m_out) *
                     static_cast<double>(p.longest_phase());
  // Pad each row once (pieces of a row share it), then resample the pieces.
  for_pieces(x.rows, 1, fma, [&](std::int64_t row, std::int64_t, std::int64_t) {
    std::vector<float>& v = padded[static_cast<std::size_t>(row)];
    v.assign(static_cast<std::size_t>(hi - lo), 0.0f);
    const std::int64_t a = std::max<std::int64_t>(lo, 0);
    const std::int64_t b = std::min<std::int64_t>(hi, x.n);
    if (a < b)
      std::memcpy(v.data() + (a - lo), x.x + row * x.stride + a,
                  static_cast<std::size_t>(b - a) * sizeof(float));
  });
  for_pieces(x.rows, m_out, fma, [&](std::int64_t row, std::int64_t first, std::int64_t last) {
    kernels::cpu::resample_direct(padded[static_cast<std::size_t>(row)].data(), lo,
                                  y.y + row * y.stride + first, first, last - first, p);
  });
}

std::vector<ChannelMetrics> metrics_cpu(const Rows& y, const float* reference,
                                        std::int64_t reference_stride) {
  std::vector<ChannelMetrics> out(static_cast<std::size_t>(y.rows));
  for_pieces(y.rows, 1, static_cast<double>(y.rows) * static_cast<double>(y.n) * 4.0,
             [&](std::int64_t r, std::int64_t, std::int64_t) {
               out[static_cast<std::size_t>(r)] = kernels::cpu::channel_metrics(
                   y.x + r * y.stride, reference ? reference + r * reference_stride : nullptr, y.n);
             });
  return out;
}

Spectrum spectrum_cpu(const Rows& x, double rate, int nfft, int noverlap, std::string_view window) {
  if (!(rate > 0.0) || !std::isfinite(rate))
    throw bad("rate must be a positive number of Hz");
  if (nfft < 1)
    throw bad("nfft must be >= 1 (got " + std::to_string(nfft) + ")");
  if (noverlap < 0 || noverlap >= nfft)
    throw bad("the overlap must leave a hop of at least one sample (noverlap " +
              std::to_string(noverlap) + ", nfft " + std::to_string(nfft) + ")");
  if (x.rows > 0 && x.n < nfft)
    throw bad("the signal has " + std::to_string(x.n) +
              " samples, fewer than nfft = " + std::to_string(nfft) + " (one segment)");
  WindowSpec spec;
  try {
    spec = parse_window(window);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  // get_window(..., fftbins=True): the symmetric window one longer, less its last point.
  std::vector<double> w = make_window(spec, nfft + 1);
  w.pop_back();
  const kernels::cpu::Welch welch(w, nfft - noverlap);
  Spectrum out;
  out.bins = welch.bins();
  out.freq_hz = welch.frequencies(rate);
  out.psd.assign(static_cast<std::size_t>(x.rows * out.bins), 0.0);
  const std::int64_t segments = x.rows > 0 ? (x.n - nfft) / welch.hop() + 1 : 0;
  for_pieces(x.rows, 1, static_cast<double>(x.rows) * static_cast<double>(segments) * nfft * 8.0,
             [&](std::int64_t r, std::int64_t, std::int64_t) {
               std::vector<double> power(static_cast<std::size_t>(out.bins), 0.0);
               const std::int64_t count = welch.add(x.x + r * x.stride, 0, x.n, 0, x.n, power);
               const std::vector<double> d = welch.density(power, count, rate);
               std::copy(d.begin(), d.end(), out.psd.begin() + r * out.bins);
             });
  return out;
}

std::vector<double> design(std::string_view kind, const std::vector<double>& cutoff_hz, double rate,
                           int taps, std::string_view window) {
  try {
    DesignSpec spec;
    spec.kind = parse_filter_kind(kind);
    spec.cutoff_hz = cutoff_hz;
    spec.taps = taps;
    spec.window = parse_window(window);
    return design_fir(spec, rate);
  } catch (const Error& e) {
    throw bad(e.what());
  }
}

std::vector<kernels::cpu::Biquad> sos_sections(const double* rows, std::size_t count) {
  std::vector<std::vector<double>> r;
  for (std::size_t k = 0; k < count; ++k)
    r.emplace_back(rows + 6 * k, rows + 6 * k + 6);
  return iir_sections(r, "sosfilt: sos");
}

} // namespace sigstream::py
