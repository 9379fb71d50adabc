#pragma once
// `sigstream batch` (SPEC §1, §2 `batch:`): one config over many input files.
//
// Inputs. `batch.inputs` (config) and the command-line inputs are each one of:
//   - a glob (glob(3): * ? [..] {a,b} ~, plus one `**` component meaning "zero or
//     more folders"): every match is taken, whatever its extension; a folder that
//     matches is walked like a folder input;
//   - a folder: every audio file under it, recursively (by extension: wav, flac,
//     aif/aiff, ogg/oga, opus, mp3, caf, w64, rf64, au/snd, ...), hidden entries
//     skipped;
//   - a plain file path (taken even if missing: it then fails like any bad file).
// Matches inside out_dir are left out of glob and folder expansions, so outputs
// never become inputs. A file named twice is run once. The list is sorted by path.
//
// Outputs. out_dir/<subfolder>/<input stem><sink extension>, where <subfolder>
// mirrors the input's folder relative to the glob's fixed prefix (the folders
// before the first wildcard) or the folder input itself; a plain path has
// none (its outputs do not move when other files join the batch, so resume
// finds them). Statistics go next to each output:
// <stem>.json always, <stem>.csv when the config has stats.csv. Without
// sink.file only the statistics are written. The batch summary is
// out_dir/batch_summary.json and .csv (or BatchOptions::summary_json; a
// shard's: batch_summary.I-of-N.json). BatchOptions::items replaces the
// expansion with an explicit list (`--inputs-from`). Two inputs mapping to one
// output, or an output that is an input, is an Error(config) raised before
// any work, for the whole list (every shard of a job fails alike).
//
// Shards (pipeline/batch_shard.hpp): BatchOptions::shard runs the files at
// positions I, I+N, ... of the whole sorted list.
//
// Resume. A file is skipped ("skipped", up to date) when its output, JSON and
// CSV all exist, none is older than the input, the config file or a taps_file,
// the JSON names this input and holds no failed verification (and holds one if
// --verify was asked), and the JSON's own record of the effective config that
// made it ("batch": {"config_fingerprint": ...}, see batch_config_fingerprint)
// matches this run's. The record is per file, never taken from the summary: a
// summary can be missing, or be left by a run with another config that was
// killed partway. `force` redoes everything. The batch removes a file's old
// JSON before running it and commits the new one itself, last, after
// run_pipeline has committed the audio and then the CSV atomically, so an
// interrupted batch leaves complete files (JSON and record included) or files
// a re-run finishes, and a re-run goes on from where it stopped.
// Exactly once (SPEC §10, pipeline/batch_commit.hpp): the JSON, written before
// the first commit, records the identities of the audio and CSV being
// committed, and it and the CSV get hidden temporary names right before the
// commits. A file whose JSON is missing but which has such a record of a dead
// writer on this host, made by this config and naming the audio at its path
// (and the CSV), is completed (the rest renamed into place) and skipped, not
// redone: each output is committed once even when a worker is killed between
// two commits. Temporaries a killed run left next to any file's targets are
// then removed: only those of dead writers on this host (remove_stale_temps,
// atomic_file.hpp); the log counts those of other hosts and of live writers,
// left alone. (Not where sweep_temps is false: a Dask task's batch, whose
// driver has each worker sweep once at the end.) Unless `force`, a worker
// checks a file again (completion included) just before running it: one
// that another process committed since the batch started (an engine's
// retry, a shard run twice) is skipped, not committed a second time. A bad
// file is a failed entry of the summary.
//
// Scheduling. CUDA: `files_per_device` workers per device listed in
// execution.device (default: every device; from the command line those of
// them whose start the files' work pays, narrow_visible_devices; default
// count: auto_files_per_device), each running whole files on
// its device, so that reading, writing and compute of different files
// overlap. A worker keeps its backend (lanes, steps, device and pinned
// buffers) from file to file while the files' plans fit it
// (RunOptions::kept_backend).
// Backend auto with every device (no execution.device), where every CPU
// thread should end the whole batch before a GPU's start pays
// (batch_cpu_alone_finishes): the CPU backend alone, the driver never asked.
// Else, where a file is short for the CPU (its estimate on one thread under
// a CUDA start: batch_cpu_helps): CPU workers (at most 16, at nice + 10)
// start on the files at once while one thread lists the devices (the
// driver's start: 0.1 s to 1 s) and makes device 0's context, if the work
// left still pays for it (first_device_pays); the CPU workers then take no
// new file (the cores become the GPUs' readers and writers) and that
// device's workers join. The next devices start as under CUDA. Each file
// runs whole on one backend; its statistics say which.
// CPU: the thread budget (execution.threads, 0 = hardware threads) is split
// over min(files, budget) workers, each file's pipeline getting budget/workers
// threads. Files are handed out largest first (by bytes) to whichever worker is
// free. Without keep_going the first failure stops handing out files (files in
// flight finish); SIGINT/SIGTERM stops handing out files and the files in
// flight end with Error(interrupted), leaving nothing behind.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"

