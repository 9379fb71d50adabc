#include "app/plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/io/atomic_file.hpp"

extern char** environ;

namespace sigstream::app {

namespace {

std::string plot_install_hint() {
  return "figures need Python 3 with matplotlib and NumPy: on Debian/Ubuntu `sudo apt-get install "
         "python3-matplotlib` (scripts/install-deps.sh does), or `pip install matplotlib`; point "
         "SIGSTREAM_PYTHON at another interpreter if python3 is not the one that has them";
}

// Runs `python - STATS -o FIG` with the script on its standard input.
// Returns the child's exit status, or -1 when it could not be started.
int run_python(const std::string& python, const std::string& stats, const std::string& figure) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> args = {python, "-", stats, "-o", figure};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child's environment: ours, and SIGSTREAM_PLOT_TRYING=1 (plot.py then
  // leaves the word on a missing module to us: we may try another Python).
  std::vector<std::string> env_strings = {"SIGSTREAM_PLOT_TRYING=1"};
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "SIGSTREAM_PLOT_TRYING=", 22) != 0)
      env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    return -1;
  }
  // A Python that exits early makes the write fail (EPIPE): its exit status says why.
  try {
    write_all(fds[1], plot_script(), "python's standard input");
  } catch (const Error&) {
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Where a Python with matplotlib may be, in order: $SIGSTREAM_PYTHON,
// python3 on the PATH, Debian's /usr/bin/python3 (to which
// scripts/install-deps.sh gives python3-matplotlib). pyenv, conda and
// virtual environments put a python3 without it first on many PATHs. The
// same path is listed once.
std::vector<std::string> python_candidates() {
  std::vector<std::string> out;
  std::vector<std::filesystem::path> seen;
  auto add = [&](const std::string& cmd) {
    std::filesystem::path where;
    if (cmd.find('/') != std::string::npos) {
      where = cmd;
    } else if (const char* path = std::getenv("PATH")) {
      std::string dirs = path;
      for (std::size_t a = 0; a <= dirs.size();) {
        const std::size_t b = std::min(dirs.find(':', a), dirs.size());
        const std::filesystem::path c =
            std::filesystem::path(a == b ? "." : dirs.substr(a, b - a)) / cmd;
        if (::access(c.c_str(), X_OK) == 0) {
          where = c;
          break;
        }
        a = b + 1;
      }
    }
    // Links are not followed: a virtual environment's python3 links to its
    // base interpreter and still sees other packages.
    if (!where.empty()) {
      const std::filesystem::path at = std::filesystem::absolute(where).lexically_normal();
      if (std::find(seen.begin(), seen.end(), at) != seen.end())
        return;
      seen.push_back(at);
    }
    out.push_back(cmd);
  };
  if (const char* env = std::getenv("SIGSTREAM_PYTHON"); env != nullptr && *env != '\0')
    add(env);
  add("python3");
  add("/usr/bin/python3");
  return out;
}

} // namespace

int draw_figure(const std::string& stats_json, const std::string& figure, std::string* drawn_by) {
  std::vector<std::string> passed_over; // "X: why", for the message
  for (const std::string& python : python_candidates()) {
    const int rc = run_python(python, stats_json, figure);
    if (rc == -1 || rc == 127) {
      passed_over.push_back(python + " (cannot run)");
      continue;
    }
    if (rc == 3) { // plot.py: matplotlib or NumPy missing
      passed_over.push_back(python + " (no matplotlib or NumPy)");
      continue;
    }
    if (drawn_by != nullptr)
      *drawn_by = python;
    if (rc == 0 && !passed_over.empty()) {
      std::string m;
      for (const auto& p : passed_over)
        m += (m.empty() ? "" : ", ") + p;
      std::cerr << "sigstream plot: drawn with " << python << " (passed over " << m << ")\n";
    }
    return rc == 0 ? 0 : rc == 2 ? 2 : 1;
  }
  std::string m;
  for (const auto& p : passed_over)
    m += (m.empty() ? "" : ", ") + p;
  std::cerr << "sigstream plot: no Python with matplotlib (tried " << m
            << "): " << plot_install_hint() << "\n";
  return 2;
}

int draw_figure_from_text(const std::string& stats_text, const std::string& figure) {
  std::string path =
      (std::filesystem::temp_directory_path() / "sigstream-plot-XXXXXX.json").string();
  const int fd = mkstemps(path.data(), 5);
  if (fd < 0) {
    std::cerr << "sigstream plot: cannot create a temporary file: " << std::strerror(errno) << "\n";
    return 1;
  }
  int rc = 0;
  try {
    write_all(fd, stats_text, path);
  } catch (const Error& e) {
    std::cerr << "sigstream plot: " << e.what() << '\n';
    rc = 1;
  }
  close(fd);
  if (rc == 0)
    rc = draw_figure(path, figure);
  std::remove(path.c_str());
  return rc;
}

} // namespace sigstream::app
