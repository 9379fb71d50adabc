// The hybrid backend (see make_hybrid_backend in backend.hpp). Creating a
// CUDA context takes ~0.2 s on the machines we measured, about twice the
// I/O time of a 10-minute stereo file; the CPU threads fill that time with
// real chunks instead of waiting. Which backend gets chunk i depends on
// timing, so this is used only where both give the same bits (direct FIR,
// gain): the output file does not depend on the split. Statistics sums are
// float64 in either case; their last digits can differ with the split.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "pipeline/backends/backend.hpp"

namespace sigstream {

namespace {

using Clock = std::chrono::steady_clock;

class HybridBackend final : public Backend {
public:
  HybridBackend(std::unique_ptr<Backend> cpu, std::function<int()> count_gpus,
                std::function<std::unique_ptr<Backend>()> make_gpu,
                std::function<void(const std::string&)> log)
      : cpu_(std::move(cpu)), count_gpus_(std::move(count_gpus)), make_gpu_(std::move(make_gpu)),
        log_(std::move(log)) {}

  // A GPU still starting is waited for (its thread uses this object). Then
  // both backends go, explicitly, before plan_: chunks still queued on the
  // CPU (an error path) run to the end in its destructor and read the plan.
  ~HybridBackend() override {
    if (gpu_future_.valid())
      gpu_future_.wait();
    gpu_.reset();
    cpu_.reset();
  }

  [[nodiscard]] std::string name() const override {
    if (gpu_chunks_ > 0 && cpu_chunks_ > 0)
      return gpu()->name() + "+cpu";
    return gpu_chunks_ > 0 ? gpu()->name() : cpu_->name();
  }

  [[nodiscard]] std::string device_name() const override {
    if (gpu_chunks_ > 0 && cpu_chunks_ > 0)
      return gpu()->device_name() + " + " + cpu_->device_name();
    return gpu_chunks_ > 0 ? gpu()->device_name() : cpu_->device_name();
  }

  void prepare(const Plan& plan, const BackendOptions& options) override {
    plan_ = plan; // the GPU thread's own copy: it may outlive the caller's plan
    options_ = options;
    started_ = Clock::now();
    cpu_->prepare(plan_, options);
    gpu_future_ = std::async(std::launch::async, [this]() -> std::unique_ptr<Backend> {
      const int n = count_gpus_(); // the driver's start: fast where there is none
      gpus_found_.store(n > 0 ? 1 : 0);
      if (n <= 0)
        return nullptr;
      std::unique_ptr<Backend> gpu = make_gpu_();
      if (!gpu)
        return nullptr;
      gpu->prepare(plan_, options_);
      return gpu;
    });
  }

  [[nodiscard]] int depth() const override {
    poll();
    // Once the GPU is up it takes every new chunk; CPU chunks still running
    // count on top so that they do not hold the GPU's lanes back.
    return gpu() ? gpu()->depth() + cpu_in_flight_ : cpu_->depth();
  }

  [[nodiscard]] HostBlock make_block(SampleType type, int channels, std::int64_t frames) override {
    poll();
    return gpu() ? gpu()->make_block(type, channels, frames)
                 : cpu_->make_block(type, channels, frames);
  }

  [[nodiscard]] bool block_suits(const HostBlock& block) const override {
    poll();
    return !gpu() || block.pinned;
  }

  void submit(ChunkJob job) override {
    poll();
    const bool to_gpu = gpu() != nullptr;
    if (to_gpu) {
      gpu()->submit(std::move(job));
      ++gpu_chunks_;
    } else {
      cpu_->submit(std::move(job));
      ++cpu_chunks_;
      ++cpu_in_flight_;
    }
    order_.push_back(to_gpu);
  }

  [[nodiscard]] bool oldest_ready() const override {
    if (order_.empty())
      return false;
    return order_.front() ? gpu()->oldest_ready() : cpu_->oldest_ready();
  }

  ChunkResult retire() override {
    if (order_.empty())
      throw internal_error("hybrid backend: retire() with no chunk in flight");
    const bool from_gpu = order_.front();
    order_.pop_front();
    if (from_gpu)
      return gpu()->retire();
    --cpu_in_flight_;
    return cpu_->retire();
  }

