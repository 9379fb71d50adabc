// An LD_PRELOAD shim that counts commits and stops a process at a chosen
// point, for the exactly-once tests of distributed batches (issue 26,
// python/tests/test_distributed.py). A commit is the call that makes a file
// appear at its name: rename/renameat/renameat2 (an AtomicFile's temporary
// moved or exchanged into place) or link/linkat (an unnamed O_TMPFILE file
// linked to its name).
//
//   SIGSTREAM_COMMIT_LOG=FILE     appends "PID<TAB>CALL<TAB>NEW_PATH\n" to FILE
//                                 after each successful call above (one
//                                 O_APPEND write a line, so processes share it)
//   SIGSTREAM_STALL_PATH=NAME     the first process (of all that share
//   SIGSTREAM_STALL_MARK=FILE     MARK) to commit a file named NAME (the last
//   SIGSTREAM_STALL_ON=commit|open  path component), or to open one for
//                                 reading (open), writes its pid
//                                 to MARK (created with O_EXCL: once in all)
//                                 and then sleeps until it is killed, holding
//                                 the file it was working on. The test kills
//                                 it from outside at that known point.
//   SIGSTREAM_STALL_UNTIL=FILE    with the above: the stopped thread goes on
//                                 with its call once FILE exists, instead of
//                                 sleeping for good
//
//   SIGSTREAM_LIST_LOG=FILE       appends "PID<TAB>list<TAB>FOLDER\n" to FILE
//                                 for each folder opened to be listed
//                                 (opendir, fdopendir: what std::filesystem's
//                                 directory_iterator calls), so that a test
//                                 can count a batch's listings of its output
//                                 folder
//
// Every call goes on to the C library; the shim only watches.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cstdlib>

namespace {

struct Settings {
  const char* log = nullptr;
  const char* list_log = nullptr;
  const char* stall_path = nullptr;
  const char* stall_mark = nullptr;
  const char* stall_until = nullptr;
  bool stall_on_open = false;
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

const Settings& settings() {
  static const Settings s = [] {
    Settings v;
    v.log = env("SIGSTREAM_COMMIT_LOG");
    v.list_log = env("SIGSTREAM_LIST_LOG");
    v.stall_path = env("SIGSTREAM_STALL_PATH");
    v.stall_mark = env("SIGSTREAM_STALL_MARK");
    v.stall_until = env("SIGSTREAM_STALL_UNTIL");
    const char* on = env("SIGSTREAM_STALL_ON");
    v.stall_on_open = on != nullptr && strcmp(on, "open") == 0;
    return v;
  }();
  return s;
}

template <class F> F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The real open, for the shim's own files (the wrappers below must not see them).
int raw_open(const char* path, int flags, mode_t mode) {
  static auto real = next<int (*)(const char*, int, ...)>("open");
  return real(path, flags, mode);
}

void write_fully(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Whether `path` names the file `name` (the whole path, or its last component).
bool names(const char* path, const char* name) {
  const size_t p = strlen(path), n = strlen(name);
  return p >= n && strcmp(path + p - n, name) == 0 && (p == n || path[p - n - 1] == '/');
}

// Stops this thread (for good, or until the STALL_UNTIL file exists) if `path`
// is the chosen one and no process stopped yet.
void maybe_stall(const char* path) {
  const Settings& s = settings();
  if (s.stall_path == nullptr || s.stall_mark == nullptr || path == nullptr ||
      !names(path, s.stall_path))
    return;
  const int fd = raw_open(s.stall_mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return; // another process (or this one) stopped already
  char line[32];
  const int n = snprintf(line, sizeof line, "%d\n", static_cast<int>(getpid()));
  write_fully(fd, line, static_cast<size_t>(n));
  ::close(fd);
  if (s.stall_until != nullptr) {
    const int saved = errno;
    struct stat st {};
    while (::stat(s.stall_until, &st) != 0)
      usleep(10000);
    errno = saved;
    return;
  }
  for (;;)
    pause();
}

// Appends "PID<TAB>CALL<TAB>PATH\n" to the log `file` (errno kept).
void log_line(const char* file, const char* call, const char* path) {
  if (file == nullptr || path == nullptr)
    return;
  const int saved = errno;
  const int fd = raw_open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char line[4096 + 64];
    const int n =
        snprintf(line, sizeof line, "%d\t%s\t%s\n", static_cast<int>(getpid()), call, path);
    if (n > 0 && static_cast<size_t>(n) < sizeof line)
      write_fully(fd, line, static_cast<size_t>(n));
    ::close(fd);
  }
  errno = saved;
}

void committed(const char* call, const char* newpath) {
  log_line(settings().log, call, newpath);
  if (!settings().stall_on_open)
    maybe_stall(newpath);
}

// A folder opened for listing (its path from the descriptor where that is all there is).
void listed(const char* path, int fd) {
  const char* file = settings().list_log;
  if (file == nullptr)
    return;
  char resolved[4096];
  if (path == nullptr) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const int saved = errno;
    const ssize_t n = readlink(link, resolved, sizeof resolved - 1);
    errno = saved;
    if (n <= 0)
      return;
    resolved[n] = '\0';
    path = resolved;
  }
  log_line(file, "list", path);
}

void opened(const char* path, int flags) {
  if (settings().stall_on_open && (flags & O_ACCMODE) == O_RDONLY)
    maybe_stall(path);
}

mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE
             ? static_cast<mode_t>(va_arg(ap, int))
             : 0;
}

} // namespace

extern "C" {

int rename(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("rename");
  const int rc = real(from, to);
  if (rc == 0)
    committed("rename", to);
  return rc;
}

int renameat(int from_dir, const char* from, int to_dir, const char* to) {
  static auto real = next<int (*)(int, const char*, int, const char*)>("renameat");
  const int rc = real(from_dir, from, to_dir, to);
  if (rc == 0)
    committed("renameat", to);
  return rc;
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags) {
  static auto real = next<int (*)(int, const char*, int, const char*, unsigned int)>("renameat2");
  const int rc = real(from_dir, from, to_dir, to, flags);
  if (rc == 0)
    committed("renameat2", to);
  return rc;
}

int link(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("link");
  const int rc = real(from, to);
  if (rc == 0)
    committed("link", to);
  return rc;
}

int linkat(int from_dir, const char* from, int to_dir, const char* to, int flags) {
  static auto real = next<int (*)(int, const char*, int, const char*, int)>("linkat");
  const int rc = real(from_dir, from, to_dir, to, flags);
  if (rc == 0)
    committed("linkat", to);
  return rc;
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  static auto real = next<int (*)(const char*, int, ...)>("open");
  opened(path, flags);
  return real(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  static auto real = next<int (*)(const char*, int, ...)>("open64");
  opened(path, flags);
  return real(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  static auto real = next<int (*)(int, const char*, int, ...)>("openat");
  opened(path, flags);
  return real(dirfd, path, flags, mode);
}

DIR* opendir(const char* path) {
  static auto real = next<DIR* (*)(const char*)>("opendir");
  DIR* d = real(path);
  if (d != nullptr)
    listed(path, -1);
  return d;
}

DIR* fdopendir(int fd) {
  static auto real = next<DIR* (*)(int)>("fdopendir");
  DIR* d = real(fd);
  if (d != nullptr)
    listed(nullptr, fd);
  return d;
}

} // extern "C"
