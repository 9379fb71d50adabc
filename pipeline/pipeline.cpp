// One job end to end (pipeline/pipeline.hpp): the source opened and the
// outputs checked, a first pass where a stage needs one, live mode or the
// chunk flow (reader thread -> backend -> writer thread), verification and
// the commits. Over 600 lines (~640) and one file on purpose: the reader,
// the writer and the run share the chunk queue, the report being filled and
// the commit order, which a split would expose in a header of internals;
// live mode (pipeline/live.cpp) and the first pass (pipeline/first_pass.cpp)
// already stand apart.
#include "pipeline/pipeline.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/trace.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/welch.hpp"
#include "pipeline/backends/cpu_chunk.hpp"
#include "pipeline/excerpt.hpp"
#include "pipeline/first_pass.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/live.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/resource_limits.hpp"
#include "stages/metrics/loudness.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace {

// Recycles the backend's host blocks (pinned memory for CUDA): a block handed
// out returns to the pool when its last user drops it.
class BlockPool : public std::enable_shared_from_this<BlockPool> {
public:
  BlockPool(Backend& backend, SampleType type, int channels, std::int64_t frames)
      : backend_(backend), type_(type), channels_(channels), frames_(frames) {}

  HostBlock acquire() {
    HostBlock raw;
    {
      std::lock_guard lock(mutex_);
      // Blocks that no longer suit the backend (pageable ones once a GPU
      // is up) are dropped rather than reused.
      while (!free_.empty() && !raw.data) {
        if (backend_.block_suits(free_.back()))
          raw = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!raw.data)
      raw = backend_.make_block(type_, channels_, frames_);
    HostBlock out = raw;
    out.frames = 0;
    auto self = shared_from_this();
    out.data = std::shared_ptr<std::byte>(raw.data.get(), [self, raw](std::byte*) mutable {
      std::lock_guard lock(self->mutex_);
      self->free_.push_back(std::move(raw));
    });
    return out;
  }

private:
  Backend& backend_;
  SampleType type_;
  int channels_;
  std::int64_t frames_;
  std::mutex mutex_;
  std::vector<HostBlock> free_;
};

// Assembles each chunk's input block (its source window, plan.windows())
// from the previous block's overlap, sequential reads and zeros outside the
// source, so the source is read exactly once, front to back. A stream of
// unknown length is read until it ends; the chunk that sees the end, and
// every later one, carry the true length (and are cut to it).
class ChunkReader {
public:
  ChunkReader(Source& source, const Plan& plan, std::shared_ptr<BlockPool> pool)
      : source_(source), plan_(plan), pool_(std::move(pool)), known_(plan.source_frames) {}

  // The next chunk, or nothing once the output is complete.
  std::optional<ChunkJob> next(std::int64_t c) {
    ChunkJob job = chunk_job(plan_, c);
    job.frames = plan_.chunk_length(c, known_);
    if (job.frames == 0)
      return std::nullopt;
    const FrameWindow window = plan_.source_window(job.start, job.frames);
    const std::int64_t lo = window.lo;
    std::int64_t hi = window.hi;
    HostBlock block = pool_->acquire();
    block.frames = hi - lo;
    const std::size_t frame_bytes =
        static_cast<std::size_t>(plan_.channels) * sample_bytes(block.type);
    auto* dst = reinterpret_cast<unsigned char*>(block.data.get());
    std::int64_t f = lo;
    if (prev_.data && prev_hi_ > lo) {
      const std::int64_t n = prev_hi_ - lo;
      std::memcpy(dst,
                  reinterpret_cast<const unsigned char*>(prev_.data.get()) +
                      (lo - prev_lo_) * frame_bytes,
                  static_cast<std::size_t>(n) * frame_bytes);
      f = prev_hi_;
    }
    if (f < 0) {
      const std::int64_t z = std::min<std::int64_t>(hi, 0) - f;
      std::memset(dst + (f - lo) * frame_bytes, 0, static_cast<std::size_t>(z) * frame_bytes);
      f += z;
    }
    if (f < hi && f < known_) {
      if (f != next_read_)
        throw internal_error("chunk reader: non-sequential read");
      const std::int64_t want = std::min(hi, known_) - f;
      const std::int64_t got = source_.read(block, f - lo, want);
      next_read_ += got;
      f += got;
      if (got < want) {
        // The stream has ended: its length is now known, and this chunk
        // (and the run) end where the output does.
        known_ = next_read_;
        if (known_ == 0)
          throw io_error(source_.path() + ": holds no audio frames (the stream is empty)");
        job.frames = plan_.chunk_length(c, known_);
        if (job.frames == 0)
          return std::nullopt;
        hi = plan_.source_window(job.start, job.frames).hi;
        block.frames = hi - lo;
      }
    }
    if (f < hi)
      std::memset(dst + (f - lo) * frame_bytes, 0, static_cast<std::size_t>(hi - f) * frame_bytes);
    job.source_frames = known_;
    prev_ = block;
    prev_lo_ = lo;
    prev_hi_ = hi;
    job.input = std::move(block);
    return job;
  }

