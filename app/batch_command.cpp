// `sigstream batch`: one config over many files, its shards and their merge
// (SPEC §1, §10; pipeline/batch.hpp, pipeline/batch_shard.hpp).
#include "app/batch_command.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "app/common.hpp"
#include "core/error.hpp"
#include "core/text_match.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/batch_shard.hpp"
#include "pipeline/config.hpp"

namespace sigstream::app {

namespace {

// A batch's workers allocate and free a file's buffers (tens of MB) over and
// over on many threads at once. glibc hands freed memory back to the kernel
// and grows its heaps again a little at a time, and each of those calls
// stops every thread's page faults in the process for a moment. Kept freed
// memory (no trimming) and heaps grown 64 MiB at a time: the CPU backend's
// batch of 400 files on 16 cores 1.29 -> 1.15 s, sys time 3.3 -> 2.3 s
// (bench/p11_malloc_ab.sh). Setting the trim threshold also turns off
// glibc's sliding mmap threshold, so blocks of 128 KiB and more are mapped
// and unmapped each time; taking those up to 32 MiB from the heaps instead
// (M_MMAP_THRESHOLD) measured the same on 16 and 64 cores
// (bench/p11_mmap_ab64.sh), so it is not set. The process ends after the
// batch, so what is kept is its peak, not a leak. Only here: a library must
// not set this for its host (a Python or Dask worker).
void keep_freed_memory_for_the_batch() {
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  mallopt(M_TOP_PAD, 64 << 20);
}

std::string read_list(const std::string& path) {
  if (path == "-")
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw config_error("--inputs-from: cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_merge(const BatchFlags& f, const std::vector<std::string>& sets, const BatchCommon& c) {
  std::string extra;
  if (!f.config_path.empty())
    extra = "CONFIG '" + f.config_path + "'";
  else if (!sets.empty())
    extra = "--set";
  for (const char* flag : {"--shard", "--list-inputs", "--inputs-from", "--out-dir", "--force",
                           "--verify", "--backend", "--stats", "--files-per-device", "--keep-going",
                           "--stop-on-error", "--scheduler"})
    if (extra.empty() && f.command->count(flag) > 0)
      extra = flag;
  if (!extra.empty())
    throw config_error("batch --merge DIR merges the shard summaries in DIR and takes no " + extra +
                       " (sigstream batch --merge OUT_DIR)");
  const BatchMergeResult r = merge_batch_dir(f.merge_dir);
  if (!r.missing.empty()) {
    const std::string list = slurm_array_list(r.missing);
    std::cerr << "sigstream: error: batch --merge: " << r.missing.size() << " of " << r.shard_count
              << " shard summaries missing in '" << f.merge_dir << "' (shard " << list
              << "); no merged summary written. Rerun those shards: --array=" << list
              << " (Slurm task ids of an array --array=0-" << r.shard_count - 1
              << "), or --shard I/" << r.shard_count << " for each I\n";
    std::error_code ec;
    const std::filesystem::path earlier = std::filesystem::path(f.merge_dir) / "batch_summary.json";
    if (std::filesystem::exists(earlier, ec))
      std::cerr << "sigstream: batch --merge: " << earlier.string()
                << " is from an earlier run, left as it was: not this merge's\n";
    std::cout << "--array=" << list << "\n";
    return 1;
  }
  if (!c.quiet || r.exit_code != 0)
    std::cerr << "sigstream: batch: merged " << r.inputs.size() << " shard summaries (" << r.files
              << " files) -> " << r.summary_json << " and .csv"
              << (r.exit_code != 0 ? "; some files failed or were not done (exit_code " +
                                         std::to_string(r.exit_code) + " in the summary)"
                                   : std::string())
              << "\n";
  return r.exit_code == 0 ? 0 : 1;
}

// `--scheduler`: Python's sigstream.distributed runs the batch (the CLI never
// links Python). Imports fail -> exit 2 naming the install; the rest of its
// exit codes are the batch's.
constexpr const char* kDaskHint =
    "pip install '.[dask]' in sigstream's source folder (Dask: dask[distributed]==2026.8.0), or "
    "point SIGSTREAM_PYTHON at a Python that has sigstream and Dask";

// argv: the hint, the read end of a pipe whose only write end sigstream
// holds, then main's arguments. The child stops as on SIGTERM when that
// pipe ends: when sigstream ends, however (a SIGKILL it cannot pass on),
// even through a $SIGSTREAM_PYTHON wrapper that does not exec; and it asks
// Linux for the same signal when its parent ends (PR_SET_PDEATHSIG).
constexpr const char* kBootstrap =
    "import os, signal, sys, threading\n"
    "try:\n"
    "    import ctypes\n"
    "    ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))\n"
    "except Exception:\n"
    "    pass\n"
    "def _watch(fd):\n"
    "    try:\n"
    "        while os.read(fd, 64):\n"
    "            pass\n"
    "    except OSError:\n"
    "        pass\n"
    "    os.kill(os.getpid(), signal.SIGTERM)\n"
    "threading.Thread(target=_watch, args=(int(sys.argv[2]),), daemon=True).start()\n"
    "try:\n"
    "    from sigstream.distributed import main\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('sigstream: error: batch --scheduler runs the Python package '\n"
    "                     'sigstream with Dask, and ' + sys.executable + ' cannot import it ('\n"
    "                     + str(e) + '): ' + sys.argv[1] + '\\n')\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[3:]))\n";

std::vector<std::string> scheduler_args(const BatchFlags& f, const std::vector<std::string>& sets,
                                        const BatchCommon& c) {
  // Values as --flag=VALUE: argparse would take a value that starts with
  // '-' (`--out-dir -x`) for a flag of its own.
  std::vector<std::string> a = {"--scheduler=" + f.scheduler};
  for (const std::string& s : sets)
    a.push_back("--set=" + s);
  if (!f.out_dir.empty())
    a.push_back("--out-dir=" + f.out_dir);
  if (f.command->count("--keep-going") > 0)
    a.push_back("--keep-going");
  if (f.command->count("--stop-on-error") > 0)
    a.push_back("--stop-on-error");
  if (f.force)
    a.push_back("--force");
  if (!c.backend.empty())
    a.push_back("--backend=" + c.backend);
  if (c.verify)
    a.push_back("--verify");
  if (c.quiet)
    a.push_back("--quiet");
  if (c.no_progress)
    a.push_back("--no-progress");
  if (!c.stats.empty())
    a.push_back("--stats=" + c.stats);
  if (f.files_per_device > 0) // 0: auto, the child's own default
    a.push_back("--files-per-device=" + std::to_string(f.files_per_device));
  if (!f.inputs_from.empty())
    a.push_back("--inputs-from=" + f.inputs_from);
  // Positionals after "--": an input may start with '-'.
  a.insert(a.end(), {"--", f.config_path});
  a.insert(a.end(), f.inputs.begin(), f.inputs.end());
  return a;
}

// A pipe's two ends, each closed when the pipe goes (-1: none).
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      fd[0] = fd[1] = -1;
  }
  ~Pipe() {
    for (const int f : fd)
      if (f >= 0)
        ::close(f);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// Runs python with `args` and waits for it; `child_fd`, a descriptor the
// child inherits, is closed here once it started (and set to -1). SIGINT and SIGTERM sent to this
// process are passed on to the child (one from the terminal already reached
// it: same process group), which stops its batch and writes the summary;
// the child is always reaped. Returns its exit code (128 + signal if killed),
// or -1 (errno set) if it could not start.
int run_child(const std::string& python, const std::vector<std::string>& args, int& child_fd) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(python.c_str()));
  for (const std::string& s : args)
    argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);

