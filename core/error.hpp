#pragma once
// The one error type of sigstream. Every failure that reaches the user is a
// sigstream::Error; main() maps its kind to the exit code of SPEC §1.
#include <stdexcept>
#include <string>

namespace sigstream {

enum class ErrorKind {
  config,           // bad YAML, bad option, bad value: exit 2
  invalid_argument, // bad library argument or CLI usage: exit 2
  io,               // missing/unreadable/unwritable file, bad audio: exit 1
  cuda,             // CUDA runtime or cuFFT failure, or no device: exit 1
  verification,     // --verify found an error beyond tolerance: exit 1
  interrupted,      // SIGINT/SIGTERM: exit 130
  output_closed,    // the reader of a piped output went away: a quiet stop, exit 0
  internal,         // a bug: exit 1
  cuda_memory,      // a CUDA allocation failed: out of GPU (or pinned host) memory: exit 1
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }

private:
  ErrorKind kind_;
};

[[nodiscard]] inline int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::config:
    case ErrorKind::invalid_argument:
      return 2;
    case ErrorKind::interrupted:
      return 130;
    case ErrorKind::output_closed:
      return 0;
    default:
      return 1;
  }
}

[[nodiscard]] inline Error config_error(const std::string& m) {
  return {ErrorKind::config, m};
}
[[nodiscard]] inline Error io_error(const std::string& m) {
  return {ErrorKind::io, m};
}
[[nodiscard]] inline Error internal_error(const std::string& m) {
  return {ErrorKind::internal, m};
}

} // namespace sigstream
