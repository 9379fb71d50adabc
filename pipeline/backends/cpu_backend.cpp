// The CPU backend: the reference semantics of a chunk, run on a thread pool.
// Over 600 lines (~650) and one file on purpose: one class whose prepare,
// adopt, submit, pieces, turns and compute share the plan, the steps and the
// chunks' working memory; split, each part would reach into the others'
// members (the helpers it alone uses, OutputBlocks and Scratch, sit above it).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/cpu/fft_engine.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/loudness.hpp"
#include "kernels/cpu/reduce.hpp"
#include "kernels/cpu/welch.hpp"
#include "pipeline/backends/backend.hpp"
#include "pipeline/backends/cpu_chunk.hpp"
#include "stages/metrics/spec.hpp"

namespace sigstream {

namespace {

// Output blocks, recycled: a fresh multi-megabyte block per chunk costs a page
// fault (and the kernel's zeroing) per 4 KB page. A block handed out returns
// here when its last user (the writer) drops it; blocks may outlive the backend.
class OutputBlocks : public std::enable_shared_from_this<OutputBlocks> {
public:
  OutputBlocks(SampleType type, int channels, std::int64_t capacity)
      : type_(type), channels_(channels), capacity_(capacity) {}

  HostBlock take(Backend& backend) {
    HostBlock raw;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        raw = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!raw.data)
      raw = backend.make_block(type_, channels_, capacity_);
    HostBlock out = raw;
    out.frames = 0;
    out.data = std::shared_ptr<std::byte>(raw.data.get(),
                                          [self = shared_from_this(), raw](std::byte*) mutable {
                                            std::lock_guard lock(self->mutex_);
                                            self->free_.push_back(std::move(raw));
                                          });
    return out;
  }

private:
  SampleType type_;
  int channels_;
  std::int64_t capacity_;
  std::mutex mutex_;
  std::vector<HostBlock> free_;
};

// Planar working memory for one chunk: the source and two ping-pong buffers.
struct Scratch {
  std::vector<float> source;
  ChunkScratch<float> work;
};

class CpuBackend final : public Backend {
public:
  // Queued chunks still run during the pool's shutdown: stop it while the
  // members they use are alive.
  ~CpuBackend() override { pool_.reset(); }

  [[nodiscard]] std::string name() const override { return "cpu"; }
  [[nodiscard]] std::string device_name() const override { return cpu_model(); }

  void prepare(const Plan& plan, const BackendOptions& options) override {
    options_ = options;
    const int threads = options.threads > 0 ? options.threads : hardware_threads();
    pool_ = std::make_unique<ThreadPool>(threads);
    // What adopt() may take: plans no longer than this one, whose outputs
    // these blocks hold.
    prepared_window_ = plan.max_window;
    prepared_chunk_ = plan.max_chunk_frames();
    outputs_ = std::make_shared<OutputBlocks>(plan.output_type, plan.output_channels,
                                              plan.max_chunk_frames());
    take_plan(plan);
  }