  // The signals wait for sigtimedwait below instead of the handlers; the child
  // starts with the mask and dispositions this process was given.
  sigset_t waited, old;
  sigemptyset(&waited);
  for (int sig : {SIGINT, SIGTERM, SIGCHLD})
    sigaddset(&waited, sig);
  struct sigaction chld {};
  struct sigaction old_chld {};
  chld.sa_handler = SIG_DFL; // an inherited SIG_IGN would reap the child behind our back
  sigaction(SIGCHLD, &chld, &old_chld);
  pthread_sigmask(SIG_BLOCK, &waited, &old);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &old);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, python.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (child_fd >= 0) { // the child's own now
    ::close(child_fd);
    child_fd = -1;
  }
  int code = -1;
  if (rc != 0) {
    errno = rc;
  } else {
    const timespec tick{0, 200'000'000};
    for (;;) {
      siginfo_t si{};
      const int sig = sigtimedwait(&waited, &si, &tick);
      if ((sig == SIGINT || sig == SIGTERM) && si.si_code != SI_KERNEL)
        ::kill(pid, sig);
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        code = WIFEXITED(status) ? WEXITSTATUS(status)
                                 : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1);
        break;
      }
      if (r < 0 && errno != EINTR) {
        code = 1;
        break;
      }
    }
  }
  const int saved = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  sigaction(SIGCHLD, &old_chld, nullptr);
  errno = saved;
  return code;
}

