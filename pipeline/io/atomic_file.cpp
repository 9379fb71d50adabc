#include "pipeline/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"

namespace sigstream {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw io_error(path_ + ": cannot create folder '" + dir.string() + "': " + ec.message());
  if (fs::is_directory(target, ec)) throw io_error(path_ + ": is a folder, expected a file path");
  // Hidden, next to the target (same file system, so rename is atomic).
  std::string name = ".";
  name.append(target.filename().string()).append(".sigstream-XXXXXX");
  const std::string pattern = (dir / name).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
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
  if (!committed_) ::unlink(temp_.c_str());
  unregister_temp_path(slot_);
}

int AtomicFile::release_fd() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void AtomicFile::commit() {
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

void write_all(AtomicFile& file, const std::string& text) {
  const std::string& path = file.path();
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(file.fd(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error(path + ": write failed: " + std::strerror(errno));
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