  [[nodiscard]] std::vector<double> stage_ms() const override {
    std::vector<double> ms = cpu_->stage_ms();
    if (Backend* g = gpu()) {
      const std::vector<double> gms = g->stage_ms();
      if (ms.size() < gms.size())
        ms.resize(gms.size(), 0.0);
      for (std::size_t i = 0; i < gms.size(); ++i)
        ms[i] += gms[i];
    }
    return ms;
  }

  [[nodiscard]] std::string summary() const override {
    poll();
    const std::int64_t cpu = cpu_chunks_.load(), gpu = gpu_chunks_.load();
    const std::string dev = "CUDA device " + std::to_string(options_.device);
    if (gpus_found_.load() == 0)
      return "backend auto: no CUDA device found, used the CPU backend";
    if (gpu_ready_note_.empty())
      return "backend auto: the CPU computed all " + std::to_string(cpu) + " chunks while " + dev +
             " was starting";
    if (!gpu_)
      return "backend auto: " + gpu_ready_note_ + ", used the CPU backend";
    return "backend auto: " + dev + " (" + gpu_->device_name() + ") " + gpu_ready_note_ +
           "; the CPU computed " + std::to_string(cpu) + " of " + std::to_string(cpu + gpu) +
           " chunks, the GPU the rest (the same bits either way)";
  }

private:
  // Takes the GPU backend once its start has finished (never blocks).
  [[nodiscard]] Backend* gpu() const { return gpu_raw_.load(std::memory_order_acquire); }

  // The reader thread (make_block) and the pipeline thread both poll.
  void poll() const {
    if (gpu() != nullptr)
      return;
    std::lock_guard lock(poll_mutex_);
    if (!gpu_future_.valid() ||
        gpu_future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      return;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
    char when[64];
    std::snprintf(when, sizeof when, "%.0f ms", ms);
    try {
      gpu_ = gpu_future_.get();
      if (gpu_) {
        gpu_raw_.store(gpu_.get(), std::memory_order_release);
        gpu_ready_note_ = std::string("was ready after ") + when;
        trace("hybrid: gpu ready");
        if (log_) {
          if (const std::string d = gpu_->describe(); !d.empty())
            log_(d);
        }
      } else {
        gpu_ready_note_ = "found no CUDA device";
      }
    } catch (const Error& e) {
      // A config error (a device that does not exist) stays one, as with
      // --backend cuda; anything else leaves the job to the CPU.
      if (e.kind() == ErrorKind::config)
        throw;
      note_failure(e.what());
    } catch (const std::exception& e) {
      note_failure(e.what());
    }
  }

  void note_failure(const char* what) const {
    gpu_ready_note_ = "CUDA failed to start";
    gpus_found_.store(-2);
    if (log_)
      log_(std::string("backend auto: CUDA failed to start (") + what +
           "); the CPU does the whole job");
  }

  std::unique_ptr<Backend> cpu_;
  std::function<int()> count_gpus_;
  std::function<std::unique_ptr<Backend>()> make_gpu_;
  mutable std::atomic<int> gpus_found_{-1}; // -1 not known yet, 0 none, 1 some
  std::function<void(const std::string&)> log_;
  Plan plan_;
  BackendOptions options_;
  Clock::time_point started_;
  mutable std::future<std::unique_ptr<Backend>> gpu_future_;
  mutable std::unique_ptr<Backend> gpu_; // owner; set once, under poll_mutex_
  mutable std::atomic<Backend*> gpu_raw_{nullptr};
  mutable std::mutex poll_mutex_;
  mutable std::string gpu_ready_note_;
  std::deque<bool> order_; // per chunk in flight: true = GPU
  std::atomic<std::int64_t> gpu_chunks_{0}, cpu_chunks_{0};
  int cpu_in_flight_ = 0;
};

} // namespace

std::unique_ptr<Backend> make_hybrid_backend(std::unique_ptr<Backend> cpu,
                                             std::function<int()> count_gpus,
                                             std::function<std::unique_ptr<Backend>()> make_gpu,
                                             std::function<void(const std::string&)> log) {
  return std::make_unique<HybridBackend>(std::move(cpu), std::move(count_gpus), std::move(make_gpu),
                                         std::move(log));
}

} // namespace sigstream
