#pragma once
// A mistyped command or option, by name and with a suggestion, checked
// before CLI11 parses: CLI11 reports an option group's missing member before
// an unknown option ("Exactly 1 option from [--lowpass, ...] is required"
// for --lowpas), and an unknown command as unexpected words in reverse order.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sigstream::app {

// The message for the first unknown command or option of argv (a
// did-you-mean where one is close), or none.
[[nodiscard]] std::optional<std::string> unknown_word(CLI::App& app, int argc, char** argv);

} // namespace sigstream::app
