#include "app/plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> args = {python, "-", stats, "-o", figure};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
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

}  // namespace

int draw_figure(const std::string& stats_json, const std::string& figure) {
  const char* env = std::getenv("SIGSTREAM_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "python3";
  const int rc = run_python(python, stats_json, figure);
  if (rc == -1 || rc == 127) {
    std::cerr << "sigstream plot: cannot run '" << python << "': " << plot_install_hint() << "\n";
    return 2;
  }
  if (rc == 3) {  // plot.py: matplotlib or NumPy missing (it said which)
    std::cerr << "sigstream plot: " << plot_install_hint() << "\n";
    return 2;
  }
  return rc == 0 ? 0 : rc == 2 ? 2 : 1;
}

int draw_figure_from_text(const std::string& stats_text, const std::string& figure) {
  std::string path = (std::filesystem::temp_directory_path() / "sigstream-plot-XXXXXX.json").string();
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
  if (rc == 0) rc = draw_figure(path, figure);
  std::remove(path.c_str());
  return rc;
}

}  // namespace sigstream::app
