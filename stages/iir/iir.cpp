// The iir kind: its sections (RBJ biquads designed here, inline or from a
// file), the stability check, the CPU step that carries the state from one
// call to the next (which live mode runs too: stages/step_live.hpp), and its
// statistics.
#include "stages/iir/iir.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <fstream>
#include <mutex>
#include <numbers>
#include <ostream>
#include <sstream>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"

namespace sigstream {

using kernels::cpu::Biquad;

std::string_view to_string(BiquadKind k) {
  switch (k) {
    case BiquadKind::lowpass:
      return "lowpass";
    case BiquadKind::highpass:
      return "highpass";
    case BiquadKind::bandpass:
      return "bandpass";
    case BiquadKind::notch:
      return "notch";
    case BiquadKind::allpass:
      return "allpass";
    case BiquadKind::peaking:
      return "peaking";
    case BiquadKind::lowshelf:
      return "lowshelf";
    case BiquadKind::highshelf:
      return "highshelf";
  }
  return "unknown";
}

std::string_view to_string(IirFamily f) {
  switch (f) {
    case IirFamily::butter:
      return "butter";
    case IirFamily::cheby1:
      return "cheby1";
    case IirFamily::cheby2:
      return "cheby2";
    case IirFamily::ellip:
      return "ellip";
    case IirFamily::bessel:
      return "bessel";
  }
  return "unknown";
}

Biquad rbj_biquad(const BiquadSpec& b, double rate) {
  // Robert Bristow-Johnson's Audio EQ Cookbook, each section's b and a, then / a0.
  const double w0 = 2.0 * std::numbers::pi * b.freq_hz / rate;
  const double cw = std::cos(w0);
  const double alpha = std::sin(w0) / (2.0 * b.q);
  const double A = std::pow(10.0, b.gain_db / 40.0);
  const double sa = 2.0 * std::sqrt(A) * alpha;
  double b0 = 0, b1 = 0, b2 = 0, a0 = 1.0 + alpha, a1 = -2.0 * cw, a2 = 1.0 - alpha;
  switch (b.kind) {
    case BiquadKind::lowpass:
      b0 = b2 = (1.0 - cw) / 2.0;
      b1 = 1.0 - cw;
      break;
    case BiquadKind::highpass:
      b0 = b2 = (1.0 + cw) / 2.0;
      b1 = -(1.0 + cw);
      break;
    case BiquadKind::bandpass:
      b0 = alpha;
      b2 = -alpha;
      break;
    case BiquadKind::notch:
      b0 = b2 = 1.0;
      b1 = -2.0 * cw;
      break;
    case BiquadKind::allpass:
      b0 = 1.0 - alpha;
      b1 = -2.0 * cw;
      b2 = 1.0 + alpha;
      break;
    case BiquadKind::peaking:
      b0 = 1.0 + alpha * A;
      b1 = -2.0 * cw;
      b2 = 1.0 - alpha * A;
      a0 = 1.0 + alpha / A;
      a2 = 1.0 - alpha / A;
      break;
    case BiquadKind::lowshelf:
      b0 = A * ((A + 1) - (A - 1) * cw + sa);
      b1 = 2 * A * ((A - 1) - (A + 1) * cw);
      b2 = A * ((A + 1) - (A - 1) * cw - sa);
      a0 = (A + 1) + (A - 1) * cw + sa;
      a1 = -2 * ((A - 1) + (A + 1) * cw);
      a2 = (A + 1) + (A - 1) * cw - sa;
      break;
    case BiquadKind::highshelf:
      b0 = A * ((A + 1) + (A - 1) * cw + sa);
      b1 = -2 * A * ((A - 1) + (A + 1) * cw);
      b2 = A * ((A + 1) + (A - 1) * cw - sa);
      a0 = (A + 1) - (A - 1) * cw + sa;
      a1 = 2 * ((A - 1) - (A + 1) * cw);
      a2 = (A + 1) - (A - 1) * cw - sa;
      break;
  }
  return {b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0};
}

std::vector<Biquad> iir_sections(const std::vector<std::vector<double>>& rows,
                                 const std::string& where) {
  std::vector<Biquad> out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::vector<double>& r = rows[k];
    if (r.size() != 6)
      throw config_error(where + ": section " + std::to_string(k) + " has " +
                         std::to_string(r.size()) + " numbers (expected b0 b1 b2 a0 a1 a2)");
    for (double v : r)
      if (!std::isfinite(v))
        throw config_error(where + ": section " + std::to_string(k) +
                           " has a coefficient that is not finite");
    if (r[3] == 0.0)
      throw config_error(where + ": section " + std::to_string(k) + " has a0 = 0");
    out.push_back({r[0] / r[3], r[1] / r[3], r[2] / r[3], r[4] / r[3], r[5] / r[3]});
  }
  return out;
}

