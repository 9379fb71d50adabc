#pragma once
// A file that appears at its path only when complete: data goes to an
// unnamed file (O_TMPFILE) in the same folder, which commit() links into
// place (directly when the target is free; else under a hidden name, then an
// atomic exchange with the existing target, whose old file is then deleted).
// A process killed before commit leaves nothing. Where the file system has no
// O_TMPFILE (NFS, for one), a hidden named temporary file instead, which a
// killed run leaves behind. Destroyed without commit (an error, an exception,
// a signal), it deletes the temporary file. The target's folder is created if
// missing.
//
// Temporary names say who writes them: ".NAME.sigstream-HOST-PID-XXXXXX"
// (HOST: temp_host_tag(), PID: the writer's process id, XXXXXX: random), so
// that many processes, on one host or on many sharing a file system, can
// write beside the same targets (SPEC §10, exactly-once commits). Another
// process removes a temporary file only when its writer is known dead:
//   - HOST is this host's tag and PID no longer exists (or has exited and
//     awaits its parent), or PID exists but started more than kPidReuseSlack
//     after the file was last written (the pid was reused; the writer wrote
//     the file while it lived);
//   - a temporary of another host is never removed (its writer cannot be
//     asked; NFS shares one folder between hosts);
//   - the format of earlier sigstream versions (".NAME.sigstream-XXXXXX", no
//     host or pid) is removed once it was last written more than
//     kOldTempAge ago (an old run still at work would have written it since).
// Where O_TMPFILE is missing, each AtomicFile sweeps beside its own target
// before it makes its temporary, and `sigstream batch` beside all of its
// targets at start (a Dask batch: each worker once, at its end); while a
// batch runs, an AtomicFile of this process for one of those targets does
// not sweep again (SweptTargets).
// An unnamed temporary can be given its hidden name before commit()
// (name_temporary()): `sigstream batch` does so for its statistics record and
// CSV right before a file's commits, so that what a worker killed between its
// commits leaves outlives it and a retry can complete the commits instead of
// redoing the file (pipeline/batch_commit.hpp).
// Hosts are told apart by their name: processes that share a host name must
// share a pid namespace (a container with the host's UTS namespace but its
// own pids, writing the same folder as the host, must get a host name of
// its own).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sigstream {

// What tells one file from another on this host: the same inode keeps it
// through link, rename and exchange (a commit), and a file written since
// (or a new file that got a freed inode number) differs in size or mtime.
struct FileIdentity {
  std::uint64_t dev = 0, ino = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};
// The identity of the open file `fd` / of the file at `path` (links followed);
// nullopt where fstat/stat fails or it is not a regular file.
[[nodiscard]] std::optional<FileIdentity> identity_of_fd(int fd);
[[nodiscard]] std::optional<FileIdentity> identity_of_path(const std::string& path);