  // The source's length: known from the start, or once the stream has ended.
  [[nodiscard]] std::int64_t source_frames() const noexcept { return known_; }

private:
  Source& source_;
  const Plan& plan_;
  std::shared_ptr<BlockPool> pool_;
  HostBlock prev_;
  std::int64_t prev_lo_ = 0, prev_hi_ = 0;
  std::int64_t next_read_ = 0;
  std::int64_t known_; // kOpenEnd until a stream ends
};

struct VerifyPartial {
  double err2 = 0.0, ref2 = 0.0, max_abs = 0.0;
};

// Recomputes a chunk in float64 from its source block and compares.
VerifyPartial verify_chunk(const Plan& plan, const CpuSteps& steps, const ChunkResult& r) {
  const int ch = plan.channels;
  const std::int64_t len = r.input.frames;
  // Through float first: the reference sees exactly the samples the backend saw.
  std::vector<float> as_float(static_cast<std::size_t>(len * ch));
  std::vector<double> src(as_float.size());
  std::vector<float*> outs(static_cast<std::size_t>(ch));
  std::vector<const double*> planes(static_cast<std::size_t>(ch));
  for (int c = 0; c < ch; ++c) {
    outs[static_cast<std::size_t>(c)] = as_float.data() + c * len;
    planes[static_cast<std::size_t>(c)] = src.data() + c * len;
  }
  kernels::cpu::deinterleave(r.input, 0, len, outs.data());
  std::copy(as_float.begin(), as_float.end(), src.begin());
  ChunkScratch<double> scratch;
  const auto ref =
      run_stages<double>(plan, steps, r.start, r.frames, r.source_frames, planes, scratch,
                         [](const PlannedStage&, const std::vector<const double*>&,
                            const std::vector<const double*>&, std::int64_t, std::int64_t) {});
  VerifyPartial v;
  for (int c = 0; c < plan.output_channels; ++c) {
    const double* y = ref[static_cast<std::size_t>(c)];
    const std::vector<float>& out = r.output_f32[static_cast<std::size_t>(c)];
    for (std::int64_t i = 0; i < r.frames; ++i) {
      const double d = static_cast<double>(out[static_cast<std::size_t>(i)]) - y[i];
      v.err2 += d * d;
      v.ref2 += y[i] * y[i];
      v.max_abs = std::max(v.max_abs, std::fabs(d));
    }
  }
  return v;
}

} // namespace

RunReport new_report(const Source& source, const Config& config, const Plan& plan,
                     const std::optional<SinkFormat>& sink_format) {
  const SourceInfo& si = source.info();
  RunReport report;
  report.input_path = source.path();
  report.input_format = source.format_name();
  report.sample_rate = si.sample_rate;
  report.channels = si.channels;
  report.input_frames = si.frames;
  report.output_path = config.sink.file.value_or("");
  report.output_format = sink_format ? sink_format->name : "";
  report.output_frames = plan.output_frames;
  report.chunk_frames = plan.chunk_frames;
  report.streams = config.execution.streams;
  report.output_channels = plan.output_channels;
  double rate = plan.sample_rate;
  std::vector<bool> paired(plan.metric_names.size(), true);
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    StageReport s;
    s.name = st.name;
    s.type = st.type;
    s.params = st.params;
    s.detail = st.detail;
    s.up = st.up;
    s.down = st.down;
    if (const auto response = stage_kind(st.type).response)
      s.response = response(st, rate);
    rate = rate * static_cast<double>(st.up) / static_cast<double>(st.down);
    s.rate_out = rate;
    report.stages.push_back(std::move(s));
    if (st.metrics_slot >= 0)
      paired[static_cast<std::size_t>(st.metrics_slot)] = plan.paired(j);
  }
  report.output_sample_rate = plan.output_rate;
  paired.back() = plan.paired(plan.stages.size());
  const std::vector<int> slot_channels = plan.metric_channels();
  for (std::size_t slot = 0; slot < plan.metric_names.size(); ++slot) {
    const std::string& name = plan.metric_names[slot];
    MetricsReport m;
    m.name = name;
    m.paired = paired[slot];
    m.totals.assign(static_cast<std::size_t>(slot_channels[slot]), ChannelMetrics{});
    report.metrics.push_back(std::move(m));
  }
  return report;
}

