#include "pipeline/io/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"

namespace sigstream {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempTag = ".sigstream-";
constexpr std::size_t kHostTagMax = 32;
constexpr std::size_t kSuffixLen = 6;

// This process's hidden name pattern beside the target (mkstemp's XXXXXX last).
std::string temp_pattern(const fs::path& dir, const fs::path& target) {
  const long pid = ::getpid();
  return (dir / temp_file_name(target.filename().string(), temp_host_tag(), pid)).string();
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// NAME as temporary names carry it: at most kTempStemMax bytes, not cut inside a UTF-8 character.
std::string_view temp_stem(std::string_view name) {
  if (name.size() <= kTempStemMax)
    return name;
  std::size_t n = kTempStemMax;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80)
    --n;
  return name.substr(0, n);
}

// A fresh hidden name for linking an unnamed file: the pattern with a
// random suffix, not yet taken.
std::string unique_temp_name(const std::string& pattern) {
  static constexpr char kDigits[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::string name = pattern;
  for (std::size_t i = name.size() - 6; i < name.size(); ++i)
    name[i] = kDigits[rd() % (sizeof kDigits - 1)];
  return name;
}

// Gives the unnamed file behind `fd` the name `path` (fails with EEXIST if taken).
int link_unnamed(int fd, const std::string& path) {
  if (::linkat(fd, "", AT_FDCWD, path.c_str(), AT_EMPTY_PATH) == 0)
    return 0;
  if (errno == EEXIST)
    return -1;
  // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc's link to the descriptor does not.
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
}

} // namespace

std::string sanitize_host_tag(std::string_view hostname) {
  std::string tag;
  bool changed = false;
  for (char c : hostname) {
    const bool ok = is_alnum(c) || c == '-';
    tag += ok ? c : '-';
    changed = changed || !ok;
  }
  if (tag.empty())
    return "host";
  if (!changed && tag.size() <= kHostTagMax)
    return tag;
  // FNV-1a of the whole name: two names that differ only where characters
  // were replaced or cut off keep different tags.
  std::uint32_t h = 2166136261u;
  for (char c : hostname)
    h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  tag.resize(std::min(tag.size(), kHostTagMax - 9));
  return tag + "-" + hex;
}

const std::string& temp_host_tag() {
  static const std::string tag = [] {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
      buf[0] = '\0';
    return sanitize_host_tag(buf);
  }();
  return tag;
}

std::string temp_file_name(std::string_view name, std::string_view host, long pid,
                           std::string_view suffix) {
  std::string n = ".";
  n.append(temp_stem(name)).append(kTempTag).append(host).append("-").append(std::to_string(pid));
  return n.append("-").append(suffix);
}

std::optional<TempNameParts> parse_temp_file_name(std::string_view n) {
  const auto pos = n.rfind(kTempTag);
  if (n.size() < 2 || n[0] != '.' || pos == std::string_view::npos || pos < 2)
    return std::nullopt;
  TempNameParts parts;
  parts.stem = std::string(n.substr(1, pos - 1));
  std::string_view rest = n.substr(pos + kTempTag.size());
  if (rest.size() < kSuffixLen)
    return std::nullopt;
  for (char c : rest.substr(rest.size() - kSuffixLen))
    if (!is_alnum(c))
      return std::nullopt;
  if (rest.size() == kSuffixLen)
    return parts; // the old format: no host, no pid
  // HOST-PID-XXXXXX, read from the right (HOST may hold '-' and digits).
  rest.remove_suffix(kSuffixLen);
  if (rest.empty() || rest.back() != '-')
    return std::nullopt;
  rest.remove_suffix(1);
  const auto dash = rest.rfind('-');
  if (dash == std::string_view::npos || dash == 0)
    return std::nullopt;
  const std::string_view digits = rest.substr(dash + 1), host = rest.substr(0, dash);
  if (digits.empty() || digits.size() > 10 || digits[0] == '0')
    return std::nullopt;
  long long pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (pid > INT_MAX)
    return std::nullopt;
  for (char c : host)
    if (!is_alnum(c) && c != '-')
      return std::nullopt;
  parts.host = std::string(host);
  parts.pid = static_cast<long>(pid);
  return parts;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw io_error(path_ + ": cannot create folder '" + dir.string() + "': " + ec.message());
  if (fs::is_directory(target, ec))
    throw io_error(path_ + ": is a folder, expected a file path");
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
  // run leaves behind; the next run writing this target on this host removes
  // it (only it: the temporaries of live writers and other hosts stay).
  if (!swept_by_a_running_batch(path_))
    remove_stale_temps({path_});
  std::vector<char> buf(pattern_.begin(), pattern_.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0)
    throw io_error(path_ + ": cannot create a file in '" + dir.string() +
                   "': " + std::strerror(errno));
  temp_ = buf.data();
  slot_ = register_temp_path(temp_);
  ::fchmod(fd_, 0644);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_ && !temp_.empty())
    ::unlink(temp_.c_str());
  unregister_temp_path(slot_);
}

