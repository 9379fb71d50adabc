#pragma once
// A file that appears at its path only when complete: data goes to a
// temporary file in the same folder, moved to the target by commit() (an
// atomic exchange with an existing target, whose old file is then deleted;
// else a rename).
// Destroyed without commit (an error, an exception, a signal), it deletes the
// temporary file. The target's folder is created if missing.
#include <string>

namespace sigstream {

class AtomicFile {
 public:
  // Throws Error(io) naming `path` if the folder or temporary cannot be made.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& temp_path() const noexcept { return temp_; }
  // The open descriptor of the temporary file; release_fd() hands ownership over.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  int release_fd() noexcept;
  // Closes (if still owned) and renames into place. Throws Error(io).
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

// Writes all of `text` to the file's temporary (no commit). Throws Error(io).
void write_all(AtomicFile& file, const std::string& text);

// Writes `text` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& text);

// Throws Error(config) if `output` names the same file as `input` (after
// resolving links and relative paths). `what` names the output ("sink.file").
void refuse_same_file(const std::string& input, const std::string& output, const std::string& what);

}  // namespace sigstream
