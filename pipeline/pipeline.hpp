#pragma once
// The flow of one job: source -> reader thread -> backend (chunks in flight)
// -> writer thread (audio sink, statistics, verification), with progress and
// the report that becomes the statistics JSON/CSV.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/task_thread.hpp"
#include "model/report.hpp"
#include "pipeline/backends/backend.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/atomic_file.hpp"

namespace sigstream {

struct RunReport;

// The files a run is about to commit (RunOptions::before_commit).
struct CommitFiles {
  std::optional<FileIdentity> output; // the audio output
  std::optional<FileIdentity> csv;    // stats.csv
};

// A batch worker's reader and writer threads, kept from file to file.
struct RunThreads {
  TaskThread reader, writer;
};

struct RunOptions {
  bool verify = false;     // compare with the float64 CPU reference
  bool progress = false;   // draw a progress bar on stderr
  double tolerance = 1e-5; // relative L2 error allowed by --verify
  // The process exits right after this run (the CLI): leave the backend's
  // device and pinned memory to the OS instead of freeing them one by one,
  // which takes a noticeable fraction of a short run with CUDA.
  bool exiting = false;
  // Keep every chunk's metrics row in RunReport::metrics[].chunks. The CLI
  // keeps them only for a statistics file (a day-long stream has some
  // 60,000 chunks); stats.json / stats.csv keep them whatever this says.
  bool chunk_rows = true;
  // A backend kept from one run to the next (a batch worker's): the run
  // takes it when it adopts the run's plan (adopt_kept_backend), else makes
  // its own, and leaves its backend here when it ends well (on an error the
  // backend goes, and this is empty). nullptr: the run's backend is its own.
  std::unique_ptr<Backend>* kept_backend = nullptr;
  // Threads kept from one run to the next (a batch worker's) for the run's
  // reader and writer, one run at a time (a second run while one is on them
  // gets threads of its own); nullptr: the run makes its own
  // (core/task_thread.hpp).
  RunThreads* threads = nullptr;
  // Called with the finished report after every output is written and
  // finished (the audio's header too) and before any is committed, with the
  // identities of the audio and CSV files about to be committed (nullopt
  // where none, or standard output): the batch writes its statistics record
  // there. Commits then go audio, JSON (stats.json), CSV.
  std::function<void(const RunReport&, const CommitFiles&)> before_commit;
  // The CSV statistics' temporary gets its hidden name (name_temporary())
  // before before_commit, so that it outlives a process killed before its
  // commit: the batch completes such a commit on a retry (pipeline/batch_commit.hpp).
  bool name_csv_before_commit = false;
  // Informational messages (backend choice, format notes); nullptr = silent.
  std::function<void(const std::string&)> log;
  // Called once the run's backend is made and prepared (or kept), before the
  // first chunk: a batch starts its next GPU once this GPU's workers hold
  // their lanes.
  std::function<void()> backend_ready;
  // When the run began, if before this call (a first pass's run: the
  // statistics' wall time counts both passes).
  std::optional<std::chrono::steady_clock::time_point> started;
};

// Runs a validated config to the end: writes the sink and statistics files
// atomically. Throws Error; a verification beyond tolerance is reported in
// the RunReport (verification.passed == false), with every output written.
RunReport run_pipeline(const Config& config, const RunOptions& options);

// Picks and creates the backend: `automatic` takes CUDA when a device exists,
// else the CPU (and says why through `log`). `cuda` without a device is
// Error(cuda). Implemented in pipeline/backends/factory.cpp.
std::unique_ptr<Backend> make_backend(BackendKind kind, int device,
                                      const std::function<void(const std::string&)>& log);

// The backend for a run of `config` on `device`, with the plan's `auto`
// methods resolved for it. `automatic` on a machine with the NVIDIA driver
// goes further than make_backend (README "Backends"): a plan whose stages
// give the same bits on both backends runs on the CPU alone when that should
// finish before CUDA could pay off, else on the hybrid backend (CPU while the
// GPU starts); other plans go to make_backend.
std::unique_ptr<Backend> choose_backend(const Config& config, int device, Plan& plan,
                                        const std::function<void(const std::string&)>& log);
// The first of `stages` whose kind has no CUDA step yet (iir): such a job
// runs on the CPU under `auto`, and `cuda` refuses it with cpu_only_message.
// Null when every stage has one (or this build has no CUDA at all).
[[nodiscard]] const StageSpec* cpu_only_stage(const std::vector<StageSpec>& stages);
[[nodiscard]] std::string cpu_only_message(const StageSpec& stage);
// Whether `kept`, a backend a previous run prepared, takes `plan` (its
// methods resolved as choose_backend would for the backend config names, cpu
// or cuda; never for auto) with `options` (Backend::adopt). On success `plan`
// holds the resolved methods.
bool adopt_kept_backend(Backend& kept, const Config& config, int device, Plan& plan,
                        const BackendOptions& options);

struct DeviceDescription {
  int ordinal = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;
  int multiprocessors = 0;
};
// CUDA devices visible (empty when none or when built without CUDA).
std::vector<DeviceDescription> list_devices();
// Creates these devices' CUDA contexts at once, in parallel (nothing without CUDA).
void start_devices(const std::vector<int>& devices);
[[nodiscard]] bool cuda_built() noexcept;
// Whether this build holds the fused cuFFTDx FFT engine (the cuFFTDx headers
// were found at build time); false without CUDA.
[[nodiscard]] bool fused_fft_engine_built() noexcept;

} // namespace sigstream