namespace {

std::vector<std::vector<double>> read_sos_file(const std::string& path, const std::string& where) {
  std::ifstream in(path);
  if (!in)
    throw config_error(where + ": cannot open the sos file " + path);
  std::vector<std::vector<double>> rows;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos)
      line.erase(hash);
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream words(line);
    std::vector<double> row;
    std::string w;
    while (words >> w) {
      try {
        std::size_t used = 0;
        row.push_back(std::stod(w, &used));
        if (used != w.size())
          throw std::invalid_argument(w);
      } catch (const std::exception&) {
        throw config_error(where + ": " + path + ":" + std::to_string(line_no) + ": '" + w +
                           "' is not a number");
      }
    }
    if (row.empty())
      continue;
    if (row.size() != 6)
      throw config_error(where + ": " + path + ":" + std::to_string(line_no) + ": " +
                         std::to_string(row.size()) + " numbers (expected six: b0 b1 b2 a0 a1 a2)");
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw config_error(where + ": the sos file " + path + " has no sections");
  if (rows.size() > static_cast<std::size_t>(kMaxIirSections))
    throw config_error(where + ": the sos file " + path + " has " + std::to_string(rows.size()) +
                       " sections (at most " + std::to_string(kMaxIirSections) + ")");
  return rows;
}

// The larger pole radius of 1 + a1 z^-1 + a2 z^-2.
double pole_radius(const Biquad& s) {
  const std::complex<double> d = std::sqrt(std::complex<double>(s.a1 * s.a1 - 4.0 * s.a2));
  return std::max(std::abs((-s.a1 + d) / 2.0), std::abs((-s.a1 - d) / 2.0));
}

// The cascade's state and the outputs of its last call, per channel, in T:
// the frames one call asks for start where the last call's did or later,
// and may reach back before the frames computed so far (a later stage's
// halo); those come from the history.
template <typename T> class Runner {
public:
  void run(std::span<const Biquad> s, std::span<const T* const> x, std::int64_t x_first,
           std::span<T* const> y, std::int64_t y_first, std::int64_t n, const std::string& name) {
    if (state_.empty()) {
      state_.assign(y.size(), std::vector<double>(2 * s.size(), 0.0));
      history_.assign(y.size(), {});
    }
    if (y_first < history_lo_ || y_first > frontier_)
      throw internal_error("iir stage '" + name + "': frames from " + std::to_string(y_first) +
                           " asked for after " + std::to_string(history_lo_) + ".." +
                           std::to_string(frontier_) + " (its chunks must come in order)");
    const std::int64_t end = y_first + n;
    const std::int64_t kept_to = std::min(end, frontier_);
    for (std::size_t c = 0; c < y.size(); ++c) {
      const std::vector<T>& h = history_[c];
      std::copy(h.begin() + (y_first - history_lo_), h.begin() + (kept_to - history_lo_), y[c]);
    }
    if (end > frontier_) {
      // The new frames, every channel at once (their recursions side by side).
      xs_.clear();
      ys_.clear();
      zs_.clear();
      for (std::size_t c = 0; c < y.size(); ++c) {
        xs_.push_back(x[c] + (frontier_ - x_first));
        ys_.push_back(y[c] + (frontier_ - y_first));
        zs_.push_back(state_[c].data());
      }
      kernels::cpu::sosfilt(s, std::span<double* const>(zs_), std::span<const T* const>(xs_),
                            std::span<T* const>(ys_), end - frontier_);
    }
    for (std::size_t c = 0; c < y.size(); ++c) {
      // Keep [y_first, max(end, frontier)): the next call starts here or later.
      std::vector<T>& h = history_[c];
      h.erase(h.begin(), h.begin() + (y_first - history_lo_));
      if (end > frontier_)
        h.insert(h.end(), y[c] + (frontier_ - y_first), y[c] + n);
    }
    history_lo_ = y_first;
    frontier_ = std::max(frontier_, end);
  }

private:
  std::vector<std::vector<double>> state_;
  std::vector<std::vector<T>> history_; // frames [history_lo_, frontier_)
  std::vector<const T*> xs_;
  std::vector<T*> ys_;
  std::vector<double*> zs_;
  std::int64_t history_lo_ = 0, frontier_ = 0;
};