void AtomicFile::name_temporary() {
  if (!temp_.empty())
    return;
  if (fd_ < 0)
    throw io_error(path_ + ": nothing to name");
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

void AtomicFile::commit() {
  if (temp_.empty()) {
    // The unnamed file: straight to the target when it is free (atomic, no
    // temporary name at all), else under a hidden name for the exchange below.
    if (fd_ < 0)
      throw io_error(path_ + ": nothing to commit");
    if (link_unnamed(fd_, path_) == 0) {
      committed_ = true;
      const int rc = ::close(std::exchange(fd_, -1));
      if (rc != 0)
        throw io_error(path_ + ": write failed: " + std::strerror(errno));
      return;
    }
    name_temporary();
  }
  if (fd_ >= 0) {
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0)
      throw io_error(path_ + ": write failed: " + std::strerror(errno));
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
      committed_ = true; // the new file is in place; the old one stays under the temporary name
      throw io_error(path_ + ": replaced, but the old file could not be deleted from '" + temp_ +
                     "': " + std::strerror(errno));
    }
  }
#endif
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw io_error(path_ + ": cannot move the finished file into place: " + std::strerror(errno));
  committed_ = true;
}

namespace {
std::optional<FileIdentity> identity_of_stat(const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    return std::nullopt;
  FileIdentity id;
  id.dev = static_cast<std::uint64_t>(st.st_dev);
  id.ino = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::int64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}
} // namespace

std::optional<FileIdentity> identity_of_fd(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0)
    return std::nullopt;
  return identity_of_stat(st);
}

std::optional<FileIdentity> identity_of_path(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0)
    return std::nullopt;
  return identity_of_stat(st);
}

void write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  write_all(file, text);
  file.commit();
}

void write_all(AtomicFile& file, const std::string& text) {
  write_all(file.fd(), text, file.path());
}

void write_all(int fd, std::string_view text, const std::string& what) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw io_error(what + ": write failed: " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void refuse_same_file(const std::string& input, const std::string& output,
                      const std::string& what) {
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
    throw config_error(what + " '" + output + "' is the input file; refusing to overwrite it");
  if (!ec && fs::weakly_canonical(input, ec) == fs::weakly_canonical(output, ec) && !ec)
    throw config_error(what + " '" + output + "' is the input file; refusing to overwrite it");
}

} // namespace sigstream

namespace sigstream {

namespace {

double seconds_of(const timespec& t) {
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct ProcessStat {
  char state = '?';   // 'Z': exited, not yet reaped
  double started = 0; // wall-clock seconds
};

// What /proc says of process `pid` (nullopt where it does not).
std::optional<ProcessStat> process_stat(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line))
    return std::nullopt;
  // "PID (COMM) STATE ..." where COMM may hold spaces and ')': fields after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream in(line.substr(close + 1));
  ProcessStat ps;
  std::string field;
  for (int i = 3; i <= 22; ++i) { // 3: state; 22: starttime, in clock ticks since boot
    if (!(in >> field))
      return std::nullopt;
    if (i == 3)
      ps.state = field[0];
  }
  char* end = nullptr;
  const unsigned long long ticks = std::strtoull(field.c_str(), &end, 10);
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (end == field.c_str() || *end != '\0' || hz <= 0)
    return std::nullopt;
  timespec now{}, since_boot{};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0 ||
      ::clock_gettime(CLOCK_BOOTTIME, &since_boot) != 0)
    return std::nullopt;
  ps.started = seconds_of(now) - seconds_of(since_boot) +
               static_cast<double>(ticks) / static_cast<double>(hz);
  return ps;
}

