#include "core/text_match.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace sigstream {

namespace {

std::string lower_case(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

// Damerau-Levenshtein distance (optimal string alignment), ignoring case, so that
// transpositions like "casual" -> "causal" count as one edit.
std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = lower_case(a_in);
  const std::string b = lower_case(b_in);
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

// The closest candidate, if it is close enough to be a plausible typo. A candidate
// that would need every character replaced is no suggestion at all.
std::optional<std::string_view> closest(std::string_view word,
                                        std::span<const std::string_view> candidates) {
  std::optional<std::string_view> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  if (!best)
    return std::nullopt;
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best_distance > limit || best_distance >= std::max(word.size(), best->size())) {
    return std::nullopt;
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const auto best = closest(word, candidates);
  return best ? "; did you mean '" + std::string(*best) + "'?" : std::string();
}

} // namespace sigstream