class IirStep final : public CpuStageStep {
public:
  explicit IirStep(const PlannedStage& st) : name_(st.name), sections_(st.as<IirPlan>().sections) {}
  [[nodiscard]] std::string describe() const override {
    return "iir '" + name_ + "': " + std::to_string(sections_.size()) +
           " section(s), state carried in order";
  }
  void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
           std::int64_t y_first, std::int64_t n, StepScratch* /*scratch*/) const override {
    std::lock_guard lock(mutex_);
    f32_.run(sections_, x, x_first, y, y_first, n, name_);
  }
  void run(std::span<const double* const> x, std::int64_t x_first, std::span<double* const> y,
           std::int64_t y_first, std::int64_t n) const override {
    std::lock_guard lock(mutex_);
    f64_.run(sections_, x, x_first, y, y_first, n, name_);
  }

private:
  std::string name_;
  std::vector<Biquad> sections_;
  // The state follows the signal, not a worker: one per step, its calls in
  // frame order (the executors run a plan that carries state in order).
  mutable std::mutex mutex_;
  mutable Runner<float> f32_;
  mutable Runner<double> f64_;
};

// zero_phase: the whole signal in one call (the plan makes it one chunk),
// filtered forward and backward, the channels on threads of their own.
class ZeroPhaseStep final : public CpuStageStep {
public:
  explicit ZeroPhaseStep(const PlannedStage& st)
      : name_(st.name), sections_(st.as<IirPlan>().sections), frames_(st.frames_out) {}
  [[nodiscard]] std::string describe() const override {
    return "iir '" + name_ + "': " + std::to_string(sections_.size()) +
           " section(s), zero phase (forward and backward over the whole signal)";
  }
  void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
           std::int64_t y_first, std::int64_t n, StepScratch* /*scratch*/) const override {
    whole(x, x_first, y, y_first, n);
  }
  void run(std::span<const double* const> x, std::int64_t x_first, std::span<double* const> y,
           std::int64_t y_first, std::int64_t n) const override {
    whole(x, x_first, y, y_first, n);
  }

private:
  template <typename T>
  void whole(std::span<const T* const> x, std::int64_t x_first, std::span<T* const> y,
             std::int64_t y_first, std::int64_t n) const {
    if (y_first != 0 || n != frames_ || x_first > 0)
      throw internal_error("iir stage '" + name_ + "': zero phase asked for frames " +
                           std::to_string(y_first) + ".." + std::to_string(y_first + n) +
                           " of a signal of " + std::to_string(frames_) +
                           " (it needs all at once)");
    // The channels side by side: the run is one chunk, so the other workers wait.
    const auto channels = static_cast<std::int64_t>(y.size());
    ThreadPool pool(static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(channels, hardware_threads()) - 1)));
    run_tasks(pool, channels, [&](std::int64_t c) {
      const auto k = static_cast<std::size_t>(c);
      kernels::cpu::sosfiltfilt(sections_, x[k] - x_first, y[k], n);
    });
  }

  std::string name_;
  std::vector<Biquad> sections_;
  std::int64_t frames_;
};

} // namespace

