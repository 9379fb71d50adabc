#include "pipeline/canonical_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <system_error>

namespace sigstream {

namespace fs = std::filesystem;

fs::path canonical_of(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  fs::path c = fs::weakly_canonical(a, ec);
  if (ec)
    c = a.lexically_normal();
  return c;
}

namespace {

// An absolute folder spelled without ".", ".." or a doubled '/' (those
// normalise across parts that may not exist: canonical_of's way).
bool plain_spelling(const std::string& folder) {
  if (folder == "/")
    return true;
  return folder.find("//") == std::string::npos && folder.find("/./") == std::string::npos &&
         folder.find("/../") == std::string::npos && !folder.ends_with("/.") &&
         !folder.ends_with("/..") && !folder.ends_with("/");
}

} // namespace

const CanonicalPaths::Entry& CanonicalPaths::lookup(const std::string& p) {
  // Its absolute spelling, the memo's key (an absolute path is looked up as given).
  std::string a;
  if (!p.empty() && p.front() == '/') {
    if (const auto it = known_.find(std::string_view(p)); it != known_.end())
      return it->second;
    a = p;
  } else {
    if (char cwd[PATH_MAX]; !p.empty() && ::getcwd(cwd, sizeof cwd) != nullptr) {
      a = cwd;
      if (a != "/") // (at the root, "/x", not "//x": that one takes canonical_of's way)
        a += '/';
    }
    a += p; // (still relative where there is no cwd: resolve takes canonical_of's way)
    if (const auto it = known_.find(std::string_view(a)); it != known_.end())
      return it->second;
  }
  Entry e = resolve(a, p);
  return known_.emplace(std::move(a), std::move(e)).first->second;
}

// weakly_canonical(folder / name) is weakly_canonical(folder) / name when
// the name is a plain part that is not a link and the folder's spelling is
// plain. A name that does not exist yet (most outputs) is a plain part too.
CanonicalPaths::Entry CanonicalPaths::resolve(const std::string& a, const std::string& given) {
  const auto slow = [&] { return Entry{canonical_of(given).native(), std::nullopt}; };
  const std::size_t slash = a.rfind('/');
  if (a.empty() || a.front() != '/' || slash == std::string::npos)
    return slow();
  const std::string_view name = std::string_view(a).substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    return slow();
  const std::string_view folder_name =
      slash == 0 ? std::string_view("/") : std::string_view(a).substr(0, slash);
  auto it = folders_.find(folder_name);
  const bool fresh = it == folders_.end();
  if (fresh)
    it = folders_.emplace(std::string(folder_name), Folder{}).first;
  Folder& folder = it->second;
  if (fresh) {
    folder.plain = plain_spelling(it->first);
    if (folder.plain) {
      folder.canonical = canonical_of(it->first).native();
      struct stat st {};
      folder.missing = ::stat(it->first.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
      ++resolved_;
    }
  }
  if (!folder.plain)
    return slow();
  const auto in_folder = [&] {
    std::string k = folder.canonical;
    if (k != "/")
      k += '/';
    k += name;
    return k;
  };
  if (folder.missing) // (an out_dir not made yet: its outputs)
    return Entry{in_folder(), std::nullopt};
  struct stat st {};
  const bool there = ::lstat(a.c_str(), &st) == 0;
  if (there ? S_ISLNK(st.st_mode) : (errno != ENOENT && errno != ENOTDIR))
    return slow();
  Entry k{in_folder(), std::nullopt};
  if (there)
    k.found =
        Found{S_ISDIR(st.st_mode), S_ISREG(st.st_mode), static_cast<std::uintmax_t>(st.st_size)};
  return k;
}

} // namespace sigstream
