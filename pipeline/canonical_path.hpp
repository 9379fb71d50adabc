// The one spelling of a path that a batch compares inputs and outputs by:
// std::filesystem::weakly_canonical of its absolute form (so "x.wav" and
// "./x.wav" are one file, and a link is the file it names).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
// seen again, nor is a path asked again (each is looked up once: a batch
// asks for its inputs and outputs more than once).
class CanonicalPaths {
public:
  std::filesystem::path of(const std::filesystem::path& p) { return key(p.native()); }
  // of(p) as a string (its native form): what a batch compares and hashes
  // paths by, without std::filesystem's parsing of each path into parts
  // (16,000 inputs and their outputs took ~0.6 s of a batch's plan in it;
  // 2-core dev machine). The reference stays valid for this object's life.
  const std::string& key(const std::string& p) { return lookup(p).key; }
  // What the lookup found of p itself, where it was a file or folder that is
  // not a link (else nothing: p was missing, a link, or took canonical_of's
  // way). Saves a batch a stat a file for its type and size.
  struct Found {
    bool directory = false;
    bool regular = false;
    std::uintmax_t bytes = 0;
  };
  [[nodiscard]] std::optional<Found> found(const std::string& p) { return lookup(p).found; }
  // Both at once (one lookup): p's key and what was found of it.
  struct Entry {
    std::string key;
    std::optional<Found> found;
  };
  const Entry& lookup(const std::string& p);
  // The folders resolved so far (what the cache holds; for tests).
  [[nodiscard]] std::size_t folders_resolved() const { return resolved_; }

private:
  struct Folder {
    bool plain = false;    // no ".", ".." or doubled '/' in its spelling
    bool missing = false;  // not there when resolved: no name in it is either
    std::string canonical; // canonical_of(folder), where plain
  };
  // (Looked up by a string_view: a path asked again is not copied.)
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  Entry resolve(const std::string& absolute, const std::string& given);
  std::unordered_map<std::string, Folder, Hash, std::equal_to<>> folders_;
  // absolute spelling -> what was found
  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> known_;
  std::size_t resolved_ = 0;
};

} // namespace sigstream
