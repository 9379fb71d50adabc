#include "pipeline/canonical_path.hpp"

#include <algorithm>
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

fs::path CanonicalPaths::of(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  if (ec)
    return canonical_of(p);
  const fs::path name = a.filename();
  const fs::path folder = a.parent_path();
  // weakly_canonical(folder / name) is weakly_canonical(folder) / name when
  // the name is a plain part that is not a link and the folder's spelling
  // has no "." or ".." (those normalise across parts that may not exist).
  const auto dotted = [](const fs::path& q) {
    return std::any_of(q.begin(), q.end(),
                       [](const fs::path& part) { return part == "." || part == ".."; });
  };
  if (name.empty() || name == "." || name == ".." || folder == a || dotted(folder))
    return canonical_of(p);
  // A name that does not exist yet (most outputs) is a plain part too:
  // symlink_status reports it as not_found with ENOENT.
  const fs::file_status st = fs::symlink_status(a, ec);
  if ((ec && st.type() != fs::file_type::not_found) || fs::is_symlink(st))
    return canonical_of(p);
  auto [it, fresh] = folders_.try_emplace(folder.native());
  if (fresh)
    it->second = canonical_of(folder);
  return it->second / name;
}

} // namespace sigstream