void plan_iir(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) {
  const IirSpec& s = spec.as<IirSpec>();
  const std::string at = stage_where(where, spec);
  IirPlan& p = out.as<IirPlan>();
  if (s.design) {
    const IirDesignSpec& d = *s.design;
    try {
      p.sections = design_iir(d, where.sample_rate);
    } catch (const Error& e) {
      throw Error(e.kind(), at + ": " + e.what());
    }
    p.how = std::string(to_string(d.ftype));
    std::ostringstream t;
    t << to_string(d.ftype) << ' ' << to_string(d.kind) << ' ';
    for (std::size_t i = 0; i < d.cutoff_hz.size(); ++i)
      t << (i ? "-" : "") << d.cutoff_hz[i];
    t << " Hz, order " << d.order;
    out.detail = t.str();
  } else if (s.biquad) {
    const BiquadSpec& b = *s.biquad;
    if (!(b.freq_hz > 0.0 && b.freq_hz < where.sample_rate / 2.0))
      throw config_error(at + ": biquad freq_hz " + std::to_string(b.freq_hz) +
                         " Hz is not inside (0, " + std::to_string(where.sample_rate / 2.0) +
                         ") Hz, the band below the Nyquist frequency of its " +
                         std::to_string(where.sample_rate) + " Hz input");
    p.sections = {rbj_biquad(b, where.sample_rate)};
    p.how = std::string(to_string(b.kind));
    std::ostringstream d;
    d << "biquad " << to_string(b.kind) << ' ' << b.freq_hz << " Hz, q " << b.q;
    if (b.kind == BiquadKind::peaking || b.kind == BiquadKind::lowshelf ||
        b.kind == BiquadKind::highshelf)
      d << ", " << b.gain_db << " dB";
    out.detail = d.str();
  } else if (s.sos_file) {
    p.sections = iir_sections(read_sos_file(*s.sos_file, at), at);
    p.how = "sos_file";
    out.detail = "sos file " + *s.sos_file;
  } else {
    p.sections = iir_sections(s.sos, at);
    p.how = "sos";
    out.detail = std::to_string(p.sections.size()) + " section(s)";
  }
  if (p.sections.empty())
    throw config_error(at + ": no sections (expected one of sos, sos_file, biquad)");
  for (std::size_t k = 0; k < p.sections.size(); ++k) {
    const Biquad& q = p.sections[k];
    if (!std::isfinite(q.b0) || !std::isfinite(q.b1) || !std::isfinite(q.b2) ||
        !std::isfinite(q.a1) || !std::isfinite(q.a2))
      throw config_error(at + ": section " + std::to_string(k) +
                         " has a coefficient that is not finite");
    if (const double r = pole_radius(q); !(r < 1.0)) {
      std::ostringstream m;
      m.precision(6);
      m << at << ": section " << k << " is unstable: a pole at radius " << r
        << " (on or outside the unit circle; every pole must lie inside it, |z| < 1)";
      throw config_error(m.str());
    }
  }
  out.frames_out = where.frames_in;
  out.carries_state = true;
  if (s.zero_phase) {
    if (where.config.execution.latency_ms)
      throw config_error(at + ": zero_phase filters forward and backward over the whole signal: "
                              "not in live mode (files and batch only)");
    p.zero_phase = true;
    out.whole_signal = true;
    out.detail += ", zero phase";
    // A stream's length is not known here (make_plan refuses it).
    const std::int64_t pad = kernels::cpu::sosfiltfilt_pad(p.sections);
    if (where.frames_in < kOpenEnd / 2 && where.frames_in <= pad)
      throw config_error(at + ": zero_phase pads " + std::to_string(pad) +
                         " frames at each end (scipy.signal.sosfiltfilt's default) and needs a "
                         "longer signal than that; this one is " +
                         std::to_string(where.frames_in) + " frames");
  }
}

std::unique_ptr<const CpuStageStep> make_iir_cpu_step(const PlannedStage& stage) {
  if (stage.as<IirPlan>().zero_phase)
    return std::make_unique<const ZeroPhaseStep>(stage);
  return std::make_unique<const IirStep>(stage);
}

StatFields iir_stats(const StageReport& s) {
  const IirPlan& p = s.as<IirPlan>();
  return {{"iir", p.how},
          {"sections", static_cast<std::int64_t>(p.sections.size())},
          {"passes", std::int64_t{p.zero_phase ? 2 : 1}}}; // 2: forward and backward
}

void iir_facts(const StageSpec& spec, std::ostream& o) {
  const IirSpec& s = spec.as<IirSpec>();
  if (s.design) {
    const IirDesignSpec& d = *s.design;
    o << ":design:" << to_string(d.kind) << ':' << to_string(d.ftype) << ':' << d.order;
    for (double f : d.cutoff_hz)
      o << ':' << f;
    o << ':' << d.rp.value_or(0.0) << ':' << d.rs.value_or(0.0);
  }
  if (s.biquad)
    o << ":biquad:" << to_string(s.biquad->kind) << ':' << s.biquad->freq_hz << ':' << s.biquad->q
      << ':' << s.biquad->gain_db;
  if (s.sos_file)
    o << ":file:" << *s.sos_file;
  for (const std::vector<double>& r : s.sos) {
    o << ":sos";
    for (double v : r)
      o << ':' << v;
  }
  if (s.zero_phase)
    o << ":zero_phase";
}

std::vector<std::string> iir_files(const StageSpec& spec) {
  const IirSpec& s = spec.as<IirSpec>();
  return s.sos_file ? std::vector<std::string>{*s.sos_file} : std::vector<std::string>{};
}

std::optional<kernels::cpu::FilterResponse> iir_response(const PlannedStage& stage,
                                                         double rate_in) {
  kernels::cpu::FilterResponse r =
      kernels::cpu::sos_response(stage.as<IirPlan>().sections, rate_in);
  if (stage.as<IirPlan>().zero_phase) // |H|^2 and no delay
    for (std::size_t i = 0; i < r.freq_hz.size(); ++i) {
      r.magnitude_db[i] = std::max(2.0 * r.magnitude_db[i], -400.0);
      if (!std::isnan(r.group_delay_ms[i]))
        r.group_delay_ms[i] = 0.0;
    }
  return r;
}

} // namespace sigstream