  // The next file of a batch worker: the threads, the chunks' working memory
  // (its planes; each step's scratch is made again with its step) and the
  // output blocks stay (a thread and ~6 MB of fresh pages a file otherwise),
  // as long as the plan has the shape of the one prepared (same_shape) and
  // no longer windows, so that they never hold more than that plan's (which
  // passed the pipeline's memory check). What follows the plan (steps,
  // spectra, meters, pieces) is made again from it.
  [[nodiscard]] bool adopt(const Plan& plan, const BackendOptions& options) override {
    if (pool_ == nullptr || !in_flight_.empty() || options.threads != options_.threads ||
        options.keep_float_output != options_.keep_float_output ||
        !fits_prepared(plan, plan_, prepared_chunk_, prepared_window_))
      return false;
    take_plan(plan);
    options_ = options;
    return true;
  }

private:
  // Everything that follows the plan: made first, then taken all at once, so
  // that a throw leaves the backend as it was.
  void take_plan(const Plan& given) {
    // The steps read the copy's stages, which stay where they are when the
    // copy moves into plan_ (a vector's move keeps its elements).
    static_assert(std::is_nothrow_move_assignable_v<Plan>);
    Plan plan = given;
    CpuSteps steps = make_cpu_steps(plan);
    std::vector<std::unique_ptr<const kernels::cpu::Welch>> welch(plan.metric_names.size());
    for (const PlannedStage& st : plan.stages)
      if (const MetricsPlan* mp = st.params.find<MetricsPlan>(); mp && !mp->spectrum_window.empty())
        welch[static_cast<std::size_t>(st.metrics_slot)] =
            std::make_unique<const kernels::cpu::Welch>(mp->spectrum_window, mp->spectrum_hop);
    // A loudness block's frames are measured by the workers, each piece on
    // its own (its K-weighting settled in the block's look-back, as on the
    // GPU), and the writer's meter only gates and sums the steps: no copy of
    // the frames, no filter on the writer's thread. Where chunks are short
    // beside the settling, the frames go to the writer's meter instead.
    std::vector<std::unique_ptr<const kernels::cpu::Bs1770Meter>> measurers(
        plan.metric_names.size());
    std::vector<std::unique_ptr<std::atomic<float>>> peak_seen(plan.metric_names.size());
    for (const PlannedStage& st : plan.stages)
      if (const MetricsPlan* mp = st.params.find<MetricsPlan>(); mp && mp->loudness) {
        auto m = std::make_unique<const kernels::cpu::Bs1770Meter>(st.channels_in,
                                                                   std::lround(mp->loudness_rate));
        if (plan.chunk_frames >= kSettlingsAChunk * m->settle_frames()) {
          measurers[static_cast<std::size_t>(st.metrics_slot)] = std::move(m);
          peak_seen[static_cast<std::size_t>(st.metrics_slot)] =
              std::make_unique<std::atomic<float>>(0.0f);
        }
      }
    // Chunks run as pieces of a fixed size, taken from neither the thread
    // count nor the CPU, so for given methods the output and the statistics'
    // sums are the same on every machine. With direct stages only, pieces
    // change no bit of the audio.
    // An FFT stage's blocks follow the pieces (results move within 1e-6, as
    // with another chunk size), so its pieces hold at least one full group of
    // the engine's blocks.
    // In output frames: behind a down-sampler, fewer (windows stay near kPieceFrames).
    std::int64_t piece_frames = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(kPieceFrames) / plan.in_per_out));
    for (const auto& step : steps)
      if (step)
        piece_frames = std::max(piece_frames, step->min_frames_per_call());
    // A stage that carries state (iir) takes its frames in order: a chunk runs
    // whole, and takes its turn (chunk index order) at its first such stage;
    // the stages before it run on every thread.
    if (plan.carries_state())
      piece_frames = std::max<std::int64_t>(piece_frames, plan.max_chunk_frames());
    // A piece measured for loudness settles its K-weighting first, and the
    // stages before compute that look-back again for each piece: pieces of
    // at least 16 settlings keep both near 6%.
    for (const auto& m : measurers)
      if (m)
        piece_frames = std::max(piece_frames, kSettlingsAPiece * m->settle_frames());
    std::vector<std::int64_t> stage_ns(plan.stages.size(), 0);

    // Taken (nothing below throws). Each step's scratch belongs to the step
    // that made it.
    {
      std::lock_guard lock(scratch_mutex_);
      for (const auto& sc : scratch_)
        sc->work.step.clear();
    }
    steps_ = std::move(steps);
    plan_ = std::move(plan);
    welch_ = std::move(welch);
    measurers_ = std::move(measurers);
    peak_seen_ = std::move(peak_seen);
    piece_frames_ = piece_frames;
    stage_ns_ = std::move(stage_ns);
    {
      std::lock_guard lock(turn_mutex_);
      turn_ = 0;
      turn_broken_ = false;
    }
  }