namespace sigstream {

class CanonicalPaths; // pipeline/canonical_path.hpp

// One input and where its results go.
struct BatchItem {
  std::string input;
  std::string subdir; // mirrored folder under out_dir ("" = top level)
  std::string output; // "" when the config has no sink.file
  std::string stats_json;
  std::string stats_csv;    // "" unless the config has stats.csv
  std::uintmax_t bytes = 0; // input size (0 if missing)
};

// One of `count` shards of a batch: the files at positions index,
// index + count, index + 2*count, ... of the sorted input list (SPEC §10).
struct BatchShard {
  int index = 0;
  int count = 1;
};

// What a shard's summary records about its whole job ("shard" in the
// summary JSON), so that `batch --merge` can tell shards of one job.
struct BatchShardRecord {
  BatchShard shard;
  std::string inputs_sha256;    // of the whole sorted list (batch_input_list), before sharding
  std::string config_sha256;    // of batch_config_facts: what determines the outputs
  std::size_t inputs_total = 0; // files in the whole list
};

struct BatchOptions {
  std::vector<std::string> extra_inputs; // command-line inputs (files, folders, globs)
  std::optional<std::string> out_dir;    // overrides batch.out_dir
  std::optional<bool> keep_going;        // overrides batch.keep_going
  std::optional<BackendKind> backend;    // overrides execution.backend (--backend)
  bool force = false;                    // redo files that are up to date
  bool progress = false;                 // draw the batch progress line (stderr, terminals only)
  bool quiet = false;                    // log only failures
  bool verify = false;                   // --verify for every file (a failed check fails the file)
  double tolerance = 1e-5;
  std::string config_path;        // for the up-to-date check (mtime); may be empty
  std::string summary_json;       // default out_dir/batch_summary.json; CSV: same stem, .csv
  std::string inputs_from;        // the input list's file (--inputs-from), never written over
  int files_per_device = 0;       // CUDA: files in flight per GPU (0: auto, plan_batch_workers)
  int device_count_override = -1; // >= 0: pretend this many CUDA devices exist (tests)
  // Backend auto (see "Scheduling"): how the batch learns the number of CUDA
  // devices while its CPU workers run; default: list_devices(). Tests inject
  // a slow or blocking one.
  std::function<int()> count_devices;
  // With count_devices: makes a device's context (default start_devices).
  std::function<void(int)> start_device;
  // Backend auto: a file's CPU seconds on one thread from its plan (default
  // cpu_seconds_estimate). Tests inject what their fake runs cost.
  std::function<double(const Plan&)> cpu_file_estimate;
  // A file's seconds on one GPU from its plan (the CUDA methods resolved;
  // default cuda_seconds_estimate), for narrow_visible_devices' count.
  std::function<double(const Plan&)> gpu_file_estimate;
  // The process ends right after the batch (the CLI, which leaves with
  // _Exit): the batch does not wait for a CUDA driver or context start still
  // under way when every file is done. Elsewhere (Python) it waits for it.
  bool detach_device_start = false;
  // The process is the batch's own (the CLI): before the CUDA driver starts,
  // the batch cuts CUDA_VISIBLE_DEVICES to the GPUs it can use
  // (pipeline/visible_devices.hpp), since the driver's start grows with every
  // GPU it sees: of execution.device (default: every GPU), one GPU where the
  // files are light work (under 0.6 s of one CPU core each,
  // batch_cpu_helps), which the host's reading and writing bound, not the
  // GPUs; else as many as the batch's GPU work pays the start of
  // (gpus_that_pay), the lowest-numbered of them; not for a shard (its
  // list's highest). Elsewhere (Python, where the process may hold other
  // CUDA users) the environment is left alone.
  bool narrow_visible_devices = false;
  // With narrow_visible_devices: the GPUs seen are those the work pays the
  // start of (above). False (the CLI under SIGSTREAM_ALL_GPUS=1): every GPU
  // of execution.device, up to its highest, as before stop 47.
  bool choose_gpus = true;
  // The driver of a distributed batch asked this task's batch to stop (a
  // Ctrl-C there; python/sigstream/_dask_driver.py): polled before each file
  // is handed out, as a signal is. The files in flight finish, the others
  // are not_run entries and the summary says interrupted. Default: never.
  // Called from the batch's worker threads with its scheduling lock held
  // (every 5 ms while a device starts): it must be thread-safe, cheap and
  // non-blocking (no GIL), and not call into the batch; an exception it
  // throws counts as a stop.
  std::function<bool()> stop_requested;
  // Lines for the user (no trailing newline). Failures are logged even when quiet.
  std::function<void(const std::string&)> log;
  // Runs one file; default run_pipeline. Tests inject a fake to exercise the
  // scheduler without a GPU.
  std::function<RunReport(const Config&, const RunOptions&)> runner;
  std::vector<BatchItem>
      items; // explicit inputs and outputs: used instead of expanding inputs when non-empty
  std::optional<BatchShard> shard; // run only this shard's files (pipeline/batch_shard.hpp)
  bool write_summary = true; // false: return the summary without writing files (Python/Dask tasks)
  // false: the batch does not sweep its targets' folders for stale
  // temporaries at its start, nor do its files' writers; its caller does (a
  // distributed batch's driver, once on each worker at its end: a task's own
  // sweep listed the output folder once a task). A pending commit is still
  // completed before the file's work.
  bool sweep_temps = true;
};

// Expands inputs and computes output paths (see the header comment). Throws
// Error(config) when nothing matched, for colliding outputs, or when an
// output would overwrite an input. `log` gets warnings (a glob matching nothing).
// `canon`: the paths' canonical spellings, where a caller asks for them again
// (plan_batch); else one of its own.
std::vector<BatchItem> collect_batch_items(const Config& config,
                                           const std::vector<std::string>& extra_inputs,
                                           const std::string& out_dir,
                                           const std::function<void(const std::string&)>& log = {},
                                           CanonicalPaths* canon = nullptr);

// Throws Error(config) where out_dir, or the nearest part of it that exists,
// is a file: said once, before any file (each file's outputs would fail).
void check_out_dir(const std::string& out_dir);

// Items for plain file paths, taken as they are (no glob, no folder walk):
// their outputs go straight into out_dir, like plain path inputs.
std::vector<BatchItem> plain_batch_items(const std::vector<std::string>& paths);

// Completes a list of items into a batch's list: repeats of one file dropped
// (the first kept), sorted by input, sizes read, and the output paths of the
// items without stats_json computed as above (out_dir/<subdir>/<stem>...);
// items with stats_json keep their paths. Then the checks above: throws
// Error(config) for colliding outputs or an output that would overwrite an
// input. An empty list stays empty. `canon` as collect_batch_items'.
std::vector<BatchItem> finish_batch_items(const Config& config, std::vector<BatchItem> items,
                                          const std::string& out_dir,
                                          CanonicalPaths* canon = nullptr);

// One slot of the scheduler: a device (-1 = the CPU backend) and the CPU
// threads its file pipelines get.
struct BatchWorker {
  int device = -1;
  int threads = 0;
};

// The devices a CUDA batch uses: `requested` (execution.device; empty = all
// `device_count` devices). Throws Error(config) for a device that does not exist.
std::vector<int> resolve_batch_devices(const std::vector<int>& requested, int device_count);

// Auto files in flight per GPU at most (plan_batch_workers).
inline constexpr int kAutoFilesPerDevice = 16;

// Files in flight per GPU by default: the CPU threads over the devices
// (rounded up), 2 to kAutoFilesPerDevice. The CLI's batch and Python's local
// Dask cluster (sigstream.distributed) both take it.
[[nodiscard]] int auto_files_per_device(int cpu_threads, int devices);

// Files the GPU bounds: an uncompressed file (kUncompressedBytesPerSample or
// more of input a sample: PCM or float, whose decoding costs the host least)
// written uncompressed (or not written), whose estimated seconds on one GPU
// reach kGpuBoundSecondsPerHostSample for each sample the host reads or
// writes (the source's frames x channels plus the output's). A GPU then
// needs fewer files in flight to stay busy, and more only set up later and
// pin more memory: kGpuBoundFilesPerDevice at most. (Compressed inputs or
// outputs keep the host busier a file: they keep the CPU threads' rule.)
inline constexpr double kGpuBoundSecondsPerHostSample = 0.5e-9;
inline constexpr double kUncompressedBytesPerSample = 1.9;
inline constexpr int kGpuBoundFilesPerDevice = 8;

struct FileSeconds;
// Whether a file of `bytes` bytes with the estimate `est` is one the GPU
// bounds (an unknown estimate or length: no).
[[nodiscard]] bool gpu_bound_file(const FileSeconds& est, double bytes);

// auto_files_per_device, at most kGpuBoundFilesPerDevice for files the GPU
// bounds (gpu_bound_file).
[[nodiscard]] int auto_files_per_device(int cpu_threads, int devices, bool gpu_bound);

// The workers of a batch of `files` files. CUDA (devices non-empty):
// files_per_device workers per device (0: auto_files_per_device), interleaved
// (d0, d1, ..., d0, d1, ...) so
// that fewer files than workers still spread over all devices; at most `files`
// workers. CPU (devices empty): min(files, cpu_threads) workers with
// max(1, cpu_threads / workers) threads each. Always at least one worker.
std::vector<BatchWorker> plan_batch_workers(const std::vector<int>& devices, int files_per_device,
                                            int cpu_threads, std::size_t files);

// The order files are handed out in: by bytes, largest first (ties: input order),
// so that long files start early and short ones fill the gaps.
std::vector<std::size_t> batch_dispatch_order(const std::vector<std::uintmax_t>& bytes);

// One file's estimated seconds on one CPU thread (cpu_seconds_estimate, or
// the options' cpu_file_estimate) and on one GPU (cuda_seconds_estimate, or
// gpu_file_estimate), from its header and the config's plan; infinity where
// it does not open or has no size (a FIFO is not opened: its header would be
// read before its worker reads it, and its writer may not be there yet), and
// for a backend whose estimate failed.
struct FileSeconds {
  double cpu = std::numeric_limits<double>::infinity();
  double cuda = std::numeric_limits<double>::infinity();
  double samples = 0.0;           // the source's, decoded: frames x channels (0: unknown)
  double output_samples = 0.0;    // the output's: frames x channels
  bool output_compressed = false; // the sink's container compresses (FLAC, Ogg, MP3, ...)
};
[[nodiscard]] FileSeconds estimate_file_seconds(const Config& config, const BatchItem& item,
                                                const BatchOptions& options);

enum class BatchStatus {
  ok,          // processed now
  skipped,     // up to date, not redone
  failed,      // error (message in `error`)
  interrupted, // was running when SIGINT/SIGTERM arrived; no output left
  not_run,     // never started: the batch was interrupted or stopped at a failure
};
std::string_view to_string(BatchStatus s);

struct BatchFileResult {
  BatchItem item;
  BatchStatus status = BatchStatus::not_run;
  std::string error;
  // Known once the file was opened (from this run, from its header when it
  // failed later, or from the statistics of a skipped file); zero otherwise.
  double sample_rate = 0.0;
  int channels = 0;
  std::int64_t frames = 0; // input frames
  std::int64_t output_frames = 0;
  std::string input_format, output_format;
  std::string backend, device_name;
  int device = -1;     // CUDA ordinal this batch ran it on (-1: CPU or not run)
  double wall_s = 0.0; // time spent on it by this batch
  std::int64_t clipped_samples = 0;
  std::int64_t nonfinite = 0;
  std::vector<double> output_rms, output_peak; // per channel, the `output` metrics block
  // A loudness block's (SPEC §13; the first, with several), when the config asks for one.
  std::optional<double> integrated_lufs, true_peak_dbtp;
  // Its output and statistics exist and are this file's results: done now
  // (ok, or failed only at verification, whose outputs are kept) or up to
  // date. The summary names the output files, and gives their numbers, only then.
  bool outputs_written = false;
  bool verification_ran = false;
  double rel_l2_error = 0.0;
  [[nodiscard]] double duration_s() const {
    return sample_rate > 0 ? static_cast<double>(frames) / sample_rate : 0.0;
  }
};

struct BatchDeviceCount {
  int device = -1; // -1 = CPU
  int workers = 0;
  int files = 0; // ok + failed + interrupted on it
  int failed = 0;
  std::int64_t frames = 0;
  double busy_s = 0.0;
};

struct BatchSummary {
  std::vector<BatchFileResult> files; // in input order
  std::string backend;                // "cpu" or "cuda"
  std::vector<BatchWorker> workers;
  std::vector<BatchDeviceCount> devices;
  // summary_json "": no summary file (BatchOptions::write_summary off).
  std::string out_dir, summary_json, summary_csv;
  std::optional<BatchShardRecord> shard; // a shard's run: its "shard" object
  int ok = 0, skipped = 0, failed = 0, interrupted_files = 0, not_run = 0;
  bool interrupted = false; // SIGINT/SIGTERM arrived
  bool stopped = false;     // stopped at the first failure (keep_going off)
  bool summary_written = false;
  std::uintmax_t bytes = 0; // input bytes processed now
  double wall_s = 0.0;
  // 130 if interrupted, 1 if a file failed, else 0 (SPEC §1).
  [[nodiscard]] int exit_code() const noexcept;
  // The exit code the files alone give (0, 1, or 130), whatever became of the summary file.
  [[nodiscard]] int files_exit_code() const noexcept;
};

// Runs the batch. Throws Error(config) before any work for bad inputs (see
// collect_batch_items) or devices, Error(cuda) when backend cuda has no device.
// Per-file failures are in the summary, never thrown. The summary JSON/CSV are
// written (atomically) at the end, also after a stop or an interruption.
BatchSummary run_batch(const Config& config, const BatchOptions& options);

// The summary files' text (exposed for tests), its files' entries made on up
// to `threads` threads (0: every CPU this process may use).
std::string batch_summary_json(const BatchSummary& summary, const std::string& fingerprint,
                               int threads = 0);
std::string batch_summary_csv(const BatchSummary& summary, int threads = 0);

// A short hash of what determines the outputs (stages, sink format and
// extension, stats.csv, backend), recorded in each file's statistics JSON for
// the resume check (and in the summary, for information).
std::string batch_config_fingerprint(const Config& config, const std::string& backend);
// The text those facts are hashed from (a shard's config_sha256 hashes it too).
std::string batch_config_facts(const Config& config, const std::string& backend);

} // namespace sigstream
