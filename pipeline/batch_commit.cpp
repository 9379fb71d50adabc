#include "pipeline/batch_commit.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sigstream {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

json identity_json(const FileIdentity& id) {
  return {{"dev", id.dev}, {"ino", id.ino}, {"size", id.size}, {"mtime_ns", id.mtime_ns}};
}

// The hidden temporaries beside `target` written by `host`/`pid` (any pid: 0).
std::vector<std::string> temps_beside(const std::string& target, const std::string& host,
                                      long pid) {
  std::vector<std::string> out;
  const fs::path t(target);
  const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  const std::string name = t.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    const auto parts = parse_temp_file_name(f);
    if (!parts || parts->old_format() || parts->host != host || (pid != 0 && parts->pid != pid))
      continue;
    // The same NAME (cut as temporary names cut it): the name rebuilt from its parts.
    if (temp_file_name(name, parts->host, parts->pid, f.substr(f.size() - 6)) != f)
      continue;
    out.push_back(it->path().string());
  }
  return out;
}

// Renames `from` to `to` unless `to` exists (then, or when `from` is gone: false).
bool rename_no_replace(const std::string& from, const std::string& to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
    return true;
  if (errno != EINVAL && errno != ENOSYS)
    return false;
#endif
  // No RENAME_NOREPLACE on this file system: a link fails where `to` exists.
  if (::link(from.c_str(), to.c_str()) != 0)
    return false;
  ::unlink(from.c_str());
  return true;
}

} // namespace

json commit_record_json(const CommitFiles& files) {
  json j = json::object();
  if (files.output)
    j["output"] = identity_json(*files.output);
  if (files.csv)
    j["csv"] = identity_json(*files.csv);
  return j;
}

std::optional<FileIdentity> identity_from_json(const json& j) {
  if (!j.is_object())
    return std::nullopt;
  for (const char* k : {"dev", "ino", "size", "mtime_ns"})
    if (!j.contains(k) || !j[k].is_number_integer())
      return std::nullopt;
  FileIdentity id;
  id.dev = j["dev"].get<std::uint64_t>();
  id.ino = j["ino"].get<std::uint64_t>();
  id.size = j["size"].get<std::int64_t>();
  id.mtime_ns = j["mtime_ns"].get<std::int64_t>();
  return id;
}

bool complete_pending_commit(const BatchItem& item,
                             const std::function<bool(const BatchItem&)>& is_current) {
  if (item.stats_json.empty())
    return false;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(item.stats_json, ec)))
    return false; // committed (or not ours to replace)
  // A pending commit has put its first output in place: the audio, else the
  // CSV (with neither, the JSON is the only commit, and redoing the file
  // commits it once). Without it there is nothing to complete, and the
  // folder is not listed: a batch checks every file before its work, and a
  // folder it writes thousands of outputs into, listed for each (while its
  // workers create and rename there), cost it a third of its rate (stop 44).
  const std::string& first = !item.output.empty() ? item.output : item.stats_csv;
  if (first.empty() || !fs::exists(fs::symlink_status(first, ec)))
    return false;
  for (const std::string& pending : temps_beside(item.stats_json, temp_host_tag(), 0)) {
    if (!temp_writer_dead(pending))
      continue; // a live writer (this process included): its own business
    std::ifstream f(pending);
    const json j = json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      continue; // killed while writing it
    const json batch = j.value("batch", json());
    if (!batch.is_object() || !batch.contains("commit") || !batch["commit"].is_object())
      continue;
    const json& record = batch["commit"];
    // The audio: committed, and still the file the dead worker committed.
    if (!item.output.empty()) {
      const auto want = identity_from_json(record.value("output", json()));
      if (!want || identity_of_path(item.output) != want)
        continue;
    }
    // The CSV: in place as recorded, or still the dead worker's temporary.
    std::string csv_pending;
    std::optional<FileIdentity> csv_want;
    if (!item.stats_csv.empty()) {
      csv_want = identity_from_json(record.value("csv", json()));
      if (!csv_want)
        continue;
      if (identity_of_path(item.stats_csv) != csv_want) {
        const auto parts = parse_temp_file_name(fs::path(pending).filename().string());
        for (const std::string& t : temps_beside(item.stats_csv, parts->host, parts->pid))
          if (identity_of_path(t) == csv_want)
            csv_pending = t;
        if (csv_pending.empty())
          continue;
      }
    }
    BatchItem probe = item;
    probe.stats_json = pending;
    if (!csv_pending.empty())
      probe.stats_csv = csv_pending;
    if (!is_current(probe))
      continue;
    // The dead worker's remaining commits, in its order: CSV, then JSON.
    if (!csv_pending.empty() && std::rename(csv_pending.c_str(), item.stats_csv.c_str()) != 0 &&
        identity_of_path(item.stats_csv) != csv_want)
      return false; // neither ours nor another retry's rename put it there
    return rename_no_replace(pending, item.stats_json);
  }
  return false;
}

} // namespace sigstream
