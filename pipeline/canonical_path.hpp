// The one spelling of a path that a batch compares inputs and outputs by:
// std::filesystem::weakly_canonical of its absolute form (so "x.wav" and
// "./x.wav" are one file, and a link is the file it names).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <unordered_map>

namespace sigstream {

// weakly_canonical of the absolute path; the path lexically normal where
// that fails (a folder it may not search).
std::filesystem::path canonical_of(const std::filesystem::path& p);

// canonical_of for many paths in few folders (a batch's inputs and its
// outputs): each folder is resolved once, and a path in it costs one lstat
// (is it a link?) instead of a readlink for each of its parts. 800 inputs
// and their outputs had cost 19,211 readlinks and 6,422 stats (~37 ms; 2-core
// dev machine), for every batch, listing and Dask plan. Same answers as
// canonical_of (a link, ".", ".." or a failing lookup takes canonical_of's
// way); a folder changed while it is in use (made, or made a link) is not
// seen again.
class CanonicalPaths {
public:
  std::filesystem::path of(const std::filesystem::path& p);
  // The folders resolved so far (what the cache holds; for tests).
  [[nodiscard]] std::size_t folders_resolved() const { return folders_.size(); }

private:
  std::unordered_map<std::string, std::filesystem::path> folders_;
};

} // namespace sigstream