int run_on_scheduler(const BatchFlags& f, const std::vector<std::string>& sets,
                     const BatchCommon& c) {
  for (const char* flag : {"--shard", "--list-inputs"})
    if (f.command->count(flag) > 0)
      throw config_error(
          std::string("batch --scheduler runs the whole batch on a Dask cluster and takes no ") +
          flag + " (shards are for engines without a scheduler: sigstream batch --help)");
  if (!f.inputs_from.empty() && !f.inputs.empty())
    throw config_error("batch: --inputs-from '" + f.inputs_from +
                       "' gives the inputs, and so does INPUT '" + f.inputs.front() +
                       "': give one or the other");
  // A scheduler spelled wrong is a usage error here, before Python starts
  // (and before --inputs-from - is read): local, local:N, FILE.json or an
  // address with its port.
  const std::string& spec = f.scheduler;
  const bool local_n = spec.rfind("local:", 0) == 0 && spec.size() > 6 &&
                       spec.find_first_not_of("0123456789", 6) == std::string::npos;
  const bool json_file = spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0;
  if (spec != "local" && !local_n && !json_file && spec.find(':') == std::string::npos) {
    static constexpr std::string_view kLocal[] = {"local"};
    throw config_error("batch --scheduler '" + spec +
                       "': expected local[:N], a scheduler file (FILE.json) or an address with "
                       "its port (tcp://HOST:8786)" +
                       did_you_mean(spec, kLocal));
  }
  const char* env = std::getenv("SIGSTREAM_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "python3";
  // The child's watch (kBootstrap): it inherits the read end; the write end
  // stays this process's alone (close-on-exec), closed when it ends.
  Pipe watch;
  if (watch.fd[0] < 0 || ::fcntl(watch.fd[0], F_SETFD, 0) != 0)
    throw io_error(std::string("batch --scheduler: cannot make a pipe: ") + std::strerror(errno));
  std::vector<std::string> args = {"-c", kBootstrap, kDaskHint, std::to_string(watch.fd[0])};
  for (std::string& a : scheduler_args(f, sets, c))
    args.push_back(std::move(a));
  const int code = run_child(python, args, watch.fd[0]);
  if (code < 0) {
    std::cerr << "sigstream: error: batch --scheduler runs Python ('" << python
              << "', or $SIGSTREAM_PYTHON) and it could not start: " << std::strerror(errno) << "; "
              << kDaskHint << "\n";
    return 2;
  }
  return code;
}

} // namespace

CLI::App* add_batch_command(CLI::App& app, BatchFlags& f) {
  auto* batch = app.add_subcommand(
      "batch", "Run a config over many files (or merge shards' summaries: --merge DIR)");
  f.command = batch;
  batch->add_option("CONFIG", f.config_path,
                    "YAML config with a batch: section (required unless --merge)");
  batch->add_option("INPUT", f.inputs, "More inputs: files, folders or globs");
  batch->add_option("--out-dir", f.out_dir, "Output folder (overrides batch.out_dir)")
      ->check(given_value("a folder"));
  auto* keep_going =
      batch->add_flag("--keep-going", f.keep_going,
                      "Report a bad file and go on (the default; overrides batch.keep_going)");
  batch
      ->add_flag("--stop-on-error", f.stop_on_error,
                 "Stop at the first bad file (overrides batch.keep_going)")
      ->excludes(keep_going);
  batch->add_flag("--force", f.force, "Redo files whose outputs are already up to date");
  batch
      ->add_option(
          "--files-per-device", f.files_per_device,
          "CUDA: files in flight on each GPU (default: the CPU threads over the GPUs, 2 to 16)")
      ->check(CLI::Range(1, 256));
  batch
      ->add_option("--shard", f.shard,
                   "Run only shard I of N: the files at positions I, I+N, I+2N, ... of the sorted "
                   "list, summary "
                   "OUT_DIR/batch_summary.I-of-N.json; auto: from Slurm's array variables")
      ->type_name("I/N|auto")
      ->check(given_value("I/N or auto"));
  batch->add_flag("--list-inputs", f.list_inputs,
                  "Print the planned 'input<TAB>output' list (this shard's with --shard) and exit");
  batch
      ->add_option(
          "--inputs-from", f.inputs_from,
          "Take the inputs from a list ('input<TAB>output' or one path a line; - = standard input) "
          "instead of batch.inputs and INPUT")
      ->type_name("FILE")
      ->check(given_value("a list's file name (or - for standard input)"));
  batch
      ->add_option(
          "--merge", f.merge_dir,
          "Merge DIR/batch_summary.I-of-N.json into DIR/batch_summary.json and .csv (no CONFIG); "
          "missing shards: exit 1 and their --array= list")
      ->type_name("DIR")
      ->check(given_value("the shards' out_dir"));
  batch
      ->add_option(
          "--scheduler", f.scheduler,
          "Run the batch on a Dask cluster through Python (sigstream.distributed, pip install "
          "'.[dask]'): a scheduler's address (tcp://host:8786), its scheduler file (FILE.json), "
          "or local[:N]: N workers on this host, one per GPU (all GPUs; CPU workers without)")
      ->type_name("ADDRESS|FILE.json|local[:N]")
      ->check(given_value("ADDRESS, FILE.json or local[:N]"));
  batch->footer(
      "Shards: N processes, each with --shard I/N (0 <= I < N) and one out_dir, cover the files "
      "once; then\n"
      "`sigstream batch --merge OUT_DIR`. A Slurm array (sbatch --array=0-3, 1-4%2 or 0-6:2): "
      "--shard auto.\n"
      "A Kubernetes Indexed Job: --shard $JOB_COMPLETION_INDEX/N. For shards started hours apart:\n"
      "`--list-inputs > LIST` once, then `--inputs-from LIST` in every shard.\n"
      "A Dask cluster: --scheduler local (one worker per GPU here), --scheduler\n"
      "tcp://host:8786, or --scheduler FILE.json (dask scheduler --scheduler-file FILE.json).\n");
  return batch;
}

