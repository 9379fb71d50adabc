#pragma once
// Interruption and temporary-file hygiene. SIGINT/SIGTERM set a flag that the
// pipeline polls between chunks (it then unwinds, and RAII owners delete their
// temporary files). A second signal deletes every registered temporary file
// from the handler itself and exits at once with 128+signal.
#include <string>

namespace sigstream {

void install_signal_handlers();
[[nodiscard]] bool interrupted() noexcept;
// Throws Error(interrupted) if a signal arrived.
void throw_if_interrupted();

// Registers a temporary path for emergency deletion; returns a slot (or -1 if
// the table is full, in which case only the RAII owner will delete it).
int register_temp_path(const std::string& path) noexcept;
void unregister_temp_path(int slot) noexcept;

// Registers a child process (an FFmpeg decoder or encoder) that the second signal's
// exit kills first (-1 if the table is full: only its owner stops it).
int register_child(int pid) noexcept;
void unregister_child(int slot) noexcept;

} // namespace sigstream