// Whether the writer `pid` of this host, which last wrote its temporary file
// at `written` (wall-clock seconds), is known to be dead. In doubt: no.
bool local_writer_dead(long pid, double written) {
  if (pid <= 0)
    return false;
  if (pid == static_cast<long>(::getpid()))
    return false;
  if (::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH)
    return true;
  // The pid exists (EPERM too: another user's): the writer, or a process that
  // got its pid later. The writer lived when it last wrote the file, so a
  // process that started after that is not the writer. A zombie has exited.
  const auto ps = process_stat(pid);
  if (!ps)
    return false;
  return ps->state == 'Z' || ps->state == 'X' ||
         ps->started > written + static_cast<double>(kPidReuseSlack.count());
}

} // namespace

bool temp_writer_dead(const std::string& temp_path) {
  const auto parts = parse_temp_file_name(fs::path(temp_path).filename().string());
  if (!parts || parts->old_format() || parts->host != temp_host_tag())
    return false;
  struct stat st {};
  if (::lstat(temp_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  return local_writer_dead(parts->pid, seconds_of(st.st_mtim));
}

namespace {
// Target -> the SweptTargets holding it. Made once and never destroyed: a
// batch on a thread the process does not join (a Python daemon thread) may
// still let go of its targets while static objects are destroyed at exit.
struct Swept {
  std::mutex mutex;
  std::map<std::string, int> count;
};
Swept& swept() {
  static Swept* const s = new Swept;
  return *s;
}
} // namespace

SweptTargets::SweptTargets(std::vector<std::string> targets) : targets_(std::move(targets)) {
  std::erase(targets_, std::string());
  Swept& s = swept();
  std::lock_guard lock(s.mutex);
  for (const std::string& t : targets_)
    ++s.count[t];
}

SweptTargets::~SweptTargets() {
  Swept& s = swept();
  std::lock_guard lock(s.mutex);
  for (const std::string& t : targets_)
    if (const auto it = s.count.find(t); it != s.count.end() && --it->second == 0)
      s.count.erase(it);
}

bool swept_by_a_running_batch(const std::string& target) {
  Swept& s = swept();
  std::lock_guard lock(s.mutex);
  return s.count.count(target) > 0;
}

TempSweep remove_stale_temps(const std::vector<std::string>& targets) {
  struct Names {
    std::set<std::string> full, stems;
  };
  std::map<fs::path, Names> by_dir;
  for (const std::string& t : targets) {
    if (t.empty())
      continue;
    const fs::path p(t);
    Names& names = by_dir[p.has_parent_path() ? p.parent_path() : fs::path(".")];
    const std::string name = p.filename().string();
    names.full.insert(name);
    names.stems.insert(std::string(temp_stem(name)));
  }
  TempSweep sweep;
  timespec now_ts{};
  ::clock_gettime(CLOCK_REALTIME, &now_ts);
  const double now = seconds_of(now_ts);
  for (const auto& [dir, names] : by_dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const auto parts = parse_temp_file_name(it->path().filename().string());
      if (!parts)
        continue;
      if (parts->old_format() ? names.full.count(parts->stem) == 0
                              : names.stems.count(parts->stem) == 0)
        continue;
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      const double written = seconds_of(st.st_mtim);
      bool dead = false;
      if (parts->old_format()) {
        dead = now - written > static_cast<double>(std::chrono::seconds(kOldTempAge).count());
        if (!dead)
          ++sweep.live;
      } else if (parts->host != temp_host_tag()) {
        ++sweep.other_hosts;
        continue;
      } else {
        dead = local_writer_dead(parts->pid, written);
        if (!dead)
          ++sweep.live;
      }
      std::error_code rm;
      if (dead && fs::remove(it->path(), rm))
        ++sweep.removed;
    }
  }
  return sweep;
}

} // namespace sigstream
