#pragma once
// A file that appears at its path only when complete: data goes to an
// unnamed file (O_TMPFILE) in the same folder, which commit() links into
// place (directly when the target is free; else under a hidden name, then an
// atomic exchange with the existing target, whose old file is then deleted).
// A process killed before commit leaves nothing. Where the file system has no
// O_TMPFILE, a hidden temporary file ".NAME.sigstream-XXXXXX" instead, which
// the next AtomicFile for the same target removes if a killed run left it.
// Destroyed without commit (an error, an exception, a signal), it deletes the
// temporary file. The target's folder is created if missing.
#include <string>
#include <string_view>
#include <vector>

namespace sigstream {

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
  // Closes (if still owned) and renames into place. Throws Error(io).
  void commit();

 private:
  std::string path_;
  std::string pattern_;  // ".NAME.sigstream-XXXXXX" beside the target
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

// Removes the hidden temporary files (".NAME.sigstream-XXXXXX") that killed
// runs left beside these targets. Returns how many it removed.
int remove_stale_temps(const std::vector<std::string>& targets);

// Writes `text` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& text);

// Throws Error(config) if `output` names the same file as `input` (after
// resolving links and relative paths). `what` names the output ("sink.file").
void refuse_same_file(const std::string& input, const std::string& output, const std::string& what);

}  // namespace sigstream
