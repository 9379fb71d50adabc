// An LD_PRELOAD shim that makes I/O fail, for the fault-injection tests
// (issue P10, tests/cli/test_faults.py): a full disk (ENOSPC) or a failing
// disk (EIO) without a small tmpfs or FUSE, on any machine.
//
//   SIGSTREAM_FAULT=enospc|eio   writes fail with ENOSPC / reads with EIO
//   SIGSTREAM_FAULT_PATH=TEXT    ... on descriptors opened with TEXT in the
//                                path (an O_TMPFILE's path is its folder)
//   SIGSTREAM_FAULT_FD=N         ... and on descriptor N (0: stdin, 1: stdout) and
//                                any other open on the same file or pipe
//   SIGSTREAM_FAULT_AFTER=BYTES  once this many bytes went through (default 0)
//   SIGSTREAM_FAULT_NO_TMPFILE=1 open(O_TMPFILE) fails with EOPNOTSUPP, as on a
//                                file system without it (NFS): outputs go through
//                                named temporary files (independent of the above)
//
// read/write/pread/pwrite (and their 64-bit names) and the opens are wrapped;
// every other call goes straight to the C library.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace {

constexpr int kMaxFd = 4096;
std::atomic<bool> g_faulty[kMaxFd];
std::atomic<long long> g_bytes{0};

enum class Mode { none, enospc, eio };

struct Settings {
  Mode mode = Mode::none;
  const char* path = nullptr;
  int fd = -1;
  struct stat file {}; // what `fd` refers to at start (duplicates refer to it too)
  long long after = 0;
  bool no_tmpfile = false;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings v;
    if (const char* m = std::getenv("SIGSTREAM_FAULT")) {
      if (strcmp(m, "enospc") == 0)
        v.mode = Mode::enospc;
      if (strcmp(m, "eio") == 0)
        v.mode = Mode::eio;
    }
    v.path = std::getenv("SIGSTREAM_FAULT_PATH");
    if (v.path != nullptr && *v.path == '\0')
      v.path = nullptr;
    if (const char* f = std::getenv("SIGSTREAM_FAULT_FD")) {
      v.fd = std::atoi(f);
      if (fstat(v.fd, &v.file) != 0)
        v.fd = -1;
    }
    if (const char* a = std::getenv("SIGSTREAM_FAULT_AFTER"))
      v.after = std::atoll(a);
    if (const char* t = std::getenv("SIGSTREAM_FAULT_NO_TMPFILE"))
      v.no_tmpfile = strcmp(t, "1") == 0;
    return v;
  }();
  return s;
}

template <class F> F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void note_open(int fd, const char* path) {
  if (fd < 0 || fd >= kMaxFd)
    return;
  const Settings& s = settings();
  g_faulty[fd] = s.path != nullptr && path != nullptr && strstr(path, s.path) != nullptr;
}

bool faulty(int fd) {
  const Settings& s = settings();
  if (s.mode == Mode::none || fd < 0 || fd >= kMaxFd)
    return false;
  if (g_faulty[fd].load())
    return true;
  struct stat st {};
  return s.fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == s.file.st_dev &&
         st.st_ino == s.file.st_ino;
}

// Whether this transfer on `fd` fails (errno set); else shortens `n` to end
// at the byte budget (so that the next transfer fails) and counts it.
bool fails(int fd, size_t& n, Mode kind) {
  if (settings().mode != kind || !faulty(fd))
    return false;
  const long long left = settings().after - g_bytes.load();
  if (left <= 0) {
    errno = kind == Mode::enospc ? ENOSPC : EIO;
    return true;
  }
  if (static_cast<long long>(n) > left)
    n = static_cast<size_t>(left);
  g_bytes += static_cast<long long>(n);
  return false;
}

mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE
             ? static_cast<mode_t>(va_arg(ap, int))
             : 0;
}

// Whether this open is refused as on a file system without O_TMPFILE.
bool refuse_tmpfile(int flags) {
  if (!settings().no_tmpfile || (flags & O_TMPFILE) != O_TMPFILE)
    return false;
  errno = EOPNOTSUPP;
  return true;
}

} // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (refuse_tmpfile(flags))
    return -1;
  static auto real = next<int (*)(const char*, int, ...)>("open");
  const int fd = real(path, flags, mode);
  note_open(fd, path);
  return fd;
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (refuse_tmpfile(flags))
    return -1;
  static auto real = next<int (*)(const char*, int, ...)>("open64");
  const int fd = real(path, flags, mode);
  note_open(fd, path);
  return fd;
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (refuse_tmpfile(flags))
    return -1;
  static auto real = next<int (*)(int, const char*, int, ...)>("openat");
  const int fd = real(dirfd, path, flags, mode);
  note_open(fd, path);
  return fd;
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (refuse_tmpfile(flags))
    return -1;
  static auto real = next<int (*)(int, const char*, int, ...)>("openat64");
  const int fd = real(dirfd, path, flags, mode);
  note_open(fd, path);
  return fd;
}

ssize_t read(int fd, void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, void*, size_t)>("read");
  return fails(fd, n, Mode::eio) ? -1 : real(fd, buf, n);
}

ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  static auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread");
  return fails(fd, n, Mode::eio) ? -1 : real(fd, buf, n, off);
}

ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
  static auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread64");
  return fails(fd, n, Mode::eio) ? -1 : real(fd, buf, n, off);
}

ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  return fails(fd, n, Mode::enospc) ? -1 : real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  return fails(fd, n, Mode::enospc) ? -1 : real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
  return fails(fd, n, Mode::enospc) ? -1 : real(fd, buf, n, off);
}

} // extern "C"