void finish_spectra(const Plan& plan, const std::vector<SpectrumSums>& sums, RunReport& report) {
  for (const PlannedStage& st : plan.stages) {
    const MetricsPlan* mp = st.params.find<MetricsPlan>();
    if (!mp || mp->spectrum_window.empty())
      continue;
    const auto slot = static_cast<std::size_t>(st.metrics_slot);
    const kernels::cpu::Welch welch(mp->spectrum_window, mp->spectrum_hop);
    const auto bins = static_cast<std::size_t>(welch.bins());
    SpectrumReport s;
    s.nfft = welch.nfft();
    s.overlap_frames = welch.nfft() - welch.hop();
    s.window = mp->spectrum_window_name;
    s.sample_rate = mp->spectrum_rate;
    s.freq_hz = welch.frequencies(mp->spectrum_rate);
    const SpectrumSums* sum =
        slot < sums.size() && !sums[slot].power.empty() ? &sums[slot] : nullptr;
    s.segments = sum ? sum->segments : 0;
    const std::vector<double> zeros(bins, 0.0);
    for (int c = 0; c < st.channels_in; ++c) {
      const std::span<const double> power =
          sum ? std::span<const double>(sum->power.data() + static_cast<std::size_t>(c) * bins,
                                        bins)
              : std::span<const double>(zeros);
      s.psd.push_back(welch.density(power, s.segments, mp->spectrum_rate));
    }
    report.metrics[slot].spectrum = std::move(s);
  }
}