public:
  // Chunks in flight: enough to keep every thread busy, two chunks' worth of
  // work queued when chunks are split into pieces.
  [[nodiscard]] int depth() const override {
    return static_cast<int>(
        std::max<std::int64_t>(3, 2 * pool_->size() / pieces(plan_.chunk_frames) + 1));
  }

  void submit(ChunkJob job) override {
    const std::int64_t pieces = this->pieces(job.frames);
    if (pieces <= 1) {
      in_flight_.push_back(
          pool_->enqueue([this, job = std::move(job)]() mutable { return run(std::move(job)); }));
      return;
    }
    // The pieces run as tasks of their own (none waits for another, so a full
    // pool cannot deadlock); the last one to finish assembles the result.
    auto state = std::make_shared<Pieces>();
    state->job = std::move(job);
    state->left = pieces;
    state->metrics.resize(static_cast<std::size_t>(pieces));
    state->spectra.resize(static_cast<std::size_t>(pieces));
    state->measured.resize(static_cast<std::size_t>(pieces));
    state->result = start_result(state->job);
    std::future<ChunkResult> done = state->done.get_future();
    std::int64_t queued = 0;
    try {
      for (; queued < pieces; ++queued)
        static_cast<void>(pool_->enqueue([this, state, p = queued] { run_piece(*state, p); }));
    } catch (...) {
      // Out of memory queueing: the pieces that never will run count as done
      // (failed), so the promise is still settled once.
      {
        std::lock_guard lock(state->error_mutex);
        if (!state->error)
          state->error = std::current_exception();
      }
      if ((state->left -= pieces - queued) == 0)
        state->done.set_exception(state->error);
      throw;
    }
    in_flight_.push_back(std::move(done));
  }

  [[nodiscard]] bool oldest_ready() const override {
    return !in_flight_.empty() &&
           in_flight_.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  ChunkResult retire() override {
    if (in_flight_.empty())
      throw internal_error("cpu backend: retire() with no chunk in flight");
    auto future = std::move(in_flight_.front());
    in_flight_.pop_front();
    return future.get();
  }

  // Per-stage compute time summed over chunks (and so over threads).
  [[nodiscard]] std::vector<double> stage_ms() const override {
    std::lock_guard lock(stats_mutex_);
    std::vector<double> ms;
    for (auto v : stage_ns_)
      ms.push_back(static_cast<double>(v) * 1e-6);
    return ms;
  }

  [[nodiscard]] std::string describe() const override {
    std::string d = "cpu backend: " + std::to_string(pool_->size()) +
                    (pool_->size() == 1 ? " thread, " : " threads, ") + cpu_model();
    for (const auto& step : steps_)
      if (step && !step->describe().empty())
        d += "; " + step->describe();
    return d;
  }

private:
  // Read once (/proc/cpuinfo is long on a big host, and a kept backend
  // describes itself for every file).
  static const std::string& cpu_model() {
    static const std::string model = [] {
      std::ifstream in("/proc/cpuinfo");
      std::string line;
      while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0)
          return line.substr(line.find(':') + 2);
      return std::string("cpu");
    }();
    return model;
  }

  std::unique_ptr<Scratch> take_scratch() {
    std::lock_guard lock(scratch_mutex_);
    if (scratch_.empty())
      return std::make_unique<Scratch>();
    auto s = std::move(scratch_.back());
    scratch_.pop_back();
    return s;
  }
  void give_scratch(std::unique_ptr<Scratch> s) {
    std::lock_guard lock(scratch_mutex_);
    scratch_.push_back(std::move(s));
  }

  // A chunk's result before its frames are computed: the output block and,
  // for --verify, the float planes and the source block.
  ChunkResult start_result(const ChunkJob& job) {
    const int ch = plan_.output_channels;
    ChunkResult r;
    r.index = job.index;
    r.start = job.start;
    r.frames = job.frames;
    r.source_frames = job.source_frames;
    r.metrics = empty_metrics(plan_);
    r.spectra.assign(plan_.metric_names.size(), SpectrumSums{});
    r.observed.resize(plan_.metric_names.size());
    r.measured.resize(plan_.metric_names.size());
    for (std::size_t j = 0; j < plan_.stages.size(); ++j) {
      const PlannedStage& st = plan_.stages[j];
      if (st.metrics_slot < 0 || !st.as<MetricsPlan>().loudness ||
          measurers_[static_cast<std::size_t>(st.metrics_slot)])
        continue;
      const FrameWindow own = plan_.owned(j, job.start, job.frames);
      const std::int64_t n =
          frames_inside(own.lo, own.size(), plan_.defined_in(j, job.source_frames));
      r.observed[static_cast<std::size_t>(st.metrics_slot)].assign(
          static_cast<std::size_t>(st.channels_in),
          std::vector<float>(static_cast<std::size_t>(n)));
    }
    r.output = outputs_->take(*this);
    r.output.frames = job.frames;
    if (options_.keep_float_output) {
      r.output_f32.assign(static_cast<std::size_t>(ch),
                          std::vector<float>(static_cast<std::size_t>(job.frames)));
      r.input = job.input;
    }
    return r;
  }

  ChunkResult run(ChunkJob job) {
    ChunkResult r = start_result(job);
    r.clipped = compute(job, 0, job.frames, r, r.metrics, r.spectra, r.measured);
    return r;
  }

  // Frames [first, first + frames) of the chunk (relative to its start):
  // writes their output samples into r.output (and r.output_f32), the
  // metrics of exactly those frames into `metrics` (and the spectrum sums of
  // the segments they own into `spectra`); returns the clip count.
  // A piece is a chunk of its own (its halo lies inside the chunk's input
  // block), so every output sample is computed as in any other chunking.
  std::int64_t compute(const ChunkJob& job, std::int64_t first, std::int64_t frames, ChunkResult& r,
                       std::vector<std::vector<ChannelMetrics>>& metrics,
                       std::vector<SpectrumSums>& spectra,
                       std::vector<ChunkResult::MeasuredLoudness>& measured) {
    // First, so that whatever ends this chunk early breaks the turns of a
    // plan that carries state rather than leaving later chunks waiting.
    ChunkTurn turn(*this, job.index);
    // After SIGINT/SIGTERM the queued work is dropped, not computed: the
    // run stops within a piece's time instead of finishing every chunk in
    // flight (over a second at 4095 taps direct on 2 cores).
    throw_if_interrupted();
    const Plan& plan = plan_;
    const int ch = plan.channels;
    const std::int64_t start = job.start + first;
    // This piece's source window, inside the chunk's input block.
    const FrameWindow piece = plan.source_window(start, frames);
    const std::int64_t offset = piece.lo - plan.source_window(job.start, job.frames).lo;
    const std::int64_t len = piece.size();
    auto scratch = take_scratch();
    Scratch& s = *scratch;
    s.source.resize(static_cast<std::size_t>(len * ch));
    std::vector<float*> src(static_cast<std::size_t>(ch));
    for (int c = 0; c < ch; ++c)
      src[static_cast<std::size_t>(c)] = s.source.data() + c * len;
    kernels::cpu::deinterleave(job.input, offset, len, src.data());

    // The output pairs with the source frame by frame unless the rate or the channels changed.
    const bool paired = plan.paired(plan.stages.size());
    auto source_at = [&](int c) -> const float* {
      return paired ? src[static_cast<std::size_t>(c)] + (start - piece.lo) : nullptr;
    };
    const std::vector<const float*> src_const(src.begin(), src.end());
    std::vector<std::int64_t> ns(plan.stages.size(), 0);
    // A metrics block that ends the chain and counts exactly this piece's
    // output frames measured the output itself (the walk hands it those
    // planes and, paired, the same source frames): its slot, whose metrics
    // the output's are, instead of a second pass over the same frames.
    std::optional<std::size_t> output_measured_by;
    const std::vector<const float*> cur = run_stages<float>(
        plan, steps_, start, frames, job.source_frames, src_const, s.work,
        [&](const PlannedStage& st, const std::vector<const float*>& y,
            const std::vector<const float*>& x, std::int64_t n, std::int64_t own_lo) {
          const auto slot = static_cast<std::size_t>(st.metrics_slot);
          for (std::size_t c = 0; c < y.size(); ++c)
            metrics[slot][c] = kernels::cpu::channel_metrics(y[c], x[c], n);
          if (&st == &plan.stages.back() && own_lo == start && n == frames)
            output_measured_by = slot;
          if (!r.observed[slot].empty() && n > 0) {
            // This piece's frames at their place in the chunk's (pieces run at once).
            const std::int64_t at = own_lo - observed_lo(st, job);
            for (std::size_t c = 0; c < y.size(); ++c)
              std::copy(y[c], y[c] + n, r.observed[slot][c].begin() + at);
          }
          if (welch_[slot] && n > 0)
            add_spectrum(*welch_[slot], y, n, own_lo, spectra[slot]);
          if (measurers_[slot]) {
            ChunkResult::MeasuredLoudness& l = measured[slot];
            measurers_[slot]->measure(y, own_lo, n, l.energy, l.sample_peak, l.true_peak,
                                      peak_seen_[slot].get());
            l.first = own_lo;
            l.frames = n;
          }
        },
        &ns, [&turn] { turn.take(); });
    turn.pass();
    {
      std::lock_guard lock(stats_mutex_);
      for (std::size_t j = 0; j < ns.size(); ++j)
        stage_ns_[j] += ns[j];
    }

    const int out_slot = plan.output_slot();
    const int out_ch = plan.output_channels;
    for (int c = 0; c < out_ch; ++c) {
      const auto cc = static_cast<std::size_t>(c);
      metrics[static_cast<std::size_t>(out_slot)][cc] =
          output_measured_by ? metrics[*output_measured_by][cc]
                             : kernels::cpu::channel_metrics(cur[cc], source_at(c), frames);
    }

    // The output block seen from this piece's first frame.
    HostBlock view = r.output;
    view.data = std::shared_ptr<std::byte>(
        r.output.data,
        r.output.data.get() + first * out_ch * static_cast<std::int64_t>(sample_bytes(view.type)));
    const std::int64_t clipped =
        kernels::cpu::interleave(cur.data(), frames, plan.output_bits, view);
    if (options_.keep_float_output)
      for (int c = 0; c < out_ch; ++c)
        std::copy(cur[static_cast<std::size_t>(c)], cur[static_cast<std::size_t>(c)] + frames,
                  r.output_f32[static_cast<std::size_t>(c)].begin() + first);
    give_scratch(std::move(scratch));
    return clipped;
  }

  // A piece's measured loudness after the pieces before it (consecutive
  // frames; a step across them gets both shares).
  static void append_measured(ChunkResult::MeasuredLoudness& into,
                              const ChunkResult::MeasuredLoudness& piece,
                              const kernels::cpu::Bs1770Meter& meter) {
    if (piece.frames == 0) // none of the block's frames (a later stage's tail)
      return;
    if (into.frames == 0) {
      into = piece;
      return;
    }
    if (piece.first != into.first + into.frames)
      throw internal_error("cpu backend: a loudness block's pieces are not consecutive");
    const std::int64_t a = meter.steps_touched(into.first, into.frames);
    const std::int64_t b = meter.steps_touched(piece.first, piece.frames);
    const std::int64_t total = meter.steps_touched(into.first, into.frames + piece.frames);
    const std::size_t channels = into.sample_peak.size();
    std::vector<double> e(channels * static_cast<std::size_t>(total), 0.0);
    for (std::size_t c = 0; c < channels; ++c) {
      double* row = e.data() + c * static_cast<std::size_t>(total);
      for (std::int64_t k = 0; k < a; ++k)
        row[k] += into.energy[c * static_cast<std::size_t>(a) + static_cast<std::size_t>(k)];
      for (std::int64_t k = 0; k < b; ++k)
        row[total - b + k] +=
            piece.energy[c * static_cast<std::size_t>(b) + static_cast<std::size_t>(k)];
      into.sample_peak[c] = std::max(into.sample_peak[c], piece.sample_peak[c]);
      into.true_peak[c] = std::max(into.true_peak[c], piece.true_peak[c]);
    }
    into.energy = std::move(e);
    into.frames += piece.frames;
  }

  // The first frame a metrics block owns in `job`'s chunk.
  [[nodiscard]] std::int64_t observed_lo(const PlannedStage& st, const ChunkJob& job) const {
    for (std::size_t j = 0; j < plan_.stages.size(); ++j)
      if (&plan_.stages[j] == &st)
        return plan_.owned(j, job.start, job.frames).lo;
    throw internal_error("cpu backend: a metrics block outside the plan");
  }

  // The segments whose last frame is in [own_lo, own_lo + n), from y[c]
  // (frame own_lo; the stage's look-back of nfft - 1 frames lies before it).
  void add_spectrum(const kernels::cpu::Welch& welch, const std::vector<const float*>& y,
                    std::int64_t n, std::int64_t own_lo, SpectrumSums& sums) const {
    const auto bins = static_cast<std::size_t>(welch.bins());
    const std::int64_t back = welch.nfft() - 1;
    if (sums.power.empty())
      sums.power.assign(y.size() * bins, 0.0);
    std::int64_t segments = 0;
    for (std::size_t c = 0; c < y.size(); ++c)
      segments = welch.add(y[c] - back, own_lo - back, n + back, own_lo, own_lo + n,
                           std::span<double>(sums.power.data() + c * bins, bins));
    sums.segments += segments;
  }

  // How many pieces a chunk of `frames` frames runs as (at least one).
  [[nodiscard]] std::int64_t pieces(std::int64_t frames) const {
    return std::max<std::int64_t>(1, (frames + piece_frames_ - 1) / piece_frames_);
  }

  // A chunk cut into pieces of piece_frames_ that run on the pool at once.
  struct Pieces {
    ChunkJob job;
    ChunkResult result;
    std::vector<std::vector<std::vector<ChannelMetrics>>> metrics;    // [piece][slot][channel]
    std::vector<std::vector<SpectrumSums>> spectra;                   // [piece][slot]
    std::vector<std::vector<ChunkResult::MeasuredLoudness>> measured; // [piece][slot]
    std::atomic<std::int64_t> clipped{0};
    std::atomic<std::int64_t> left{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    std::promise<ChunkResult> done;
  };

  void run_piece(Pieces& st, std::int64_t p) {
    try {
      const std::int64_t first = p * piece_frames_;
      const std::int64_t frames = std::min(piece_frames_, st.job.frames - first);
      auto& m = st.metrics[static_cast<std::size_t>(p)];
      m = empty_metrics(plan_);
      auto& sp = st.spectra[static_cast<std::size_t>(p)];
      sp.assign(plan_.metric_names.size(), SpectrumSums{});
      auto& l = st.measured[static_cast<std::size_t>(p)];
      l.resize(plan_.metric_names.size());
      st.clipped += compute(st.job, first, frames, st.result, m, sp, l);
    } catch (...) {
      std::lock_guard lock(st.error_mutex);
      if (!st.error)
        st.error = std::current_exception();
    }
    if (--st.left > 0)
      return;
    // The last piece: metrics merge in piece order (the same sums on every run
    // and thread count), then the result is handed over.
    if (st.error) {
      st.done.set_exception(st.error);
      return;
    }
    try {
      for (const auto& piece : st.metrics)
        for (std::size_t slot = 0; slot < piece.size(); ++slot)
          for (std::size_t c = 0; c < piece[slot].size(); ++c)
            st.result.metrics[slot][c].merge(piece[slot][c]);
      for (const auto& piece : st.spectra)
        for (std::size_t slot = 0; slot < piece.size(); ++slot)
          st.result.spectra[slot].merge(piece[slot]);
      for (const auto& piece : st.measured)
        for (std::size_t slot = 0; slot < piece.size(); ++slot)
          if (measurers_[slot])
            append_measured(st.result.measured[slot], piece[slot], *measurers_[slot]);
      st.result.clipped = st.clipped.load();
      st.done.set_value(std::move(st.result));
    } catch (...) {
      st.done.set_exception(std::current_exception());
    }
  }

  // A chunk's turn at the stages that carry state: take() waits until every
  // chunk before it has passed them (chunks are queued in index order on a
  // FIFO pool, so the chunk whose turn it is has started and never waits for
  // a later one); pass() hands the turn on. A chunk that ends without
  // passing (a failure, an interruption) breaks the turns, so the chunks
  // waiting behind it fail instead of waiting for ever.
  class ChunkTurn {
  public:
    ChunkTurn(CpuBackend& b, std::int64_t index) : b_(b), index_(index) {}
    ChunkTurn(const ChunkTurn&) = delete;
    ChunkTurn& operator=(const ChunkTurn&) = delete;
    ~ChunkTurn() {
      if (done_ || !b_.plan_.carries_state())
        return;
      {
        std::lock_guard lock(b_.turn_mutex_);
        b_.turn_broken_ = true;
      }
      b_.turn_cv_.notify_all();
    }
    void take() {
      if (held_)
        return;
      std::unique_lock lock(b_.turn_mutex_);
      b_.turn_cv_.wait(lock, [&] { return b_.turn_ == index_ || b_.turn_broken_; });
      if (b_.turn_ != index_)
        throw internal_error("chunk " + std::to_string(index_) +
                             ": an earlier chunk failed before it passed the stages that carry "
                             "state");
      held_ = true;
    }
    // After the chunk's stages: hands the turn to the next chunk.
    void pass() {
      if (b_.plan_.carries_state()) {
        take(); // (every chunk visits every stage, so it holds the turn already)
        {
          std::lock_guard lock(b_.turn_mutex_);
          ++b_.turn_;
        }
        b_.turn_cv_.notify_all();
      }
      done_ = true;
    }

  private:
    CpuBackend& b_;
    std::int64_t index_;
    bool held_ = false;
    bool done_ = false;
  };

  // Frames per piece of a chunk: small enough that a chunk of 2^20 frames
  // keeps 16 threads busy, large enough that the halo recomputed per piece
  // (K - 1 frames per fir stage) stays a small fraction.
  static constexpr std::int64_t kPieceFrames = 65536;

  Plan plan_; // the plan being run (a copy: a kept backend outlives its file's)
  // The windows and the longest chunk of the plan prepared (adopt takes no longer ones).
  std::vector<std::int64_t> prepared_window_;
  std::int64_t prepared_chunk_ = 0;
  BackendOptions options_;
  std::int64_t piece_frames_ = 1; // kPieceFrames, or one group of FFT blocks if more
  std::unique_ptr<ThreadPool> pool_;
  std::deque<std::future<ChunkResult>> in_flight_;
  std::mutex turn_mutex_; // the turns at the stages that carry state (ChunkTurn)
  std::condition_variable turn_cv_;
  std::int64_t turn_ = 0;
  bool turn_broken_ = false;
  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<Scratch>> scratch_;
  mutable std::mutex stats_mutex_;
  std::vector<std::int64_t> stage_ns_;
  std::vector<std::unique_ptr<const kernels::cpu::Welch>>
      welch_; // [slot]: the blocks with a spectrum
  // [slot]: the loudness blocks the workers measure (see prepare()).
  std::vector<std::unique_ptr<const kernels::cpu::Bs1770Meter>> measurers_;
  std::vector<std::unique_ptr<std::atomic<float>>> peak_seen_; // [slot]: theirs (measure())
  static constexpr std::int64_t kSettlingsAChunk = 8, kSettlingsAPiece = 16;
  CpuSteps steps_; // per stage (null for observers), shared by the workers
  std::shared_ptr<OutputBlocks> outputs_;
};

} // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

} // namespace sigstream