int run_batch_command(const BatchFlags& f, std::vector<std::string> sets, const BatchCommon& c) {
  if (!f.merge_dir.empty())
    return run_merge(f, sets, c);
  if (f.command->count("--scheduler") > 0) {
    if (f.config_path.empty())
      throw config_error(
          "batch --scheduler: CONFIG is required (sigstream batch CONFIG.yaml [INPUT...] "
          "--scheduler ADDRESS|FILE.json|local[:N])");
    return run_on_scheduler(f, sets, c);
  }
  if (f.config_path.empty())
    throw config_error(
        "batch: CONFIG is required (sigstream batch CONFIG.yaml [INPUT...]), or --merge DIR to "
        "merge shard summaries");
  if (!f.inputs_from.empty() && !f.inputs.empty())
    throw config_error("batch: --inputs-from '" + f.inputs_from +
                       "' gives the inputs, and so does INPUT '" + f.inputs.front() +
                       "': give one or the other");
  const ShardEnvironment env = slurm_array_environment();
  std::optional<BatchShard> shard;
  if (!f.shard.empty())
    shard = parse_batch_shard(f.shard, env);

  if (!c.backend.empty())
    sets.push_back("execution.backend=" + c.backend);
  const Config config = load_config(f.config_path, sets, ConfigUse::batch);
  BatchOptions bo;
  bo.extra_inputs = f.inputs;
  if (!f.out_dir.empty())
    bo.out_dir = f.out_dir;
  if (f.command->count("--keep-going") > 0)
    bo.keep_going = true;
  if (f.command->count("--stop-on-error") > 0)
    bo.keep_going = false;
  bo.force = f.force;
  bo.files_per_device = f.files_per_device;
  // The process leaves with _Exit right after (app/main.cpp): a CUDA start
  // still in the driver when the CPU has done every file is not waited for.
  bo.detach_device_start = true;
  // This process is the batch's: the driver sees only the GPUs it will use,
  // those its work pays the start of unless SIGSTREAM_ALL_GPUS is set (not
  // "0"): then every listed one (README, "Which GPUs the driver sees").
  bo.narrow_visible_devices = true;
  const char* all_gpus = std::getenv("SIGSTREAM_ALL_GPUS");
  bo.choose_gpus = all_gpus == nullptr || *all_gpus == '\0' || std::string_view(all_gpus) == "0";
  bo.progress = !c.quiet && !c.no_progress;
  bo.quiet = c.quiet;
  bo.verify = c.verify;
  bo.config_path = f.config_path;
  bo.summary_json = c.stats; // --stats names the summary; "" = out_dir/batch_summary[.I-of-N].json
  bo.shard = shard;
  // Always set: --quiet still reports failed files.
  bo.log = [](const std::string& m) { std::cerr << "sigstream: " << m << "\n"; };
  if (!f.inputs_from.empty()) {
    const std::string origin = f.inputs_from == "-" ? "<standard input>" : f.inputs_from;
    bo.items = read_batch_input_list(config, read_list(f.inputs_from), origin);
    bo.inputs_from = f.inputs_from;
    if (!f.out_dir.empty() && !c.quiet)
      if (const auto w = list_outputs_outside(bo.items, f.out_dir, origin))
        std::cerr << "sigstream: " << *w << "\n";
  }

  if (f.list_inputs) {
    auto warn = [&](const std::string& m) {
      if (!c.quiet)
        bo.log(m);
    };
    std::vector<BatchItem> items =
        batch_items(config, bo, bo.out_dir.value_or(config.batch.out_dir), warn);
    if (shard)
      items = select_batch_shard(items, *shard);
    std::cout << batch_input_list(items) << std::flush;
    return 0;
  }
  // Printed even with --quiet: N tasks doing the same work is worth a line.
  if (!shard)
    if (const auto w = unsharded_array_warning(env))
      bo.log(*w);
  keep_freed_memory_for_the_batch();
  return run_batch(config, bo).exit_code();
}

} // namespace sigstream::app