RunReport run_pipeline(const Config& config, const RunOptions& options) {
  const auto t0 = options.started.value_or(std::chrono::steady_clock::now());
  auto log = [&](const std::string& m) {
    if (options.log)
      options.log(m);
  };
  throw_if_interrupted();
  check_execution_limits(config.execution); // before any thread or buffer
  std::unique_ptr<Source> source = open_source(config.source);
  const SourceInfo& si = source->info();
  trace("source opened");

  // Outputs are checked before any work: never the input, formats that fit.
  std::optional<SinkFormat> sink_format;
  // Standard input and output ("-") are no files that could be the same.
  const bool input_is_file = config.source.file && !is_std_stream(*config.source.file);
  if (config.sink.file) {
    if (input_is_file && !is_std_stream(*config.sink.file))
      refuse_same_file(*config.source.file, *config.sink.file, "sink.file");
    sink_format =
        choose_sink_format(*config.sink.file, config.sink.format, source->sndfile_format(),
                           config.sink.type, config.sink.quality);
    if (!sink_format->note.empty())
      log(sink_format->note);
  }
  for (const auto* p : {&config.stats.json, &config.stats.csv})
    if (*p && input_is_file)
      refuse_same_file(*config.source.file, **p, "stats output");

  // A stage that needs a first pass over the signal (normalize) is measured
  // now, once the outputs are known to be good; the run is then the second
  // pass, timed from here (its statistics' wall time counts both).
  if (needs_first_pass(config)) {
    const Config measured = with_first_passes(config, options, si.open_ended);
    source.reset();
    RunOptions second = options;
    second.started = t0;
    return run_pipeline(measured, second);
  }

  if (config.execution.latency_ms) {
    // Live mode (pipeline/live.hpp): blocks from the latency, on the CPU.
    if (options.verify)
      throw config_error(
          "--verify is not available in live mode (--latency): the float64 reference "
          "would hold up every block; verify the same config without --latency (direct "
          "filters give the same bytes)");
    Config live = config;
    live.execution.chunk_frames = live_block_frames(*config.execution.latency_ms, si.sample_rate);
    // Blocks of a million frames are no live audio (2 ms at 990 MHz, found by
    // fuzz_live: its partitioned FIR's FFTs took a minute under the sanitizers).
    if (constexpr std::int64_t kMaxLiveBlock = std::int64_t{1} << 20;
        live.execution.chunk_frames > kMaxLiveBlock)
      throw config_error("execution.latency_ms: " + std::to_string(*config.execution.latency_ms) +
                         " ms at " + std::to_string(si.sample_rate) + " Hz is a block of " +
                         std::to_string(live.execution.chunk_frames) +
                         " frames; live mode takes blocks of up to " +
                         std::to_string(kMaxLiveBlock) +
                         " frames (a shorter latency, or run it without --latency)");
    const Plan plan = make_plan(live, si, sink_format ? sink_format->bits : 0);
    if (sink_format)
      check_sink_channels(*config.sink.file, *sink_format, plan.output_channels);
    return run_live(live, options, *source, plan, sink_format,
                    new_report(*source, config, plan, sink_format), t0);
  }
  // A stream that ends within its first chunk is planned as that file would be.
  source = prefetch_stream(std::move(source), config.execution.chunk_frames + 1);
  Plan plan = make_plan(config, source->info(), sink_format ? sink_format->bits : 0);
  if (sink_format)
    check_sink_channels(*config.sink.file, *sink_format, plan.output_channels);
  const int device = config.execution.devices.empty() ? 0 : config.execution.devices.front();
  trace("plan made");
  BackendOptions bo;
  bo.threads = config.execution.threads;
  bo.streams = config.execution.streams;
  bo.device = device;
  bo.keep_float_output = options.verify;
  const int threads = bo.threads > 0 ? bo.threads : hardware_threads();
  std::unique_ptr<Backend> backend;
  if (options.kept_backend && *options.kept_backend) {
    // A kept backend either runs this plan or goes now (its memory back to the caches).
    std::unique_ptr<Backend> kept = std::move(*options.kept_backend);
    if (adopt_kept_backend(*kept, config, device, plan, bo))
      backend = std::move(kept);
  }
  if (backend) {
    trace("backend kept");
    // (Its methods may differ from the last file's: a batch's log says each line once.)
    if (const std::string d = backend->describe(); !d.empty())
      log(d);
  } else {
    backend = choose_backend(config, device, plan, log);
    trace("backend chosen");
    // The chunks in flight, at most (the CPU backend's depth() with one piece a
    // chunk; CUDA: a host block per lane and two queued).
    check_chunk_memory(plan,
                       backend->name() == "cpu" ? std::max(3, 2 * threads + 1) : bo.streams + 2);
    backend->prepare(plan, bo);
    trace("backend prepared");
    if (const std::string d = backend->describe(); !d.empty())
      log(d);
  }
  if (options.backend_ready)
    options.backend_ready();
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  RunReport report = new_report(*source, config, plan, sink_format);
  std::vector<SpectrumSums> spectra(
      plan.metric_names.size()); // merged in chunk order by the writer
  // Loudness blocks' meters, fed in chunk order by the writer.
  std::vector<std::unique_ptr<LoudnessMeter>> meters(plan.metric_names.size());
  for (const PlannedStage& st : plan.stages)
    if (st.metrics_slot >= 0 && st.as<MetricsPlan>().loudness)
      meters[static_cast<std::size_t>(st.metrics_slot)] =
          std::make_unique<LoudnessMeter>(st.channels_in, st.as<MetricsPlan>().loudness_rate);
  ExcerptCapture excerpt(plan);
  report.threads = threads;

  // Every output gets its temporary file now, so an unwritable path fails
  // before any work; nothing is renamed into place until all are complete.
  std::optional<AudioSink> sink;
  if (sink_format)
    sink.emplace(*config.sink.file, *sink_format, plan.output_rate, plan.output_channels);
  std::optional<AtomicFile> json_file, csv_file;
  if (config.stats.json)
    json_file.emplace(*config.stats.json);
  if (config.stats.csv)
    csv_file.emplace(*config.stats.csv);

  auto pool = std::make_shared<BlockPool>(*backend, plan.input_type, plan.channels,
                                          plan.max_window.front());
  BoundedQueue<ChunkJob> jobs(2);
  BoundedQueue<ChunkResult> done(2);
  std::mutex error_mutex;
  std::exception_ptr error;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard lock(error_mutex);
      if (!error)
        error = e;
    }
    jobs.abort();
    done.abort();
    source->cancel(); // a reader waiting on a stalled input gives up
  };

  std::atomic<std::int64_t> source_frames{plan.length_known ? plan.source_frames : kUnknownFrames};
  using Clock = std::chrono::steady_clock;
  Clock::duration read_time{}, write_time{};
  auto read_chunks = [&] {
    try {
      ChunkReader chunks(*source, plan, pool);
      for (std::int64_t c = 0;; ++c) {
        throw_if_interrupted();
        const auto r0 = Clock::now();
        std::optional<ChunkJob> job = chunks.next(c);
        read_time += Clock::now() - r0;
        if (!job)
          break;
        if (!jobs.push(std::move(*job)))
          return;
        if (c == 0)
          trace("reader: first chunk read");
      }
      source_frames = chunks.source_frames();
      trace("reader: last chunk read");
      jobs.close();
    } catch (...) {
      fail(std::current_exception());
    }
  };

  Progress progress(plan.length_known ? plan.output_frames : 0, plan.output_rate, options.progress);
  auto write_chunks = [&] {
    try {
      // Each metrics slot's stage (the output's: past the last stage).
      std::vector<std::size_t> slot_stage(plan.metric_names.size(), plan.stages.size());
      for (std::size_t j = 0; j < plan.stages.size(); ++j)
        if (plan.stages[j].metrics_slot >= 0)
          slot_stage[static_cast<std::size_t>(plan.stages[j].metrics_slot)] = j;
      CpuSteps reference; // the stages' float64 paths (outlives the verifiers that read it)
      std::unique_ptr<ThreadPool> verifiers;
      std::deque<std::future<VerifyPartial>> pending;
      VerifyPartial total;
      auto settle = [&] {
        const VerifyPartial v = pending.front().get();
        pending.pop_front();
        total.err2 += v.err2;
        total.ref2 += v.ref2;
        total.max_abs = std::max(total.max_abs, v.max_abs);
      };
      if (options.verify) {
        // A reference that carries state takes its chunks in order: one verifier.
        verifiers = std::make_unique<ThreadPool>(plan.carries_state() ? 1 : hardware_threads());
        reference = make_cpu_steps(plan);
      }
      std::int64_t frames_done = 0;
      const bool keep_rows = options.chunk_rows || config.stats.json || config.stats.csv;
      while (auto r = done.pop()) {
        if (frames_done == 0)
          trace("writer: first chunk retired");
        if (sink) {
          const auto w0 = Clock::now();
          sink->write(r->output);
          write_time += Clock::now() - w0;
        }
        excerpt.output_block(r->output, r->start);
        for (std::size_t slot = 0; slot < report.metrics.size(); ++slot) {
          MetricsReport& m = report.metrics[slot];
          for (std::size_t c = 0; c < m.totals.size(); ++c)
            m.totals[c].merge(r->metrics[slot][c]);
          if (slot < r->spectra.size())
            spectra[slot].merge(r->spectra[slot]);
          if (meters[slot] && slot < r->observed.size() && !r->observed[slot].empty()) {
            std::vector<const float*> planes;
            for (const std::vector<float>& p : r->observed[slot])
              planes.push_back(p.data());
            meters[slot]->add(planes, static_cast<std::int64_t>(r->observed[slot][0].size()));
          }
          if (meters[slot] && slot < r->measured.size() && r->measured[slot].frames > 0) {
            const ChunkResult::MeasuredLoudness& l = r->measured[slot];
            meters[slot]->add_measured(l.first, l.frames, l.energy, l.sample_peak, l.true_peak);
          }
          if (!keep_rows)
            continue;
          if (plan.rate_changes) {
            // The block's own frames: a block on the other side of a rate
            // change counts other frames than the chunk's output.
            const FrameWindow own = plan.owned(slot_stage[slot], r->start, r->frames);
            const std::int64_t n = r->metrics[slot].empty() ? 0 : r->metrics[slot][0].frames;
            // A chunk may own none of a block's frames (before an up-sampler, small chunks).
            if (n > 0)
              m.chunks.push_back({r->index, own.lo, n, std::move(r->metrics[slot])});
          } else {
            m.chunks.push_back({r->index, r->start, r->frames, std::move(r->metrics[slot])});
          }
        }
        report.clipped_samples += r->clipped;
        if (verifiers) {
          auto shared = std::make_shared<ChunkResult>(std::move(*r));
          pending.push_back(verifiers->enqueue(
              [&plan, &reference, shared] { return verify_chunk(plan, reference, *shared); }));
          while (static_cast<int>(pending.size()) > 2 * verifiers->size())
            settle();
        }
        frames_done += r->frames;
        progress.update(frames_done);
      }
      trace("writer: last chunk written");
      while (!pending.empty())
        settle();
      if (options.verify) {
        report.verification.ran = true;
        report.verification.tolerance = options.tolerance;
        report.verification.max_abs_error = total.max_abs;
        report.verification.rel_l2_error =
            total.ref2 > 0 ? std::sqrt(total.err2 / total.ref2) : std::sqrt(total.err2);
        report.verification.passed = report.verification.rel_l2_error <= options.tolerance;
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };
  // On the caller's kept threads (a batch worker's), else on threads of
  // their own. Where the writer cannot start, the reader is stopped (fail)
  // before it is waited for.
  JoinedTask reader(options.threads ? &options.threads->reader : nullptr, read_chunks);
  std::optional<JoinedTask> writer;
  try {
    writer.emplace(options.threads ? &options.threads->writer : nullptr, write_chunks);
  } catch (...) {
    fail(std::current_exception());
    throw;
  }

  try {
    int in_flight = 0;
    while (auto job = jobs.pop()) {
      // Retire what is finished (so the writer overlaps the reader), and wait
      // for the oldest only when the backend is full.
      while (in_flight > 0 && (in_flight >= backend->depth() || backend->oldest_ready())) {
        if (!done.push(backend->retire()))
          break;
        --in_flight;
      }
      excerpt.source_block(job->input, plan.source_window(job->start, job->frames).lo);
      backend->submit(std::move(*job));
      ++in_flight;
    }
    while (in_flight > 0) {
      ChunkResult r = backend->retire();
      --in_flight;
      if (!done.push(std::move(r)))
        break;
    }
    done.close();
  } catch (const Error& e) {
    // Backend errors name the stage and chunk; add the file they came from
    // (an interruption is the user's doing, not the file's).
    fail(e.kind() == ErrorKind::interrupted
             ? std::current_exception()
             : std::make_exception_ptr(Error(e.kind(), report.input_path + ": " + e.what())));
  } catch (...) {
    fail(std::current_exception());
  }
  reader.join();
  writer->join();
  progress.finish();
  if (error)
    std::rethrow_exception(error);
  throw_if_interrupted();
  report.input_frames = source_frames;
  report.output_frames = plan.output_length(source_frames);
  report.excerpt = excerpt.result(report.input_frames, report.output_frames);
  if (const std::string s = backend->summary(); !s.empty())
    log(s);
  // The hybrid backend knows only now which device(s) did the work.
  report.backend = backend->name();
  report.device = backend->device_name();

  finish_spectra(plan, spectra, report);
  for (std::size_t slot = 0; slot < meters.size(); ++slot)
    if (meters[slot])
      report.metrics[slot].loudness = meters[slot]->result();
  report.stage_ms = backend->stage_ms();
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.setup_s = setup_s;
  report.read_s = std::chrono::duration<double>(read_time).count();
  report.write_s = std::chrono::duration<double>(write_time).count();
  const auto c0 = Clock::now();
  if (json_file)
    write_all(*json_file, stats_json(report));
  if (csv_file)
    write_all(*csv_file, stats_csv(report));
  if (sink)
    sink->finish();
  if (csv_file && options.name_csv_before_commit)
    csv_file->name_temporary();
  if (options.before_commit) {
    CommitFiles files;
    if (sink)
      files.output = sink->identity();
    if (csv_file)
      files.csv = csv_file->identity();
    options.before_commit(report, files);
  }
  if (sink)
    sink->commit();
  if (json_file)
    json_file->commit();
  if (csv_file)
    csv_file->commit();
  report.commit_s = std::chrono::duration<double>(Clock::now() - c0).count();
  trace("outputs committed");
  if (options.kept_backend)
    *options.kept_backend = std::move(backend);
  else if (options.exiting)
    static_cast<void>(backend.release()); // see RunOptions::exiting
  return report;
}

} // namespace sigstream
