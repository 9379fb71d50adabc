#include "pipeline/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"

namespace sigstream {

namespace fs = std::filesystem;

namespace {

// A hidden name beside the target: ".NAME.sigstream-XXXXXX".
std::string temp_pattern(const fs::path& dir, const fs::path& target) {
  std::string name = ".";
  name.append(target.filename().string()).append(".sigstream-XXXXXX");
  return (dir / name).string();
}

// A fresh hidden name for linking an unnamed file: the pattern with a
// random suffix, not yet taken.
std::string unique_temp_name(const std::string& pattern) {
  static constexpr char kDigits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::string name = pattern;
  for (std::size_t i = name.size() - 6; i < name.size(); ++i) name[i] = kDigits[rd() % (sizeof kDigits - 1)];
  return name;
}

// Gives the unnamed file behind `fd` the name `path` (fails with EEXIST if taken).
int link_unnamed(int fd, const std::string& path) {
  if (::linkat(fd, "", AT_FDCWD, path.c_str(), AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST) return -1;
  // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc's link to the descriptor does not.
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw io_error(path_ + ": cannot create folder '" + dir.string() + "': " + ec.message());
  if (fs::is_directory(target, ec)) throw io_error(path_ + ": is a folder, expected a file path");
  pattern_ = temp_pattern(dir, target);
#ifdef O_TMPFILE
  // An unnamed file in the target's folder (same file system): nothing of it
  // outlives the process, however it dies (SIGKILL, power cut), until
  // commit() links it into place.
  // commit() needs /proc's link to the descriptor (or CAP_DAC_READ_SEARCH)
  // to give it a name: without /proc, a named temporary from the start.
  if (::access("/proc/self/fd", X_OK) == 0)
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (fd_ >= 0) {
    ::fchmod(fd_, 0644);
    return;
  }
#endif
  // No O_TMPFILE on this file system: a hidden named file, which a killed
  // run leaves behind; the next run into this folder removes it.
  remove_stale_temps({path_});
  std::vector<char> buf(pattern_.begin(), pattern_.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) throw io_error(path_ + ": cannot create a file in '" + dir.string() + "': " +
                              std::strerror(errno));
  temp_ = buf.data();
  slot_ = register_temp_path(temp_);
  ::fchmod(fd_, 0644);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  unregister_temp_path(slot_);
}

void AtomicFile::commit() {
  if (temp_.empty()) {
    // The unnamed file: straight to the target when it is free (atomic, no
    // temporary name at all), else under a hidden name for the exchange below.
    if (fd_ < 0) throw io_error(path_ + ": nothing to commit");
    if (link_unnamed(fd_, path_) == 0) {
      committed_ = true;
      const int rc = ::close(std::exchange(fd_, -1));
      if (rc != 0) throw io_error(path_ + ": write failed: " + std::strerror(errno));
      return;
    }
    for (int attempt = 0; temp_.empty(); ++attempt) {
      std::string name = unique_temp_name(pattern_);
      if (link_unnamed(fd_, name) == 0) {
        temp_ = std::move(name);
        slot_ = register_temp_path(temp_);
      } else if (errno != EEXIST || attempt > 100) {
        throw io_error(path_ + ": cannot move the finished file into place: " + std::strerror(errno));
      }
    }
  }
  if (fd_ >= 0) {
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) throw io_error(path_ + ": write failed: " + std::strerror(errno));
  }
#ifdef RENAME_EXCHANGE
  // Replacing a file: swap the finished one in atomically, then delete the old
  // one (now under the temporary name). A rename over an existing file makes
  // ext4 write the new file's data out first (auto_da_alloc: 60-90 ms for a
  // 115 MB output on the development machine, longer than writing it); the
  // exchange does not, and a reader still sees the old or the new complete
  // file, never a part. Only a file or a link is swapped (a folder that
  // appeared at the path meanwhile must make the rename fail, as it would).
  // Nothing to replace, no exchange on this file system, or the old file
  // cannot be deleted (it is swapped back first): a plain rename.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
      ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    if (::unlink(temp_.c_str()) == 0) {
      committed_ = true;
      return;
    }
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0) {
      committed_ = true;  // the new file is in place; the old one stays under the temporary name
      throw io_error(path_ + ": replaced, but the old file could not be deleted from '" + temp_ +
                     "': " + std::strerror(errno));
    }
  }
#endif
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw io_error(path_ + ": cannot move the finished file into place: " + std::strerror(errno));
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  write_all(file, text);
  file.commit();
}

void write_all(AtomicFile& file, const std::string& text) { write_all(file.fd(), text, file.path()); }

void write_all(int fd, std::string_view text, const std::string& what) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error(what + ": write failed: " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void refuse_same_file(const std::string& input, const std::string& output, const std::string& what) {
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
    throw config_error(what + " '" + output + "' is the input file; refusing to overwrite it");
  if (!ec && fs::weakly_canonical(input, ec) == fs::weakly_canonical(output, ec) && !ec)
    throw config_error(what + " '" + output + "' is the input file; refusing to overwrite it");
}

}  // namespace sigstream

namespace sigstream {

int remove_stale_temps(const std::vector<std::string>& targets) {
  std::map<fs::path, std::set<std::string>> by_dir;
  for (const std::string& t : targets) {
    if (t.empty()) continue;
    const fs::path p(t);
    by_dir[p.has_parent_path() ? p.parent_path() : fs::path(".")].insert(p.filename().string());
  }
  const std::string tag = ".sigstream-";
  int removed = 0;
  for (const auto& [dir, names] : by_dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string n = it->path().filename().string();
      const auto pos = n.rfind(tag);
      if (n.size() < 2 || n[0] != '.' || pos == std::string::npos || n.size() != pos + tag.size() + 6)
        continue;
      if (names.count(n.substr(1, pos - 1)) == 0) continue;
      std::error_code rm;
      if (fs::remove(it->path(), rm)) ++removed;
    }
  }
  return removed;
}

}  // namespace sigstream
