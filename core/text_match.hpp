#pragma once
// "Did you mean ...?" for a mistyped word (YAML keys and values, command-line
// options and commands): Damerau-Levenshtein distance, ignoring case.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sigstream {

// Damerau-Levenshtein distance (optimal string alignment), ignoring case.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate, if it is close enough to be a plausible typo.
[[nodiscard]] std::optional<std::string_view> closest(std::string_view word,
                                                      std::span<const std::string_view> candidates);
// "; did you mean 'x'?", or "" when nothing is close.
[[nodiscard]] std::string did_you_mean(std::string_view word,
                                       std::span<const std::string_view> candidates);

} // namespace sigstream