class AtomicFile {
public:
  // Throws Error(io) naming `path` if the folder or temporary cannot be made.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // The temporary file's name ("" while the file is unnamed).
  [[nodiscard]] const std::string& temp_path() const noexcept { return temp_; }
  // The open descriptor of the temporary file (owned by this object).
  [[nodiscard]] int fd() const noexcept { return fd_; }
  // The identity of the file being written (nullopt once closed).
  [[nodiscard]] std::optional<FileIdentity> identity() const { return identity_of_fd(fd_); }
  // Gives the unnamed temporary its hidden name now (nothing if it has one):
  // from here on it outlives this process if killed before commit() (the
  // next sweep on this host removes it). Throws Error(io).
  void name_temporary();
  // Closes (if still owned) and renames into place. Throws Error(io).
  void commit();

private:
  std::string path_;
  std::string pattern_; // ".NAME.sigstream-HOST-PID-XXXXXX" beside the target
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

// Writes all of `text` to the file's temporary (no commit). Throws Error(io).
void write_all(AtomicFile& file, const std::string& text);
// All of `text` to the descriptor `fd` (retrying short writes and EINTR);
// Error(io) naming `what` when a write fails.
void write_all(int fd, std::string_view text, const std::string& what);

// What remove_stale_temps found beside the targets.
struct TempSweep {
  int removed = 0;     // of dead writers of this host (and old-format ones older than kOldTempAge)
  int other_hosts = 0; // of writers on other hosts: left alone
  int live = 0;        // of writers that may be running: this host's live pids (this process
                       // included), old-format files younger than kOldTempAge; left alone
};

// Removes the hidden temporary files beside these targets whose writers are
// dead (see the top of this file); never a file of a live or foreign writer.
// Files and names that are not sigstream's temporaries are never touched.
TempSweep remove_stale_temps(const std::vector<std::string>& targets);

// The targets a running batch swept (remove_stale_temps) before its files,
// held while it runs: an AtomicFile of this process (the batch's or any
// other) for one of them leaves the folder unlisted where it would sweep (no
// O_TMPFILE: a listing a file, which made a batch's listings grow with the
// square of its files; 3,000 small files into one folder, 2-core machine:
// 7.5 s before, 2.9-4.0 s after). What a writer killed since leaves is the
// next run's to sweep.
class SweptTargets {
public:
  explicit SweptTargets(std::vector<std::string> targets);
  ~SweptTargets();
  SweptTargets(const SweptTargets&) = delete;
  SweptTargets& operator=(const SweptTargets&) = delete;
  // The targets held (empty ones left out): what the batch sweeps.
  [[nodiscard]] const std::vector<std::string>& targets() const noexcept { return targets_; }

private:
  std::vector<std::string> targets_;
};
// Whether a SweptTargets alive now holds `target` (the same string).
[[nodiscard]] bool swept_by_a_running_batch(const std::string& target);

// Whether the temporary file at `temp_path` (a name parse_temp_file_name
// reads, with a host and pid) belongs to a writer of this host that is known
// dead (see the top of this file). False for another host's, the old
// format's, a missing file, or in doubt.
[[nodiscard]] bool temp_writer_dead(const std::string& temp_path);

// How long after the last write to a temporary file a process must have
// started for its pid to count as reused (clock skew of a file server included).
inline constexpr std::chrono::seconds kPidReuseSlack{60};
// Age (since the last write) at which an old-format temporary is removed.
inline constexpr std::chrono::hours kOldTempAge{24};

// This host in temporary names: gethostname() through sanitize_host_tag().
[[nodiscard]] const std::string& temp_host_tag();
// `hostname` as [A-Za-z0-9-], at most 32 characters: unchanged where it is
// already so and short enough; else its first characters with the others
// made '-', then '-' and 8 hex digits of a hash of the whole name (so that
// "a.b" and "a_b" stay apart). "host" for an empty name.
[[nodiscard]] std::string sanitize_host_tag(std::string_view hostname);
// The hidden temporary name beside a target named `name` (a file name, no
// folder): ".NAME.sigstream-HOST-PID-SUFFIX". NAME is cut (at a UTF-8
// boundary) to kTempStemMax bytes so that the whole fits NAME_MAX (255).
[[nodiscard]] std::string temp_file_name(std::string_view name, std::string_view host, long pid,
                                         std::string_view suffix = "XXXXXX");
inline constexpr std::size_t kTempStemMax = 192;

// What a temporary file's name says of its writer.
struct TempNameParts {
  std::string stem; // NAME (cut as temp_file_name cuts it)
  std::string host; // "" in the old format
  long pid = 0;     // 0 in the old format
  [[nodiscard]] bool old_format() const noexcept { return pid == 0; }
};
// Parses ".NAME.sigstream-HOST-PID-XXXXXX" or the old ".NAME.sigstream-XXXXXX";
// nullopt for any other name.
[[nodiscard]] std::optional<TempNameParts> parse_temp_file_name(std::string_view filename);

// Writes `text` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& text);

// Throws Error(config) if `output` names the same file as `input` (after
// resolving links and relative paths). `what` names the output ("sink.file").
void refuse_same_file(const std::string& input, const std::string& output, const std::string& what);

} // namespace sigstream
