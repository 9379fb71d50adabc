// The CPU backend: the reference semantics of a chunk, run on a thread pool.
#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <future>
#include <mutex>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/reduce.hpp"
#include "pipeline/backends/backend.hpp"
#include "pipeline/backends/cpu_chunk.hpp"

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
    if (!raw.data) raw = backend.make_block(type_, channels_, capacity_);
    HostBlock out = raw;
    out.frames = 0;
    out.data = std::shared_ptr<std::byte>(raw.data.get(), [self = shared_from_this(), raw](std::byte*) mutable {
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
    plan_ = &plan;
    options_ = options;
    const int threads = options.threads > 0 ? options.threads : hardware_threads();
    pool_ = std::make_unique<ThreadPool>(threads);
    stage_ns_.assign(plan.stages.size(), 0);
    fft_ = make_fft_stages(plan);
    outputs_ = std::make_shared<OutputBlocks>(plan.output_type, plan.channels,
                                              std::max<std::int64_t>(1, plan.chunk_length(0)));
  }

  [[nodiscard]] int depth() const override { return 2 * pool_->size(); }

  void submit(ChunkJob job) override {
    in_flight_.push_back(pool_->enqueue([this, job = std::move(job)]() mutable { return run(std::move(job)); }));
  }

  [[nodiscard]] bool oldest_ready() const override {
    return !in_flight_.empty() &&
           in_flight_.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  ChunkResult retire() override {
    if (in_flight_.empty()) throw internal_error("cpu backend: retire() with no chunk in flight");
    auto future = std::move(in_flight_.front());
    in_flight_.pop_front();
    return future.get();
  }

  // Per-stage compute time summed over chunks (and so over threads).
  [[nodiscard]] std::vector<double> stage_ms() const override {
    std::lock_guard lock(stats_mutex_);
    std::vector<double> ms;
    for (auto v : stage_ns_) ms.push_back(static_cast<double>(v) * 1e-6);
    return ms;
  }

  [[nodiscard]] std::string describe() const override {
    std::string d = "cpu backend: " + std::to_string(pool_->size()) +
                    (pool_->size() == 1 ? " thread, " : " threads, ") + cpu_model();
    for (std::size_t j = 0; j < fft_.size(); ++j)
      if (fft_[j])
        d += "; fir '" + plan_->stages[j].name + "': " +
             (kernels::cpu::FirFft::available()
                  ? "fft overlap-save (KissFFT), " + std::to_string(fft_[j]->taps()) + " taps, blocks of " +
                        std::to_string(fft_[j]->fft_size())
                  : std::string("fft asked, built without KissFFT: float64 direct sum"));
    return d;
  }

 private:
  static std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "cpu";
  }

  std::unique_ptr<Scratch> take_scratch() {
    std::lock_guard lock(scratch_mutex_);
    if (scratch_.empty()) return std::make_unique<Scratch>();
    auto s = std::move(scratch_.back());
    scratch_.pop_back();
    return s;
  }
  void give_scratch(std::unique_ptr<Scratch> s) {
    std::lock_guard lock(scratch_mutex_);
    scratch_.push_back(std::move(s));
  }

  ChunkResult run(ChunkJob job) {
    const Plan& plan = *plan_;
    const int ch = plan.channels;
    const std::int64_t len = job.input.frames;  // frames + back + ahead
    auto scratch = take_scratch();
    Scratch& s = *scratch;
    s.work.fft = &fft_;
    s.source.resize(static_cast<std::size_t>(len * ch));

    auto planes = [&](std::vector<float>& v, std::int64_t stride) {
      std::vector<float*> p(static_cast<std::size_t>(ch));
      for (int c = 0; c < ch; ++c) p[static_cast<std::size_t>(c)] = v.data() + c * stride;
      return p;
    };
    const auto src = planes(s.source, len);
    kernels::cpu::deinterleave(job.input, 0, len, src.data());

    ChunkResult r;
    r.index = job.index;
    r.start = job.start;
    r.frames = job.frames;
    r.metrics.assign(plan.metric_names.size(), std::vector<ChannelMetrics>(static_cast<std::size_t>(ch)));

    auto source_at = [&](int c) { return src[static_cast<std::size_t>(c)] + plan.back; };
    const std::vector<const float*> src_const(src.begin(), src.end());
    std::vector<std::int64_t> ns(plan.stages.size(), 0);
    const std::vector<const float*> cur = run_stages<float>(
        plan, job.start, src_const, len, s.work, [&](const PlannedStage& st, const std::vector<const float*>& in) {
          const std::int64_t n = frames_inside(job.start, job.frames, st.frames_in);
          for (int c = 0; c < ch; ++c)
            r.metrics[static_cast<std::size_t>(st.metrics_slot)][static_cast<std::size_t>(c)] =
                kernels::cpu::channel_metrics(in[static_cast<std::size_t>(c)] + st.in_back, source_at(c), n);
        },
        &ns);
    {
      std::lock_guard lock(stats_mutex_);
      for (std::size_t j = 0; j < ns.size(); ++j) stage_ns_[j] += ns[j];
    }

    const int out_slot = plan.output_slot();
    for (int c = 0; c < ch; ++c)
      r.metrics[static_cast<std::size_t>(out_slot)][static_cast<std::size_t>(c)] =
          kernels::cpu::channel_metrics(cur[static_cast<std::size_t>(c)], source_at(c), job.frames);

    r.output = outputs_->take(*this);
    r.clipped = kernels::cpu::interleave(cur.data(), job.frames, plan.output_bits, r.output);
    if (options_.keep_float_output) {
      r.output_f32.resize(static_cast<std::size_t>(ch));
      for (int c = 0; c < ch; ++c)
        r.output_f32[static_cast<std::size_t>(c)].assign(cur[static_cast<std::size_t>(c)],
                                                         cur[static_cast<std::size_t>(c)] + job.frames);
      r.input = std::move(job.input);
    }
    give_scratch(std::move(scratch));
    return r;
  }

  const Plan* plan_ = nullptr;
  BackendOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::deque<std::future<ChunkResult>> in_flight_;
  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<Scratch>> scratch_;
  mutable std::mutex stats_mutex_;
  std::vector<std::int64_t> stage_ns_;
  FftStages fft_;  // per stage: the FFT kernel of fir stages whose method is fft
  std::shared_ptr<OutputBlocks> outputs_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace sigstream
