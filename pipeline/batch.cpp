// `sigstream batch` (pipeline/batch.hpp): input expansion, resume records,
// the device starts, progress, the summary, and BatchRun, one batch as an
// object with small methods (where, planning, scheduling, the workers, the
// summary). Over 600 lines (~2500) and one file on purpose: these parts
// share the per-file record type, its JSON form and the scheduler's state,
// which would otherwise move into a header of internals; the summary writer
// is the part to split off when it grows.
#include "pipeline/batch.hpp"
#include "pipeline/batch_commit.hpp"
#include "pipeline/batch_shard.hpp"
#include "pipeline/batch_summary_json.hpp"
#include "pipeline/canonical_path.hpp"

#include "pipeline/plan.hpp"
#include "pipeline/resource_limits.hpp"
#include "pipeline/visible_devices.hpp"
#include "stages/registry.hpp"

#include <fnmatch.h>
#include <glob.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stop_token>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/trace.hpp"
#include "core/version.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/io/stats_writer.hpp"

namespace sigstream {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

// ---------------------------------------------------------------------------
// Paths

bool has_wildcard(std::string_view s) {
  return s.find_first_of("*?[{") != std::string_view::npos;
}

std::vector<std::string> split_components(const std::string& p) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : p) {
    if (c == '/') {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

std::string join_components(const std::vector<std::string>& parts, std::size_t from, std::size_t to,
                            bool absolute) {
  std::string s = absolute ? "/" : "";
  for (std::size_t i = from; i < to; ++i) {
    if (i > from)
      s += '/';
    s += parts[i];
  }
  if (s.empty())
    s = ".";
  return s;
}

std::string expand_tilde(const std::string& p) {
  if (p == "~" || p.rfind("~/", 0) == 0) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
      return std::string(home) + p.substr(1);
  }
  return p;
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Extensions libsndfile (with its usual codecs) reads, and those FFmpeg
// decodes for it (SPEC §14): what a folder walk takes.
bool is_audio_name(const fs::path& p) {
  static const std::set<std::string> kExt = {
      ".wav", ".wave", ".bwf", ".flac", ".aif", ".aiff", ".aifc", ".ogg", ".oga", ".opus",
      ".mp3", ".caf",  ".w64", ".rf64", ".au",  ".snd",  ".voc",  ".sd2", ".m4a", ".m4b",
      ".mp4", ".aac",  ".mov", ".webm", ".mkv", ".mka",  ".wma",  ".amr", ".3gp"};
  return kExt.count(lower(p.extension().string())) > 0;
}

bool is_hidden(const fs::path& p) {
  const std::string n = p.filename().string();
  return !n.empty() && n[0] == '.' && n != "." && n != "..";
}

// is_under for canonical spellings (CanonicalPaths::key): `p` is `dir` or
// below it.
bool is_under(const std::string& p, const std::string& dir) {
  if (p.compare(0, dir.size(), dir) != 0)
    return false;
  return p.size() == dir.size() || (!dir.empty() && dir.back() == '/') || p[dir.size()] == '/';
}

bool is_under(const fs::path& p, const fs::path& dir) {
  auto pi = p.begin();
  for (auto di = dir.begin(); di != dir.end(); ++di, ++pi) {
    if (di->empty())
      continue; // trailing separator
    if (pi == p.end() || *pi != *di)
      return false;
  }
  return true;
}

struct Found {
  std::string path;
  fs::path base; // the folder whose structure is mirrored under out_dir
  bool literal = false;
};

class Expander {
public:
  Expander(CanonicalPaths& canon, std::string out_dir_canonical, std::vector<Found>& out)
      : canon_(canon), out_dir_(std::move(out_dir_canonical)), out_(out) {
    while (out_dir_.size() > 1 && out_dir_.back() == '/') // (one not made yet: "out/")
      out_dir_.pop_back();
  }

  // Every audio file under `dir` (recursively), mirrored relative to `base`.
  // `rest` (a `**` pattern's tail) further filters the path below `dir`.
  void walk(const fs::path& dir, const fs::path& base, const std::string& rest = {}) {
    std::error_code ec;
    if (is_under(canon_.key(dir.native()), out_dir_))
      return;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
        end;
    std::vector<std::string> files;
    for (; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (is_hidden(p)) {
        if (it->is_directory(ec))
          it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory(ec)) {
        if (is_under(canon_.key(p.native()), out_dir_))
          it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec))
        continue;
      if (rest.empty() ? !is_audio_name(p) : !tail_matches(p.lexically_relative(dir), rest))
        continue;
      files.push_back(p.string());
    }
    std::sort(files.begin(), files.end());
    for (auto& f : files)
      out_.push_back({std::move(f), base, false});
  }

  // Returns the number of files found.
  std::size_t pattern(const std::string& raw) {
    const std::size_t before = out_.size();
    const std::string text = expand_tilde(raw);
    const bool absolute = !text.empty() && text[0] == '/';
    const auto parts = split_components(text);
    std::size_t first_wild = parts.size();
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (has_wildcard(parts[i])) {
        first_wild = i;
        break;
      }
    if (first_wild == parts.size()) { // a plain path
      std::error_code ec;
      if (fs::is_directory(text, ec))
        walk(text, text);
      else
        out_.push_back({text, {}, true});
      return out_.size() - before;
    }
    const fs::path base = join_components(parts, 0, first_wild, absolute);
    const auto dstar = std::find(parts.begin(), parts.end(), "**");
    if (dstar != parts.end()) {
      const auto k = static_cast<std::size_t>(dstar - parts.begin());
      const std::string head = join_components(parts, 0, k, absolute);
      const std::string rest = join_components(parts, k + 1, parts.size(), false);
      for (const std::string& dir : glob_paths(head)) {
        std::error_code ec;
        if (fs::is_directory(dir, ec))
          walk(dir, base, rest == "." ? std::string() : rest);
      }
      return out_.size() - before;
    }
    for (const std::string& m : glob_paths(text)) {
      std::error_code ec;
      const CanonicalPaths::Entry& e = canon_.lookup(m);
      if (e.found ? e.found->directory : fs::is_directory(m, ec)) { // (a link: stat's answer)
        walk(m, base);
      } else if (!is_under(e.key, out_dir_)) {
        out_.push_back({m, base, false});
      }
    }
    return out_.size() - before;
  }

private:
  CanonicalPaths& canon_; // the globs' matches are mostly in a few folders
  static std::vector<std::string> glob_paths(const std::string& pattern) {
    if (!has_wildcard(pattern))
      return {pattern};
    int flags = 0;
#ifdef GLOB_BRACE
    flags |= GLOB_BRACE;
#endif
#ifdef GLOB_TILDE
    flags |= GLOB_TILDE;
#endif
    glob_t g{};
    std::vector<std::string> out;
    if (::glob(pattern.c_str(), flags, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i)
        out.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    return out; // glob(3) sorts
  }

  // `**/rest`: rest matches the last components of `rel` (zero or more folders before).
  static bool tail_matches(const fs::path& rel, const std::string& rest) {
    std::vector<std::string> parts;
    for (const auto& c : rel)
      parts.push_back(c.string());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::string tail = join_components(parts, i, parts.size(), false);
      if (::fnmatch(rest.c_str(), tail.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0)
        return true;
    }
    return false;
  }

  std::string out_dir_; // canonical
  std::vector<Found>& out_;
};

std::string mirrored_subdir(const std::string& input, const fs::path& base) {
  const fs::path parent = fs::absolute(fs::path(input)).lexically_normal().parent_path();
  const fs::path b = fs::absolute(base).lexically_normal();
  fs::path rel = parent.lexically_relative(b);
  if (rel.empty() || rel == "." || *rel.begin() == "..")
    return {};
  return rel.string();
}

// ---------------------------------------------------------------------------
// Resume

std::optional<fs::file_time_type> mtime(const std::string& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    return std::nullopt;
  auto t = fs::last_write_time(p, ec);
  if (ec)
    return std::nullopt;
  return t;
}

// Where a file's statistics JSON records the effective config that made it.
// Each file carries its own record: the batch summary may be missing, or may
// describe a later run that was killed before it got to this file.
constexpr const char* kBatchKey = "batch";
constexpr const char* kFingerprintKey = "config_fingerprint";
constexpr const char* kInputKey = "input";
constexpr const char* kInputRealKey = "input_resolved";
// A path whose name is not UTF-8 (a Latin-1 name) is in JSON text with U+FFFD
// for its odd bytes (stats_text), which names no file, and two such names
// may read alike: its bytes are recorded too, as hex, under these keys.
constexpr const char* kInputHexKey = "input_hex";
constexpr const char* kInputRealHexKey = "input_resolved_hex";

std::optional<std::string> from_hex(const std::string& h) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    return -1;
  };
  if (h.size() % 2 != 0)
    return std::nullopt;
  std::string bytes;
  for (std::size_t i = 0; i < h.size(); i += 2) {
    const int hi = digit(h[i]), lo = digit(h[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    bytes += static_cast<char>(hi * 16 + lo);
  }
  return bytes;
}

// The file's statistics (SPEC §4) plus that record, and the identities of the
// audio and CSV files being committed with it (pipeline/batch_commit.hpp).
std::string batch_stats_json(const RunReport& report, const std::string& fingerprint,
                             const std::optional<CommitFiles>& files) {
  json j = stats_json_value(report);
  // The input as the resume check finds it again from any working folder
  // (the statistics' input.path is as the user gave it, maybe relative):
  // absolute, its links and ".." left as they are (another host or container
  // may resolve them otherwise; and "../x" below a linked folder is not its
  // lexical parent's x). And where it resolved then: a link retargeted since
  // names another file.
  std::error_code ec;
  const std::string absolute = fs::absolute(report.input_path, ec).string(),
                    resolved = canonical_of(report.input_path).string();
  j[kBatchKey] = {{kFingerprintKey, fingerprint}, {kInputKey, absolute}, {kInputRealKey, resolved}};
  if (!is_utf8(absolute))
    j[kBatchKey][kInputHexKey] = hex_of(absolute);
  if (!is_utf8(resolved))
    j[kBatchKey][kInputRealHexKey] = hex_of(resolved);
  if (files)
    j[kBatchKey]["commit"] = commit_record_json(*files);
  return stats_text(j, report);
}

struct ResumeCheck {
  std::optional<json> stats; // set when the file is up to date
  bool other_config = false; // complete and fresh, but not made by this effective config
};

// A file is up to date when its outputs are complete, not older than
// everything they were made from, and its statistics record `fingerprint`.
ResumeCheck up_to_date(const BatchItem& item, const std::vector<std::string>& deps, bool verify,
                       const std::string& fingerprint) {
  const auto in_time = mtime(item.input);
  if (!in_time)
    return {};
  fs::file_time_type newest = *in_time;
  for (const std::string& d : deps)
    if (auto t = mtime(d))
      newest = std::max(newest, *t);
  for (const std::string* p : {&item.output, &item.stats_json, &item.stats_csv}) {
    if (p->empty())
      continue;
    const auto t = mtime(*p);
    if (!t || *t < newest)
      return {};
  }
  std::ifstream f(item.stats_json);
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("input") || !j["input"].is_object())
    return {};
  // Whose statistics these are, each path resolved here: the record's
  // absolute input decides where it exists here (from any working folder);
  // else input.path as given (statistics made before the record had one, or
  // another host's or container's path). And where the file it resolved to
  // then still exists here, it must be this one (a link retargeted since).
  json record = j.value(kBatchKey, json());
  if (!record.is_object())
    record = json::object();
  const fs::path here = canonical_of(item.input);
  // A recorded path: its bytes from the hex key where its name is not UTF-8.
  const auto recorded = [&](const char* key, const char* hex_key) -> std::optional<std::string> {
    if (const json& h = record.value(hex_key, json()); h.is_string())
      return from_hex(h.get<std::string>());
    const json& p = record.value(key, json());
    return p.is_string() ? std::optional<std::string>(p.get<std::string>()) : std::nullopt;
  };
  const auto resolves_here = [&](const std::optional<std::string>& p) -> std::optional<bool> {
    std::error_code ec;
    if (!p || !fs::exists(*p, ec))
      return std::nullopt;
    return canonical_of(*p) == here;
  };
  const std::optional<bool> by_record = resolves_here(recorded(kInputKey, kInputHexKey));
  const json& given = j["input"].value("path", json());
  if (!(by_record ? *by_record
                  : given.is_string() && canonical_of(given.get<std::string>()) == here))
    return {};
  if (resolves_here(recorded(kInputRealKey, kInputRealHexKey)) == std::optional<bool>(false))
    return {};
  const json& v = j.value("verification", json());
  if (v.is_object() && !v.value("passed", false))
    return {};
  if (verify && !v.is_object())
    return {};
  // No record (statistics from `sigstream run` or an older sigstream) counts as another config.
  const bool same = record.contains(kFingerprintKey) && record[kFingerprintKey].is_string() &&
                    record[kFingerprintKey].get<std::string>() == fingerprint;
  if (!same)
    return {std::nullopt, true};
  return {std::move(j), false};
}

// up_to_date, after completing the commits of a worker that died between
// them (complete_pending_commit), if that is what the file is waiting for.
// `adopted`: set when this call completed them.
ResumeCheck up_to_date_or_completed(const BatchItem& item, const std::vector<std::string>& deps,
                                    bool verify, const std::string& fingerprint,
                                    bool* adopted = nullptr) {
  ResumeCheck check = up_to_date(item, deps, verify, fingerprint);
  if (check.stats)
    return check;
  const bool done = complete_pending_commit(item, [&](const BatchItem& probe) {
    return up_to_date(probe, deps, verify, fingerprint).stats.has_value();
  });
  if (!done)
    return check;
  if (adopted)
    *adopted = true;
  return up_to_date(item, deps, verify, fingerprint);
}

void fill_from_stats(BatchFileResult& r, const json& j) {
  auto num = [](const json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_number() ? o[k].get<double>() : 0.0;
  };
  auto integer = [](const json& o, const char* k) -> std::int64_t {
    return o.is_object() && o.contains(k) && o[k].is_number() ? o[k].get<std::int64_t>() : 0;
  };
  auto str = [](const json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>()
                                                              : std::string();
  };
  const json in = j.value("input", json());
  const json out = j.value("output", json());
  r.sample_rate = num(in, "sample_rate");
  r.channels = static_cast<int>(integer(in, "channels"));
  r.frames = integer(in, "frames");
  r.input_format = str(in, "format");
  r.output_frames = integer(out, "frames");
  r.output_format = str(out, "format");
  r.clipped_samples = integer(out, "clipped_samples");
  r.backend = str(j, "backend");
  r.device_name = str(j, "device");
  const json v = j.value("verification", json());
  if (v.is_object()) {
    r.verification_ran = true;
    r.rel_l2_error = num(v, "rel_l2_error");
  }
  try {
    for (const json& c : j.at("metrics").at("output").at("totals").at("channels")) {
      r.output_rms.push_back(num(c, "rms"));
      r.output_peak.push_back(num(c, "peak"));
      r.nonfinite += integer(c, "nonfinite");
    }
  } catch (const json::exception&) {
  }
  // A block with loudness (with several, the first by name: a resumed file's
  // statistics are read back unordered).
  if (const json m = j.value("metrics", json()); m.is_object())
    for (const auto& [name, block] : m.items())
      if (block.is_object() && block.contains("loudness") && block["loudness"].is_object()) {
        const json& l = block["loudness"];
        if (l.value("integrated_lufs", json()).is_number())
          r.integrated_lufs = l["integrated_lufs"].get<double>();
        if (l.value("true_peak_dbtp", json()).is_number())
          r.true_peak_dbtp = l["true_peak_dbtp"].get<double>();
        break;
      }
}

// Exactly once under at-least-once execution (SPEC §10): another process (an
// engine's retry, a shard started twice) may have committed this file since
// the batch planned it. Checked again just before the work: a file now up to
// date is a skip, not a second commit. (Two processes on one file at the same
// instant both commit; each commit is whole and the bytes are the same.)
bool committed_meanwhile(BatchFileResult& r, const std::vector<std::string>& deps, bool verify,
                         const std::string& fingerprint) {
  ResumeCheck check = up_to_date_or_completed(r.item, deps, verify, fingerprint);
  if (!check.stats)
    return false;
  r.status = BatchStatus::skipped;
  r.outputs_written = true;
  fill_from_stats(r, *check.stats);
  return true;
}

void fill_from_report(BatchFileResult& r, const RunReport& rep) {
  r.sample_rate = rep.sample_rate;
  r.channels = rep.channels;
  r.frames = rep.input_frames;
  r.output_frames = rep.output_frames;
  r.input_format = rep.input_format;
  r.output_format = rep.output_format;
  r.backend = rep.backend;
  r.device_name = rep.device;
  r.clipped_samples = rep.clipped_samples;
  for (const MetricsReport& m : rep.metrics)
    if (m.loudness) {
      r.integrated_lufs = m.loudness->integrated_lufs;
      r.true_peak_dbtp = m.loudness->true_peak_dbtp;
      break;
    }
  for (const MetricsReport& m : rep.metrics) {
    if (m.name != "output")
      continue;
    for (const ChannelMetrics& c : m.totals) {
      r.output_rms.push_back(c.rms());
      r.output_peak.push_back(c.peak);
      r.nonfinite += c.nonfinite;
    }
  }
  r.verification_ran = rep.verification.ran;
  r.rel_l2_error = rep.verification.rel_l2_error;
}

// For a file that failed (a truncated file, a bad stage for its rate): what
// its header says, so that its summary entry still gives rate, channels and
// frames. A truncated WAV does not open as a source: libsndfile's reading of
// its header gives them. A file whose header does not read leaves them unknown.
void fill_from_header(BatchFileResult& r) {
  try {
    const std::unique_ptr<Source> source = open_audio_file(r.item.input);
    r.sample_rate = source->info().sample_rate;
    r.channels = source->info().channels;
    r.frames = source->info().frames;
    r.input_format = source->format_name();
  } catch (const std::exception&) {
    if (const std::optional<AudioHeader> h = read_audio_header(r.item.input)) {
      r.sample_rate = h->sample_rate;
      r.channels = h->channels;
      r.frames = h->frames;
      r.input_format = h->format;
    }
  }
}

std::string fnv_hex(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000.0 && u < 4) {
    b /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

// ---------------------------------------------------------------------------
// The batch progress line (stderr, terminals only); log lines go above it.

class BatchDisplay {
public:
  BatchDisplay(bool enabled, std::function<void(const std::string&)> log, std::size_t files,
               std::uintmax_t bytes)
      : enabled_(enabled && ::isatty(STDERR_FILENO) == 1), log_(std::move(log)), files_(files),
        bytes_(bytes), start_(std::chrono::steady_clock::now()) {}

  [[nodiscard]] bool drawing() const noexcept { return enabled_; }

  void say(const std::string& line) {
    std::lock_guard lock(mutex_);
    if (!log_)
      return;
    clear_locked();
    log_(line);
    if (drawn_)
      draw_locked();
  }

  void update(std::size_t done, std::uintmax_t bytes_done, int failed, int running) {
    std::lock_guard lock(mutex_);
    done_ = done;
    bytes_done_ = bytes_done;
    failed_ = failed;
    running_ = running;
    if (!enabled_)
      return;
    const auto now = std::chrono::steady_clock::now();
    if (done < files_ && drawn_ && now - last_draw_ < std::chrono::milliseconds(100))
      return;
    last_draw_ = now;
    draw_locked();
  }

  void finish() {
    std::lock_guard lock(mutex_);
    clear_locked();
    drawn_ = false;
    enabled_ = false;
  }

private:
  void clear_locked() {
    if (!enabled_ || !drawn_)
      return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

  void draw_locked() {
    constexpr int kWidth = 24;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double frac =
        bytes_ > 0 ? static_cast<double>(bytes_done_) / static_cast<double>(bytes_)
                   : (files_ > 0 ? static_cast<double>(done_) / static_cast<double>(files_) : 1.0);
    const double rate = secs > 0 ? static_cast<double>(bytes_done_) / secs : 0.0;
    const double eta =
        rate > 0 ? static_cast<double>(bytes_ - std::min(bytes_, bytes_done_)) / rate : 0.0;
    char bar[kWidth + 1];
    const int filled = static_cast<int>(std::clamp(frac, 0.0, 1.0) * kWidth);
    for (int i = 0; i < kWidth; ++i)
      bar[i] = i < filled ? '#' : '.';
    bar[kWidth] = '\0';
    std::string eta_text = rate > 0 ? fmt("ETA %.0f s", eta) : std::string("ETA --");
    std::fprintf(stderr, "\r[%s] %zu/%zu files  %s/%s  %s/s  %s  %d running%s%s", bar, done_,
                 files_, human_bytes(static_cast<double>(bytes_done_)).c_str(),
                 human_bytes(static_cast<double>(bytes_)).c_str(), human_bytes(rate).c_str(),
                 eta_text.c_str(), running_, failed_ > 0 ? "  failed " : "",
                 failed_ > 0 ? std::to_string(failed_).c_str() : "");
    std::fprintf(stderr, "\033[K");
    std::fflush(stderr);
    drawn_ = true;
  }

  std::mutex mutex_;
  bool enabled_;
  bool drawn_ = false;
  std::function<void(const std::string&)> log_;
  std::size_t files_;
  std::uintmax_t bytes_;
  std::size_t done_ = 0;
  std::uintmax_t bytes_done_ = 0;
  int failed_ = 0, running_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// When a batch's next device is worth a context (see start_contexts): once a
// worker of the device before it holds its lanes and a wave of files has
// ended since (the rate of the running devices), while the work left lasts
// long enough to pay for a start (next_device_pays, pipeline/backend_choice.cpp),
// and only for a device that has workers.
class DeviceStarts {
public:
  using Clock = std::chrono::steady_clock;
  // `total_bytes`: the inputs' sizes, the batch's work as next_device_pays counts it.
  void planned(const std::vector<BatchWorker>& workers, std::uintmax_t total_bytes) {
    {
      std::lock_guard lock(mutex_);
      for (const BatchWorker& w : workers)
        ++workers_[w.device];
      total_ = static_cast<double>(total_bytes);
      planned_ = true;
      if (workers.empty())
        all_taken_ = true;
    }
    cv_.notify_all();
  }
  void starting(int device) {
    std::lock_guard lock(mutex_);
    begun_[device] = Clock::now();
  }
  void lanes_ready(int device) {
    {
      std::lock_guard lock(mutex_);
      if (ready_[device]++ == 0) {
        ready_at_[device] = Clock::now();
        files_at_ready_[device] = files_;
        if (!first_ready_)
          first_ready_ = Clock::now();
      }
    }
    cv_.notify_all();
  }
  void file_done(std::uintmax_t bytes) {
    {
      std::lock_guard lock(mutex_);
      ++files_;
      done_ += static_cast<double>(bytes);
    }
    cv_.notify_all();
  }
  void all_taken() {
    {
      std::lock_guard lock(mutex_);
      all_taken_ = true;
    }
    cv_.notify_all();
  }
  // Whether `device` was judged not worth a start (its workers stay idle).
  [[nodiscard]] bool declined(int device) {
    std::lock_guard lock(mutex_);
    return declined_.count(device) != 0;
  }
  // Waits until `next` should be started after `previous`; false: not worth
  // it (the work left is shorter than a start pays for, no worker for it, no
  // file left, or `previous` was not started either). A device not started
  // is declined: its workers take no file (declined()).
  bool wait_to_start(int previous, int next, std::stop_token stop) {
    std::unique_lock lock(mutex_);
    if (declined_.count(previous) != 0) {
      declined_.insert(next);
      return false;
    }
    const bool go = cv_.wait(lock, stop, [&] {
      if (all_taken_)
        return true;
      if (!planned_ || ready_[previous] < std::min(workers_[previous], kReadyBeforeNext))
        return false;
      const int wave = std::max(kMinWave, workers_[previous]);
      return files_ - files_at_ready_[previous] >= wave;
    });
    if (!go || all_taken_ || workers_[next] <= 0) {
      declined_.insert(next);
      return false;
    }
    const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    const double cost = begun_.count(previous) != 0 && ready_at_.count(previous) != 0
                            ? seconds(ready_at_[previous] - begun_[previous])
                            : 0.0;
    const double elapsed = first_ready_ ? seconds(Clock::now() - *first_ready_) : 0.0;
    last_decision_ = next_device_pays(cost, elapsed, done_, total_);
    if (!last_decision_)
      declined_.insert(next);
    if (trace_on())
      trace(("batch: device " + std::to_string(next) +
             (last_decision_ ? " starts" : " stays idle") + " (the last start took " +
             fmt("%.3f", cost) + " s; " + fmt("%.0f", done_) + " of " + fmt("%.0f", total_) +
             " bytes done in " + fmt("%.3f", elapsed) + " s)")
                .c_str());
    return last_decision_;
  }

private:
  std::mutex mutex_;
  std::condition_variable_any cv_;
  // Workers of a device that hold their lanes before the next device starts.
  static constexpr int kReadyBeforeNext = 1;
  // Files that end after those lanes, at least, before the rate is trusted.
  static constexpr int kMinWave = 2;
  std::map<int, int> workers_, ready_, files_at_ready_;
  std::map<int, Clock::time_point> begun_, ready_at_;
  std::optional<Clock::time_point> first_ready_;
  std::set<int> declined_;
  int files_ = 0;
  double done_ = 0.0, total_ = 0.0;
  bool planned_ = false, all_taken_ = false, last_decision_ = false;
};

// The CUDA backends of batches that ended, per device, for the next batch
// of this process: a Dask or Python worker runs one batch call per file, and
// its lanes, cuFFT plans and pinned buffers are then made once per process,
// not per file. Never destroyed (as the memory caches): at exit the OS takes
// the memory back; a process keeps the GPU memory of its last batch's lanes.
class IdleBackends {
public:
  std::unique_ptr<Backend> take(int device) {
    std::lock_guard lock(mutex_);
    auto it = idle_.find(device);
    if (it == idle_.end() || it->second.empty())
      return nullptr;
    std::unique_ptr<Backend> b = std::move(it->second.back());
    it->second.pop_back();
    return b;
  }
  void give(int device, std::unique_ptr<Backend> b) {
    if (!b)
      return;
    std::lock_guard lock(mutex_);
    std::vector<std::unique_ptr<Backend>>& v = idle_[device];
    if (v.size() < kMaxPerDevice)
      v.push_back(std::move(b));
  }

private:
  static constexpr std::size_t kMaxPerDevice = 256;
  std::mutex mutex_;
  std::map<int, std::vector<std::unique_ptr<Backend>>> idle_;
};

IdleBackends& idle_backends() {
  static auto* idle = new IdleBackends;
  return *idle;
}

std::string summary_csv_path(const std::string& json_path) {
  fs::path p(json_path);
  p.replace_extension(".csv");
  return p.string();
}

} // namespace

// ---------------------------------------------------------------------------

std::string_view to_string(BatchStatus s) {
  switch (s) {
    case BatchStatus::ok:
      return "ok";
    case BatchStatus::skipped:
      return "skipped";
    case BatchStatus::failed:
      return "failed";
    case BatchStatus::interrupted:
      return "interrupted";
    case BatchStatus::not_run:
      return "not_run";
  }
  return "?";
}

int BatchSummary::files_exit_code() const noexcept {
  if (interrupted)
    return 130;
  // (A file never started is a failure too: only a stop or an interruption leaves one.)
  return failed > 0 || interrupted_files > 0 || not_run > 0 ? 1 : 0;
}

int BatchSummary::exit_code() const noexcept {
  const int rc = files_exit_code();
  return rc == 0 && !summary_json.empty() && !summary_written ? 1 : rc;
}

std::vector<BatchItem> collect_batch_items(const Config& config,
                                           const std::vector<std::string>& extra_inputs,
                                           const std::string& out_dir,
                                           const std::function<void(const std::string&)>& log,
                                           CanonicalPaths* shared) {
  CanonicalPaths own;
  CanonicalPaths& canon = shared != nullptr ? *shared : own;
  const fs::path out_canon = canonical_of(out_dir);
  std::vector<Found> found;
  Expander ex(canon, out_canon.native(), found);
  std::vector<std::string> patterns = config.batch.inputs;
  patterns.insert(patterns.end(), extra_inputs.begin(), extra_inputs.end());
  if (patterns.empty())
    throw config_error("batch: no inputs: give files, folders or globs on the command line or in "
                       "batch.inputs of " +
                       config.origin);
  for (const std::string& p : patterns) {
    if (ex.pattern(p) != 0 || !log)
      continue;
    std::error_code ec;
    const std::string named = expand_tilde(p);
    const fs::path folder = canonical_of(named);
    if (fs::is_directory(named, ec) && is_under(folder, out_canon))
      log("batch: warning: '" + p + "' is " +
          (folder == out_canon ? "the out_dir" : "inside the out_dir '" + out_dir + "'") +
          ", and a batch never searches its out_dir for inputs (they would be its own outputs): "
          "give another out_dir (--out-dir), such as '" +
          (fs::path(p) / "filtered").lexically_normal().string() + "'");
    else
      log("batch: warning: '" + p + "' matched no audio files");
  }

  // A plain path's outputs go straight into out_dir (out_dir/<stem>...),
  // whatever else the batch holds: where they go must not change when a file
  // from another folder joins the batch (the resume check would miss every
  // output made before). Globs and folders mirror their subfolders.
  std::unordered_set<std::string> seen;
  std::vector<BatchItem> items;
  // (A glob's or a folder's files share a few folders: each folder's
  // mirrored subfolder is worked out once.)
  // (Keyed by the file's folder as spelled and its base: a found file's name
  // is never "." or "..", so its folder fixes its mirrored subfolder.)
  std::unordered_map<std::string, std::string> subdirs;
  const auto subdir_of = [&](const Found& f) {
    const std::size_t slash = f.path.rfind('/');
    std::string key = slash == std::string::npos ? std::string() : f.path.substr(0, slash);
    key += '\0';
    key += f.base.native();
    auto [pos, fresh] = subdirs.try_emplace(std::move(key));
    if (fresh)
      pos->second = mirrored_subdir(f.path, f.base);
    return pos->second;
  };
  for (const Found& f : found) {
    if (!seen.insert(canon.key(f.path)).second)
      continue;
    BatchItem it;
    it.input = f.path;
    if (!f.literal)
      it.subdir = subdir_of(f);
    items.push_back(std::move(it));
  }
  if (items.empty()) {
    std::string list;
    for (const auto& p : patterns)
      list += (list.empty() ? "'" : ", '") + p + "'";
    throw config_error("batch: no input files: " + list + " matched nothing (out_dir '" + out_dir +
                       "' is never searched)");
  }
  return finish_batch_items(config, std::move(items), out_dir, &canon);
}

void check_out_dir(const std::string& out_dir) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(out_dir), ec).lexically_normal();
  while (!p.empty()) {
    const fs::file_status st = fs::status(p, ec); // not_found where a part above is a file
    if (fs::exists(st)) {
      if (!fs::is_directory(st))
        throw config_error("batch: out_dir '" + out_dir + "': " +
                           (fs::path(out_dir).lexically_normal() == p.lexically_normal()
                                ? std::string("it")
                                : "'" + p.string() + "'") +
                           " is a file, not a folder");
      return;
    }
    if (p == p.root_path() || p.parent_path() == p)
      return;
    p = p.parent_path();
  }
}

std::vector<BatchItem> plain_batch_items(const std::vector<std::string>& paths) {
  std::vector<BatchItem> items;
  for (const std::string& p : paths) {
    BatchItem it;
    it.input = p;
    items.push_back(std::move(it));
  }
  return items;
}

std::vector<BatchItem> finish_batch_items(const Config& config, std::vector<BatchItem> given,
                                          const std::string& out_dir, CanonicalPaths* shared) {
  CanonicalPaths own;
  CanonicalPaths& canon = shared != nullptr ? *shared : own;
  // Each input once (by its canonical path, the first spelling kept): the
  // outputs below may be none of them either.
  std::unordered_map<std::string_view, std::string> inputs; // (canon's strings)
  std::vector<BatchItem> items;
  for (BatchItem& it : given) {
    const CanonicalPaths::Entry& e = canon.lookup(it.input);
    if (!inputs.emplace(e.key, it.input).second)
      continue;
    if (e.found && e.found->regular) {
      it.bytes = e.found->bytes;
    } else { // (a link: stat's answer)
      std::error_code ec;
      const auto size = fs::file_size(it.input, ec);
      it.bytes = ec ? 0 : size;
    }
    items.push_back(std::move(it));
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const BatchItem& a, const BatchItem& b) { return a.input < b.input; });

  const std::string sink_ext =
      config.sink.file ? fs::path(*config.sink.file).extension().string() : "";
  for (BatchItem& it : items) {
    if (!it.stats_json.empty())
      continue; // explicit paths
    fs::path stem_path = fs::path(out_dir);
    if (!it.subdir.empty())
      stem_path /= it.subdir;
    stem_path /= fs::path(it.input).stem();
    const std::string s = stem_path.string();
    if (config.sink.file)
      it.output = s + sink_ext;
    it.stats_json = s + ".json";
    if (config.stats.csv)
      it.stats_csv = s + ".csv";
  }

  // Every path written must be distinct, and none may be an input.
  // (Keyed by canon's own strings; the value: whose output, null for the summary.)
  std::unordered_map<std::string_view, const std::string*> claimed;
  const std::string summary = (fs::path(out_dir) / "batch_summary.json").string();
  const std::string summary_c = canonical_of(summary).native(),
                    summary_csv_c = canonical_of(summary_csv_path(summary)).native();
  claimed.emplace(summary_c, nullptr);
  claimed.emplace(summary_csv_c, nullptr);
  std::vector<std::string> problems;
  for (const BatchItem& it : items) {
    for (const std::string* p : {&it.output, &it.stats_json, &it.stats_csv}) {
      if (p->empty())
        continue;
      const std::string& c = canon.key(*p);
      if (auto in = inputs.find(c); in != inputs.end()) {
        problems.push_back("output '" + *p + "' of '" + it.input + "' would overwrite the input '" +
                           in->second + "' (choose another out_dir or sink extension)");
        continue;
      }
      auto [pos, fresh] = claimed.emplace(c, &it.input);
      if (!fresh)
        problems.push_back(
            "'" + it.input + "' and " +
            (pos->second != nullptr ? "'" + *pos->second + "'" : std::string("the batch summary")) +
            " both map to '" + *p + "'");
    }
  }
  if (!problems.empty()) {
    std::string m = "batch: outputs collide:";
    for (const auto& p : problems)
      m += "\n  " + p;
    throw config_error(m + "\n(a file named on its own, or on a line of its own in a list, goes "
                           "straight into out_dir, and a folder's or a glob's files keep their "
                           "subfolders: give such files' folder or a quoted glob, or list "
                           "'input<TAB>output' lines, rename one, or run them in separate "
                           "batches)");
  }
  return items;
}

std::vector<int> resolve_batch_devices(const std::vector<int>& requested, int device_count) {
  std::vector<int> out;
  if (requested.empty()) {
    for (int d = 0; d < device_count; ++d)
      out.push_back(d);
    return out;
  }
  std::string bad;
  for (int d : requested) {
    if (d < 0 || d >= device_count) {
      bad += (bad.empty() ? "" : ", ") + std::to_string(d);
      continue;
    }
    if (std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(d);
  }
  if (!bad.empty())
    throw config_error(
        "execution.device: device " + bad + " does not exist (" + std::to_string(device_count) +
        " CUDA device(s) found; expected " +
        (device_count > 0 ? "0.." + std::to_string(device_count - 1) : std::string("none")) + ")");
  return out;
}

int auto_files_per_device(int cpu_threads, int devices) {
  // The CPU threads over the GPUs (rounded up), at least 2 and at most
  // kAutoFilesPerDevice a GPU. A file's reading and writing cost the CPU
  // several times what its computing costs the GPU, and a file's host work is
  // serial, so a GPU's rate grows with its files in flight until the host
  // saturates. Measured (bench/RESULTS.md, stop 42), the io config (255
  // taps), 800 files: one H100 host, 16 cores, 1.07-1.19 s at 16 a GPU
  // against 1.13-1.81 s at 8 and 1.34-1.41 s at 32 (more workers pin more
  // memory, ~0.65 ms a MiB, and set up longer); a 4 x H100 host, 64 cores,
  // in one call: GPU 0 alone 1.82-1.89 s at 16 against 1.87-2.20 s at 8, all
  // four 1.72-1.79 s at 16 against 2.08-2.15 s at 8 (at 8, four GPUs were
  // slower than one at 16 in later calls too). The GPU-bound config: on one
  // GPU 2-2.7% slower at 16; on four, its files/s with every device running
  // is the same (4.0x one GPU's), but its last device holds its lanes ~0.35 s
  // later (contexts come slower beside more busy workers, a wave of files
  // takes longer): 2.86 s against 2.55-2.57 s after the driver's start, with
  // the same scheduling variant (not kept) in both; stop 40: 16 a GPU
  // 2.26-2.36 s, 8 a GPU 2.11-2.33 s. Stop 44, one GPU of a 32-core host,
  // once a file's check no longer listed the output folder: 16 a GPU
  // 1.00-1.14 s for 800 files and 1.68-1.89 s for 2,400, against 1.18-1.28
  // and 1.81-1.94 s at 32, 1.33-1.45 and 2.11-2.16 s at 48 (the cap had
  // looked too low only while that listing's lock held the workers back).
  const int d = std::max(1, devices);
  return std::clamp((std::max(1, cpu_threads) + d - 1) / d, 2, kAutoFilesPerDevice);
}

bool gpu_bound_file(const FileSeconds& est, double bytes) {
  const double host = est.samples + est.output_samples;
  return std::isfinite(est.cuda) && est.samples > 0.0 && !est.output_compressed &&
         bytes >= kUncompressedBytesPerSample * est.samples &&
         est.cuda >= kGpuBoundSecondsPerHostSample * host;
}

int auto_files_per_device(int cpu_threads, int devices, bool gpu_bound) {
  // A file the GPU bounds keeps it busy with fewer files in flight: its
  // host work (reading, writing) over its GPU time, plus one, is the files
  // it needs. An uncompressed 30 s stereo file costs the host ~10-25 ms
  // (the floor's processes on the hosts we measured: ~2-4.5 ns a sample read
  // or written), so 8 leave room at 0.5 ns of GPU time a sample read or
  // written. The io config (255 taps + metrics) is ~0.1 ns on the cost
  // model; the GPU-bound one (65,536 taps direct + 48 -> 44.1 kHz +
  // spectrum) ~1.4. Measured (4 x
  // H200, 64 cores, 800 GPU-bound files, bench/p11_stop50_perdev.sh, two
  // rounds alternating): GPU 0 6.37-6.41 s at 8 a GPU against 6.42-6.53 s
  // at 16; GPUs 0,1 3.84-3.92 s against 4.07-4.14 s; 0-3 3.26-3.28 s
  // against 3.55-3.60 s (12 a GPU: 6.39-6.42 / 3.95-4.01 / 3.35-3.45 s); on
  // another host of that kind, three rounds, 0-3 3.45-3.70 s against
  // 3.52-3.67 s at 16 and 0,1 3.91-4.16 against 4.06-4.13 s: no slower
  // anywhere. Every row ran at the same rate once started (136 files/s a
  // GPU); the later devices' workers held their lanes sooner (fewer to set
  // up, a shorter first wave before the next device starts, DeviceStarts)
  // and the exit released less pinned memory. (Stop 42, 4 x H100: 8 a GPU
  // 2.29-2.58 s against 2.86-3.16 s at 16, 600 files on four GPUs; 4 a GPU
  // left the GPUs idle part of the time.) A compressed input (FLAC, MP3)
  // costs the host more a file: its rule stays the CPU threads'.
  const int most = auto_files_per_device(cpu_threads, devices);
  return gpu_bound ? std::min(most, kGpuBoundFilesPerDevice) : most;
}

std::vector<BatchWorker> plan_batch_workers(const std::vector<int>& devices, int files_per_device,
                                            int cpu_threads, std::size_t files) {
  std::vector<BatchWorker> out;
  const std::size_t cap = std::max<std::size_t>(1, files);
  if (!devices.empty()) {
    const int per = files_per_device > 0
                        ? files_per_device
                        : auto_files_per_device(cpu_threads, static_cast<int>(devices.size()));
    for (int slot = 0; slot < per; ++slot)
      for (int d : devices)
        if (out.size() < cap)
          out.push_back({d, 0});
    return out;
  }
  const int budget = std::max(1, cpu_threads);
  const int workers =
      static_cast<int>(std::min<std::size_t>(cap, static_cast<std::size_t>(budget)));
  for (int w = 0; w < workers; ++w)
    out.push_back({-1, std::max(1, budget / workers)});
  return out;
}

std::vector<std::size_t> batch_dispatch_order(const std::vector<std::uintmax_t>& bytes) {
  std::vector<std::size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
  return order;
}

FileSeconds estimate_file_seconds(const Config& config, const BatchItem& item,
                                  const BatchOptions& options) {
  FileSeconds est;
  if (item.bytes == 0)
    return est;
  std::optional<Plan> p;
  try {
    Config c = config;
    c.source.file = item.input;
    c.source.synth.reset();
    const std::unique_ptr<Source> source = open_source(c.source);
    p = make_plan(c, source->info(), 0);
    // The format the pipeline would write (choose_sink_format, as it does).
    est.output_compressed =
        c.sink.file &&
        compresses(choose_sink_format(*c.sink.file, c.sink.format, source->sndfile_format(),
                                      c.sink.type, c.sink.quality));
  } catch (const std::exception&) {
    return est;
  }
  if (p->length_known && p->source_frames > 0) {
    est.samples = static_cast<double>(p->source_frames) * std::max(1, p->channels);
    est.output_samples = static_cast<double>(std::max<std::int64_t>(0, p->output_frames)) *
                         std::max(1, p->output_channels);
  }
  // (resolve_methods resolves each method from what the stage asked: one
  // plan serves both.)
  try {
    resolve_methods(*p, "cpu");
    est.cpu =
        options.cpu_file_estimate ? options.cpu_file_estimate(*p) : cpu_seconds_estimate(*p, 1);
  } catch (const std::exception&) {
    est.cpu = std::numeric_limits<double>::infinity();
  }
  try {
    resolve_methods(*p, "cuda");
    est.cuda =
        options.gpu_file_estimate ? options.gpu_file_estimate(*p) : cuda_seconds_estimate(*p);
  } catch (const std::exception&) {
    est.cuda = std::numeric_limits<double>::infinity();
  }
  return est;
}

std::string batch_config_fingerprint(const Config& c, const std::string& backend) {
  return fnv_hex(batch_config_facts(c, backend));
}

std::string batch_config_facts(const Config& c, const std::string& backend) {
  std::ostringstream o;
  o.precision(17);
  o << "v1|" << backend << '|' << to_string(c.sink.format) << '|'
    << (c.sink.file ? lower(fs::path(*c.sink.file).extension().string()) : std::string("-")) << '|'
    << (c.stats.csv ? "csv" : "-");
  for (const StageSpec& s : c.stages) {
    o << "|stage:" << to_string(s.type) << ':' << s.name;
    if (const auto facts = stage_kind(s.type).facts)
      facts(s, o);
  }
  return o.str();
}

namespace {

// The summary without its files' entries ("files", its last key, empty).
json summary_head(const BatchSummary& s, const std::string& fingerprint) {
  json j;
  j["schema"] = 1;
  j["sigstream_version"] = kVersion;
  j["config_fingerprint"] = fingerprint;
  if (s.shard)
    j["shard"] = {{"index", s.shard->shard.index},
                  {"count", s.shard->shard.count},
                  {"inputs_sha256", s.shard->inputs_sha256},
                  {"config_sha256", s.shard->config_sha256},
                  {"inputs_total", s.shard->inputs_total}};
  j["out_dir"] = s.out_dir;
  j["backend"] = s.backend;
  // The summary is rendered before it is written: its exit code is the files' one.
  j["exit_code"] = s.files_exit_code();
  j["interrupted"] = s.interrupted;
  j["stopped_at_failure"] = s.stopped;
  j["counts"] = {{"total", s.files.size()},
                 {"ok", s.ok},
                 {"skipped", s.skipped},
                 {"failed", s.failed},
                 {"interrupted", s.interrupted_files},
                 {"not_run", s.not_run}};
  std::int64_t frames = 0;
  double audio_s = 0.0;
  for (const auto& f : s.files)
    if (f.status == BatchStatus::ok) {
      frames += f.frames;
      audio_s += f.duration_s();
    }
  j["wall_s"] = s.wall_s;
  j["bytes"] = s.bytes;
  j["frames"] = frames;
  j["audio_s"] = audio_s;
  j["files_per_s"] = s.wall_s > 0 ? s.ok / s.wall_s : 0.0;
  j["bytes_per_s"] = s.wall_s > 0 ? static_cast<double>(s.bytes) / s.wall_s : 0.0;
  j["frames_per_s"] = s.wall_s > 0 ? static_cast<double>(frames) / s.wall_s : 0.0;
  j["workers"] = json::array();
  for (const auto& w : s.workers)
    j["workers"].push_back(
        {{"device", w.device >= 0 ? json(w.device) : json("cpu")}, {"threads", w.threads}});
  j["devices"] = json::array();
  for (const auto& d : s.devices)
    j["devices"].push_back({{"device", d.device >= 0 ? json(d.device) : json("cpu")},
                            {"workers", d.workers},
                            {"files", d.files},
                            {"failed", d.failed},
                            {"frames", d.frames},
                            {"busy_s", d.busy_s}});
  j["files"] = json::array();
  return j;
}

// One file's entry of the summary's "files".
json summary_file_entry(const BatchFileResult& f) {
  // The input's facts are known once it opened; the output's only where it exists.
  const bool known = f.channels > 0;
  const bool written = f.outputs_written;
  auto opt_num = [&](double v) { return known ? json(v) : json(nullptr); };
  json e;
  e["file"] = f.item.input;
  e["output"] = !written || f.item.output.empty() ? json(nullptr) : json(f.item.output);
  e["stats"] = written ? json(f.item.stats_json) : json(nullptr);
  e["status"] = std::string(to_string(f.status));
  e["error"] = f.error.empty() ? json(nullptr) : json(f.error);
  e["bytes"] = f.item.bytes;
  // Whole rates as integers, like the per-file statistics (SPEC §4).
  e["sample_rate"] = known && f.sample_rate == std::floor(f.sample_rate)
                         ? json(static_cast<std::int64_t>(f.sample_rate))
                         : opt_num(f.sample_rate);
  e["channels"] = known ? json(f.channels) : json(nullptr);
  e["frames"] = known ? json(f.frames) : json(nullptr);
  e["duration_s"] = opt_num(f.duration_s());
  e["output_frames"] = written && known ? json(f.output_frames) : json(nullptr);
  e["input_format"] = f.input_format;
  e["output_format"] = f.output_format;
  e["wall_s"] = f.wall_s;
  e["frames_per_s"] = f.wall_s > 0 && known && written
                          ? json(static_cast<double>(f.frames) / f.wall_s)
                          : json(nullptr);
  e["backend"] = f.backend;
  e["device"] = f.device >= 0 ? json(f.device) : json(nullptr);
  e["device_name"] = f.device_name;
  e["clipped_samples"] = written ? json(f.clipped_samples) : json(nullptr);
  e["nonfinite"] = written ? json(f.nonfinite) : json(nullptr);
  e["output_rms"] = written ? f.output_rms : std::vector<double>{};
  e["output_peak"] = written ? f.output_peak : std::vector<double>{};
  e["integrated_lufs"] = written && f.integrated_lufs ? json(*f.integrated_lufs) : json(nullptr);
  e["true_peak_dbtp"] = written && f.true_peak_dbtp ? json(*f.true_peak_dbtp) : json(nullptr);
  e["rel_l2_error"] = f.verification_ran ? json(f.rel_l2_error) : json(nullptr);
  return e;
}

// One file's row of the summary CSV.
void summary_csv_row(std::ostringstream& o, const BatchFileResult& f) {
  const bool known = f.channels > 0;
  const bool written = known && f.outputs_written;
  // One row per file: rms and peak over all channels (the JSON has them per channel).
  double energy = 0.0, peak = 0.0;
  for (double r : f.output_rms)
    energy += r * r;
  for (double p : f.output_peak)
    peak = std::max(peak, p);
  const double rms =
      f.output_rms.empty() ? 0.0 : std::sqrt(energy / static_cast<double>(f.output_rms.size()));
  std::string device;
  if (f.device >= 0)
    device = "cuda:" + std::to_string(f.device);
  else if (!f.backend.empty())
    device = f.backend;
  o << csv_field(f.item.input) << ','
    << csv_field(f.outputs_written ? f.item.output : std::string()) << ',' << to_string(f.status)
    << ',' << (known ? std::to_string(f.frames) : "") << ','
    << (known ? fmt("%.6f", f.duration_s()) : "") << ','
    << (known ? fmt("%.17g", f.sample_rate) : "") << ','
    << (known ? std::to_string(f.channels) : "") << ',' << fmt("%.6f", f.wall_s) << ','
    << (written && f.wall_s > 0 ? fmt("%.6g", static_cast<double>(f.frames) / f.wall_s) : "") << ','
    << csv_field(device) << ',' << (written ? std::to_string(f.clipped_samples) : "") << ','
    << (written && !f.output_rms.empty() ? fmt("%.9g", rms) : "") << ','
    << (written && !f.output_peak.empty() ? fmt("%.9g", peak) : "") << ','
    << (written && f.integrated_lufs ? fmt("%.4f", *f.integrated_lufs) : "") << ','
    << (written && f.true_peak_dbtp ? fmt("%.4f", *f.true_peak_dbtp) : "") << ','
    << csv_field(f.error) << '\n';
}

// body(from, to) over [0, n) in runs of `run` items, the runs spread over up
// to `threads` threads (0: every CPU; the calling one among them), or all on
// the calling thread where no other thread can be had.
void for_runs(std::size_t n, std::size_t run, int threads,
              const std::function<void(std::size_t, std::size_t)>& body) {
  const auto tasks = static_cast<std::int64_t>((n + run - 1) / run);
  const auto each = [&](std::int64_t t) {
    const std::size_t from = static_cast<std::size_t>(t) * run;
    body(from, std::min(n, from + run));
  };
  threads =
      static_cast<int>(std::min<std::int64_t>(threads > 0 ? threads : hardware_threads(), tasks));
  std::optional<ThreadPool> pool;
  if (threads > 1) {
    try {
      pool.emplace(threads - 1);
    } catch (const std::system_error&) {
      // none to spare (a process or pids limit): this thread runs them all
    }
  }
  if (!pool) {
    for (std::int64_t t = 0; t < tasks; ++t)
      each(t);
    return;
  }
  run_tasks(*pool, tasks, each);
}

// The files' entries and rows are made on every CPU thread, in runs of this
// many: one thread spent ~20 us an entry (building it, then its text), 0.3 s
// after the last file of a 16,000-file batch.
constexpr std::size_t kSummaryRun = 512;

} // namespace

json batch_summary_object(const BatchSummary& s, const std::string& fingerprint) {
  json j = summary_head(s, fingerprint);
  json& files = j["files"];
  for (const auto& f : s.files)
    files.push_back(summary_file_entry(f));
  return j;
}

// batch_summary_object(s, fingerprint).dump(2), the entries dumped apart and
// spliced into the head's empty "files".
std::string batch_summary_json(const BatchSummary& s, const std::string& fingerprint, int threads) {
  std::string text = json_text(summary_head(s, fingerprint));
  constexpr std::string_view kNoFiles = "\"files\": []\n}";
  if (!text.ends_with(kNoFiles))
    throw Error(ErrorKind::internal, "batch summary: \"files\" is not the summary's last key");
  if (s.files.empty())
    return text + "\n";
  std::vector<std::string> runs((s.files.size() + kSummaryRun - 1) / kSummaryRun);
  for_runs(s.files.size(), kSummaryRun, threads, [&](std::size_t from, std::size_t to) {
    std::string& out = runs[from / kSummaryRun];
    for (std::size_t i = from; i < to; ++i) {
      out += i == 0 ? "\n    " : ",\n    ";
      // An entry sits two levels deep: its lines 4 spaces further in (its
      // strings are escaped: a line break in the text is the dump's own).
      for (const char c : json_text(summary_file_entry(s.files[i]))) {
        out += c;
        if (c == '\n')
          out += "    ";
      }
    }
  });
  text.resize(text.size() - 3); // "]\n}"
  std::size_t size = text.size() + 9;
  for (const std::string& r : runs)
    size += r.size();
  text.reserve(size);
  for (const std::string& r : runs)
    text += r;
  text += "\n  ]\n}\n";
  return text;
}

std::string batch_summary_csv(const BatchSummary& s, int threads) {
  std::vector<std::string> runs((s.files.size() + kSummaryRun - 1) / kSummaryRun);
  for_runs(s.files.size(), kSummaryRun, threads, [&](std::size_t from, std::size_t to) {
    std::ostringstream o;
    for (std::size_t i = from; i < to; ++i)
      summary_csv_row(o, s.files[i]);
    runs[from / kSummaryRun] = o.str();
  });
  std::string text =
      "file,output,status,frames,duration_s,sample_rate,channels,wall_s,frames_per_s,device,"
      "clipped_samples,output_rms,output_peak,integrated_lufs,true_peak_dbtp,error\n";
  for (const std::string& r : runs)
    text += r;
  return text;
}

namespace {

// One batch run (DESIGN §1b: an engine as an object with small methods):
// where it runs and the devices' starts, planning (the list, what is up to
// date, the temporary files a killed run left), scheduling (the order, the
// workers), the workers with their files, and the summary.
class BatchRun {
public:
  BatchRun(const BatchRun&) = delete;
  BatchRun& operator=(const BatchRun&) = delete;
  // An exception out of run() can leave workers and the GPU starter
  // running: they stop taking files and are joined (the starter left).
  ~BatchRun() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    end_gpu_start();
    for (std::thread& t : threads_)
      if (t.joinable())
        t.join();
  }

  BatchRun(const Config& config, const BatchOptions& options)
      : config_(config), options_(options), t0_(std::chrono::steady_clock::now()),
        keep_going_(options.keep_going.value_or(config.batch.keep_going)),
        out_dir_(options.out_dir.value_or(config.batch.out_dir)) {}

  BatchSummary run() {
    trace("batch: inputs listed");
    check_execution_limits(config_.execution); // before any worker starts
    resolve_devices();
    start_contexts();
    plan();
    if (driver_after_estimate_) {
      check_resume(); // first: the GPUs are chosen for the files left to run
      use_devices_after_estimate();
    } else {
      choose_cpu_alone_or_list_devices(); // its driver's start overlaps the check
      check_resume();
    }
    trace("batch: resume checked");
    say_resume();
    sweep_temps();
    decide_cpu_beside_gpus();
    schedule();
    trace("batch: scheduled");
    display_.emplace(options_.progress && !options_.quiet, options_.log, order_.size(),
                     total_bytes_);
    make_file_log();
    const std::size_t workers = run_workers();
    trace("batch: workers joined");
    display_->finish();
    print_profile(workers);
    tally();
    write_summary();
    say_end();
    trace("batch: summary written");
    return std::move(summary_);
  }

private:
  void info(const std::string& m) const {
    if (options_.log && !options_.quiet)
      options_.log(m);
  }
  void say(const std::string& m, bool failure) {
    if (!options_.log || (options_.quiet && !failure))
      return;
    display_->say(m);
  }

  // --- where -----------------------------------------------------------------

  // Resolved once for the whole batch, before any file is touched.
  void resolve_devices() {
    kind_ = options_.backend.value_or(config_.execution.backend);
    listed_ = config_.execution.devices;
    // A stage without a CUDA step puts the batch on the CPU (as a single run).
    if (const StageSpec* s = cpu_only_stage(config_.stages)) {
      if (kind_ == BackendKind::cuda)
        throw config_error(cpu_only_message(*s));
      kind_ = BackendKind::cpu;
    }
    // Backend auto with every device, on a machine with the NVIDIA driver:
    // decide_cpu_beside_gpus chooses, once the files are known, between the
    // CPU alone and the devices listed beside the CPU workers, not before
    // the first file. Such a batch's record says "auto" whatever ran each file.
    beside_ = kind_ == BackendKind::automatic && options_.device_count_override < 0 &&
              listed_.empty() && driver_may_exist();
    if (beside_) {
      backend_ = "auto";
      return;
    }
    if (options_.device_count_override < 0 && options_.narrow_visible_devices) {
      if (kind_ != BackendKind::cpu && driver_may_exist() && !options_.shard &&
          options_.choose_gpus &&
          (listed_.empty() ? kind_ == BackendKind::cuda : listed_.size() > 1)) {
        // How many GPUs the driver should see depends on the files: asked
        // once they are listed (use_devices_after_estimate). Backend auto
        // with a list: "cpu" after all where the driver finds no device.
        backend_ = "cuda";
        driver_after_estimate_ = true;
        return;
      }
      if (const auto highest = highest_device_used(listed_, kind_, true))
        let_the_driver_see_through(*highest);
    }
    // A CPU batch never asks the driver: its start (1 s on a 4-GPU host) was
    // most of a short CPU batch's time.
    use_devices(options_.device_count_override >= 0 ? options_.device_count_override
                : kind_ == BackendKind::cpu         ? 0
                                                    : count_devices());
  }

  // Whether asking the driver can find a GPU: an injected counter (tests), or
  // a CUDA build on a machine with the NVIDIA driver.
  [[nodiscard]] bool driver_may_exist() const {
    return options_.count_devices != nullptr || (cuda_built() && fs::exists("/dev/nvidiactl"));
  }

  // The largest file's CPU seconds on one thread (file_estimate_: infinity
  // where it cannot be told) and the whole list's on every CPU thread,
  // scaled from it by bytes; the list's seconds on one GPU
  // (gpu_batch_estimate_) the same way. The list: the files left to run
  // where the resume check came first (a CUDA batch's), else every file; at
  // least one (the callers return before with none).
  double estimate_work() {
    std::vector<const BatchItem*> files_left;
    if (resume_checked_)
      for (const std::size_t i : todo_)
        files_left.push_back(&items_[i]);
    else
      for (const BatchItem& item : items_)
        files_left.push_back(&item);
    const BatchItem* largest = files_left.front();
    for (const BatchItem* item : files_left)
      if (item->bytes > largest->bytes)
        largest = item;
    // (A file that does not open fails in its worker; the GPUs run the batch.)
    const FileSeconds est = estimate_file_seconds(config_, *largest, options_);
    file_estimate_ = est.cpu;
    gpu_file_estimate_ = est.cuda;
    gpu_bound_ = gpu_bound_file(est, static_cast<double>(largest->bytes));
    estimated_ = true;
    // The whole list on every CPU thread, each file as long per byte as the
    // largest (as long as it where a size is unknown: a FIFO's).
    double files = 0.0;
    for (const BatchItem* item : files_left)
      files += item->bytes > 0 && largest->bytes > 0
                   ? static_cast<double>(item->bytes) / static_cast<double>(largest->bytes)
                   : 1.0;
    gpu_batch_estimate_ = gpu_file_estimate_ * files;
    return file_estimate_ * files / static_cast<double>(std::max(1, cpu_threads()));
  }

  // With narrow_visible_devices, the GPUs the driver sees (not for a
  // shard: shards started side by side on one host without a GPU each
  // would all land on the same ones). Light files (what the CPU would do in
  // under 0.6 s each, batch_cpu_helps on the largest file) are bound by the
  // host's reading and writing, not the GPUs: GPU 0 alone (the list's
  // lowest where one is given). Measured (4 x H100, 64 cores, 30 s stereo
  // files, 255 taps + metrics, bench/p11_visible_policy.sh): 800 files on
  // GPU 0 1.08-1.59 s, on 0,1 1.37-1.49 s, on all four 1.93-1.97 s; 2,400
  // files 2.37-2.84 / 2.52-2.55 / 3.37-3.47 s. Heavier files: as many GPUs
  // as pay for their start (gpus_that_pay on the batch's seconds on one
  // GPU), the lowest-numbered of the list, every GPU where the estimate
  // cannot be told. Not with choose_gpus off (SIGSTREAM_ALL_GPUS=1).
  void let_the_driver_see_the_gpus_that_pay() {
    if (options_.shard || !options_.choose_gpus)
      return;
    const bool light = batch_cpu_helps(file_estimate_);
    if (listed_.empty()) {
      if (light || std::isfinite(gpu_batch_estimate_))
        let_the_driver_see_through(
            light ? 0 : gpus_that_pay(gpu_batch_estimate_, kMostDevicesNarrowed) - 1);
      return;
    }
    std::vector<int> lowest = listed_;
    std::sort(lowest.begin(), lowest.end());
    lowest.erase(std::unique(lowest.begin(), lowest.end()), lowest.end());
    const int most = static_cast<int>(lowest.size());
    // A negative entry is left to resolve_batch_devices' message.
    const int k = light || lowest.front() < 0 ? 1 : gpus_that_pay(gpu_batch_estimate_, lowest);
    if (k < most && lowest.front() >= 0) {
      const int last = lowest[static_cast<std::size_t>(k - 1)];
      std::vector<int> kept;
      for (const int d : listed_)
        if (d <= last && std::find(kept.begin(), kept.end(), d) == kept.end())
          kept.push_back(d);
      std::string named;
      for (const int d : kept)
        named += (named.empty() ? "" : ",") + std::to_string(d);
      // Said once the driver has found them (use_devices_after_estimate).
      cut_note_ =
          std::string("batch: GPU") + (kept.size() > 1 ? "s " : " ") + named + " of the " +
          std::to_string(most) + " listed: " +
          (light ? "light files (up to ~" + fmt("%.2g", file_estimate_) +
                       " s each on one CPU thread): the host's reading and writing bound this "
                       "batch, not the GPUs"
                 : "~" + fmt("%.2g", gpu_batch_estimate_) +
                       " s of GPU work, which a further GPU's start would not pay for "
                       "(SIGSTREAM_ALL_GPUS=1 uses them all)");
      listed_ = std::move(kept);
    }
    if (const auto highest = highest_device_used(listed_, kind_, true))
      let_the_driver_see_through(*highest);
  }

  // CUDA (or auto with a list of GPUs) and narrow_visible_devices: the
  // driver starts once the files are listed and the largest is estimated.
  // Every file up to date: the driver is not asked at all (on 4 x H100 a
  // re-run of 200 up-to-date files went from 1.35-1.52 to 1.25-1.33 s; the
  // rest was the resume checks, check_files_in_parallel).
  void use_devices_after_estimate() {
    if (todo_.empty())
      return;
    static_cast<void>(estimate_work());
    let_the_driver_see_the_gpus_that_pay();
    use_devices(count_devices());
    if (use_cuda_ && !cut_note_.empty())
      info(cut_note_);
    if (!use_cuda_) {
      // Auto, and the driver found no device: the files are checked again
      // against the CPU's fingerprint (a file made on the GPUs is redone,
      // as auto on a host without one does).
      backend_ = "cpu";
      record_backend();
      check_resume();
    }
    start_contexts();
  }

  // The driver's start (0.1 s to 1 s) begins now, on a thread of its own
  // that touches nothing but its result: the batch may end, and the process
  // leave, before it does. False: no thread to spare.
  bool list_devices_early() {
    std::function<int()> count = device_counter();
    auto result = std::make_shared<std::promise<int>>();
    device_count_ = result->get_future().share();
    listing_t0_ = std::chrono::steady_clock::now();
    try {
      std::thread([result, count = std::move(count)] {
        int n = 0;
        try {
          n = count();
        } catch (...) {
          n = 0; // as no device: the CPU takes every file
        }
        result->set_value(n);
      }).detach();
    } catch (const std::system_error&) {
      return false;
    }
    return true;
  }

  // How the devices are counted: the injected counter (tests) or the driver's list.
  [[nodiscard]] std::function<int()> device_counter() const {
    if (options_.count_devices)
      return options_.count_devices;
    return [] { return static_cast<int>(list_devices().size()); };
  }
  [[nodiscard]] int count_devices() const { return device_counter()(); }
  // The CPU threads the batch may use (execution.threads, 0 = every one).
  [[nodiscard]] int cpu_threads() const {
    return config_.execution.threads > 0 ? config_.execution.threads : hardware_threads();
  }

  void use_devices(int device_count) {
    if (kind_ == BackendKind::cuda && device_count == 0)
      throw Error(ErrorKind::cuda,
                  cuda_built() ? "backend 'cuda': no CUDA device found (use --backend cpu or auto)"
                               : "backend 'cuda': this sigstream was built without CUDA "
                                 "(no nvcc at build time); use --backend cpu");
    if (kind_ != BackendKind::cpu && device_count > 0)
      devices_ = resolve_batch_devices(listed_, device_count);
    use_cuda_ = !devices_.empty();
    if (backend_.empty())
      backend_ = use_cuda_ ? "cuda" : "cpu";
  }

  // Backend auto, once the files are listed (before their resume check, so
  // that a driver's start, where one is needed, overlaps it): the CPU alone
  // where it should end the batch before a GPU's start pays
  // (batch_cpu_alone_finishes: the driver is never asked; asking it beside
  // the CPU workers cost them 0.1-0.2 s of a 0.5 s batch on a 4-GPU host).
  // Else the devices are listed, on a thread of their own.
  void choose_cpu_alone_or_list_devices() {
    if (!beside_ || items_.empty())
      return;
    const double batch_estimate = estimate_work();
    if (trace_on())
      trace(("batch: the largest file should take the CPU ~" + fmt("%.3f", file_estimate_) +
             " s on one thread, the batch ~" + fmt("%.3f", batch_estimate) + " s on " +
             std::to_string(cpu_threads()) + " threads")
                .c_str());
    if (batch_cpu_alone_finishes(batch_estimate)) {
      beside_ = false; // every core, no driver
      cpu_alone_ = true;
      use_devices(0);
      return;
    }
    if (options_.narrow_visible_devices)
      let_the_driver_see_the_gpus_that_pay(); // before the driver's thread starts
    if (!list_devices_early()) {              // no thread to spare: list them here
      beside_ = false;
      use_devices(count_devices());
      start_contexts();
    }
  }

  // Backend auto, the devices being listed: CPU workers take files while the
  // GPUs start where a file is short for the CPU (batch_cpu_helps, on the
  // largest file's plan); else the batch waits for the list and runs on the
  // devices as under CUDA.
  void decide_cpu_beside_gpus() {
    if (!beside_ || todo_.empty() || batch_cpu_helps(file_estimate_))
      return;
    beside_ = false;
    use_devices(device_count_.get());
    start_contexts();
  }

  // The devices' contexts are made while the inputs are listed and checked
  // (under auto: once decide_cpu_beside_gpus has chosen the GPUs), one
  // device at a time: the driver makes contexts one after another anyway
  // (four at once took as long as four in a row on a 4-GPU host), and a
  // context in the making holds back the other devices' allocations. Device
  // k+1 is started once a worker of device k holds its lanes (its first
  // file's backend is ready), and only while files remain: a batch that one
  // GPU finishes does not pay for the others' contexts. A device's workers
  // start as soon as its own context is up. (Waiting for every worker of
  // device k instead left two of four GPUs idle in a GPU-bound batch: the
  // workers' set-ups take ~15 ms each, one after another.)
  void start_contexts() {
    if (!use_cuda_ || options_.runner)
      return;
    std::vector<std::shared_ptr<std::promise<void>>> up;
    for (const int d : devices_) {
      up.push_back(std::make_shared<std::promise<void>>());
      device_up_[d] = up.back()->get_future().share();
    }
    try {
      starting_ = std::jthread([this, devices = devices_, up](std::stop_token stop) {
        for (std::size_t k = 0; k < devices.size(); ++k) {
          if (k == 0 || starts_.wait_to_start(devices[k - 1], devices[k], stop)) {
            starts_.starting(devices[k]);
            sigstream::start_devices({devices[k]});
          }
          up[k]->set_value(); // ready, or declined: then its workers take no file
        }
      });
    } catch (const std::system_error&) {
      device_up_.clear(); // no thread to spare: a worker's first file makes its context
    }
  }

  // --- planning --------------------------------------------------------------

  // Each file's resume check (up_to_date_or_completed) reads its statistics
  // back: a JSON of 0.15-1 MB (the filter's response, the excerpt, spectra),
  // 2-6 ms to parse, so a re-run of 200 files spent 1.2 s in them on one
  // thread of a 4 x H100 host. They are independent: on every CPU thread, a
  // run of files each.
  static constexpr std::size_t kFilesAResumeTask = 8;
  void check_files_in_parallel(std::vector<ResumeCheck>& checks, std::vector<char>& adopted) {
    for_runs(items_.size(), kFilesAResumeTask, cpu_threads(),
             [&](std::size_t from, std::size_t to) {
               for (std::size_t i = from; i < to; ++i) {
                 bool a = false;
                 checks[i] =
                     up_to_date_or_completed(items_[i], deps_, options_.verify, fingerprint_, &a);
                 adopted[i] = a ? 1 : 0;
               }
             });
  }

  // The list (expanded, or options.items), this shard's part of it; the
  // fingerprint and the files whose changes make outputs out of date.
  void plan() {
    BatchPlan plan = plan_batch(config_, options_, out_dir_, backend_,
                                [this](const std::string& m) { info(m); });
    items_ = std::move(plan.items);
    summary_.out_dir = out_dir_;
    summary_.shard = std::move(plan.shard);
    if (options_.write_summary) {
      summary_.summary_json =
          options_.summary_json.empty() ? plan.summary_json : options_.summary_json;
      summary_.summary_csv = summary_csv_path(summary_.summary_json);
    }
    record_backend();
    if (!options_.config_path.empty())
      deps_.push_back(options_.config_path);
    for (const StageSpec& s : config_.stages)
      if (const auto files = stage_kind(s.type).files)
        for (std::string& f : files(s))
          deps_.push_back(std::move(f));
  }

  // The backend the summary and each file's resume record name.
  void record_backend() {
    summary_.backend = backend_;
    fingerprint_ = batch_config_fingerprint(config_, backend_);
  }

  // What is up to date (skipped), and what a killed run committed the audio of.
  // From the start each time (auto's fallback to the CPU checks again).
  void check_resume() {
    resume_checked_ = true;
    summary_.files.assign(items_.size(), BatchFileResult{});
    summary_.skipped = 0;
    todo_.clear();
    // Before the sweep below, which would remove a dead worker's pending record.
    std::vector<ResumeCheck> checks(items_.size());
    std::vector<char> adopted(items_.size(), 0);
    if (!options_.force)
      check_files_in_parallel(checks, adopted);
    other_config_ = 0; // this pass's; completions add up over passes
    for (std::size_t i = 0; i < items_.size(); ++i) {
      BatchFileResult& r = summary_.files[i];
      r.item = items_[i];
      if (!options_.force) {
        ResumeCheck& check = checks[i];
        completed_ += adopted[i] != 0 ? 1 : 0;
        if (check.stats) {
          r.status = BatchStatus::skipped;
          r.outputs_written = true;
          fill_from_stats(r, *check.stats);
          ++summary_.skipped;
          continue;
        }
        if (check.other_config)
          ++other_config_;
      }
      todo_.push_back(i);
    }
  }
  // What check_resume found, said once the backend (and so the fingerprint)
  // is settled: auto with a list of GPUs where the driver finds none checks
  // the files again under the CPU's.
  void say_resume() {
    if (completed_ > 0)
      info("batch: completed the commits of " + std::to_string(completed_) +
           " file(s) a killed run had committed the audio of (skipped, not redone)");
    if (other_config_ > 0)
      info("batch: " + std::to_string(other_config_) + " complete file(s) in '" + out_dir_ +
           "' were made by another config (stages, sink or backend): redoing them");
  }

  // Every file's targets, skipped ones included: a killed run with another
  // config may have been rewriting a file that this config finds up to date.
  void sweep_temps() {
    std::vector<std::string> targets = {summary_.summary_json, summary_.summary_csv};
    for (const BatchItem& it : items_)
      for (const std::string* p : {&it.output, &it.stats_json, &it.stats_csv})
        targets.push_back(*p);
    // The files' own writers need not list their folders again (where the
    // caller sweeps, neither does the batch).
    swept_.emplace(std::move(targets));
    if (!options_.sweep_temps)
      return;
    const TempSweep sweep = remove_stale_temps(swept_->targets());
    if (sweep.removed > 0)
      info("batch: removed " + std::to_string(sweep.removed) +
           " temporary file(s) left by a killed run");
    if (sweep.other_hosts > 0)
      info("batch: " + std::to_string(sweep.other_hosts) +
           " temporary file(s) of other hosts left alone (only this host can tell whether their "
           "writers still run)");
    if (sweep.live > 0)
      info("batch: " + std::to_string(sweep.live) +
           " temporary file(s) of writers that may still run left alone (another process "
           "writing these outputs now?)");
  }

  // --- scheduling ------------------------------------------------------------

  // Files in flight per GPU on `devices` GPUs: the user's
  // --files-per-device, else auto_files_per_device over `cpu_threads`, fewer
  // for files the GPU bounds (the largest file's estimate, estimate_work;
  // where it has not run, schedule() runs it when it can change the count).
  [[nodiscard]] int files_per_device(int cpu_threads, std::size_t devices) const {
    if (options_.files_per_device > 0 || devices == 0)
      return options_.files_per_device;
    return auto_files_per_device(cpu_threads, static_cast<int>(devices), gpu_bound_);
  }

  // The order (largest first), the workers, and the line that says where.
  void schedule() {
    std::vector<std::uintmax_t> todo_bytes;
    for (std::size_t i : todo_) {
      todo_bytes.push_back(items_[i].bytes);
      total_bytes_ += items_[i].bytes;
    }
    for (std::size_t k : batch_dispatch_order(todo_bytes))
      order_.push_back(todo_[k]);
    const int cpu_budget = cpu_threads();
    cpu_budget_ = cpu_budget;
    const int cpu_workers = beside_ ? std::min(cpu_budget, kCpuWorkersBesideGpus) : cpu_budget;
    // (Python's in-process batch, a shard: no step before needed the
    // estimate. Only where it can change the workers: more than the GPU-bound
    // count a GPU by the CPU threads' rule, and files for them.)
    const int by_threads = auto_files_per_device(cpu_workers, static_cast<int>(devices_.size()));
    if (use_cuda_ && !devices_.empty() && !estimated_ && options_.files_per_device <= 0 &&
        by_threads > kGpuBoundFilesPerDevice &&
        todo_.size() > static_cast<std::size_t>(kGpuBoundFilesPerDevice) * devices_.size())
      static_cast<void>(estimate_work());
    if (!todo_.empty())
      summary_.workers = plan_batch_workers(
          devices_, files_per_device(cpu_workers, devices_.size()), cpu_workers, todo_.size());
    if (use_cuda_) {
      for (int d : devices_) {
        BatchDeviceCount c;
        c.device = d;
        for (const auto& w : summary_.workers)
          c.workers += w.device == d ? 1 : 0;
        summary_.devices.push_back(c);
      }
    } else if (backend_ != "cuda") { // (cuda without devices: nothing to run, none asked)
      summary_.devices.push_back({-1, static_cast<int>(summary_.workers.size()), 0, 0, 0, 0.0});
    }
    std::string where;
    if (use_cuda_) {
      where = "cuda device";
      where += devices_.size() > 1 ? "s " : " ";
      for (std::size_t i = 0; i < devices_.size(); ++i)
        where += (i ? "," : "") + std::to_string(devices_[i]);
      where += " (" + std::to_string(summary_.workers.size()) + " file(s) in flight)";
    } else {
      if (cpu_alone_)
        info("batch: the CPU should end these files before a GPU's start pays: using the CPU "
             "backend");
      else if (kind_ == BackendKind::automatic && !beside_ && !todo_.empty())
        info(cuda_built() ? "batch: no CUDA device found, using the CPU backend"
                          : "batch: built without CUDA, using the CPU backend");
      const int per = summary_.workers.empty() ? 0 : summary_.workers.front().threads;
      where = "cpu (" + std::to_string(summary_.workers.size()) + " file(s) in flight, " +
              std::to_string(per) + " thread" + (per == 1 ? "" : "s") + " each)";
      if (beside_)
        where += " until a GPU is up";
    }
    std::string m =
        "batch: " + std::to_string(items_.size()) + " file" + (items_.size() == 1 ? "" : "s");
    if (summary_.skipped > 0)
      m += ", " + std::to_string(summary_.skipped) + " up to date (skipped; --force redoes them)";
    if (todo_.empty())
      m += ", nothing to run -> " + out_dir_;
    else
      m += ", " + std::to_string(todo_.size()) + " to run on " + where + " -> " + out_dir_;
    info(m);
  }

  // --- the workers -----------------------------------------------------------

  // Messages from the file pipelines: each distinct one once (they repeat per file).
  void make_file_log() {
    if (options_.log && !options_.quiet)
      file_log_ = [this](const std::string& m) {
        {
          std::lock_guard lock(log_mutex_);
          if (!seen_messages_.insert(m).second)
            return;
        }
        display_->say(m);
      };
    runner_ = options_.runner
                  ? options_.runner
                  : std::function<RunReport(const Config&, const RunOptions&)>(run_pipeline);
  }

  // The files in flight on a device (counted once, in summary.devices; the
  // GPUs of a batch that began on the CPU join it later).
  [[nodiscard]] int workers_on_device(int device) {
    std::lock_guard lock(mutex_);
    for (const BatchDeviceCount& d : summary_.devices)
      if (d.device == device)
        return d.workers;
    return 0;
  }

  // One file's config: its input and outputs, the worker's device or threads.
  [[nodiscard]] Config file_config(const BatchFileResult& r, const BatchWorker& w) {
    Config c = config_;
    c.source.file = r.item.input;
    c.source.synth.reset();
    c.sink.file = r.item.output.empty() ? std::nullopt : std::optional<std::string>(r.item.output);
    // The statistics JSON is written by run_one rather than by the pipeline:
    // it must carry the fingerprint the resume check compares, and appear
    // only with it.
    c.stats.json.reset();
    c.stats.csv =
        r.item.stats_csv.empty() ? std::nullopt : std::optional<std::string>(r.item.stats_csv);
    c.execution.backend = w.device >= 0 ? BackendKind::cuda : BackendKind::cpu;
    c.execution.devices = w.device >= 0 ? std::vector<int>{w.device} : std::vector<int>{};
    // Several files in flight on a GPU overlap each other's transfers and
    // kernels: two lanes a file keep its own reading and computing apart;
    // more would only pin more host memory (a lane holds a chunk's blocks).
    if (w.device >= 0 && workers_on_device(w.device) > 2)
      c.execution.streams = std::min(c.execution.streams, 2);
    if (w.device < 0)
      c.execution.threads = w.threads;
    return c;
  }

  void run_one(std::size_t idx, const BatchWorker& w, std::unique_ptr<Backend>& kept,
               RunThreads& threads, std::function<void()> backend_ready) {
    BatchFileResult& r = summary_.files[idx];
    if (!options_.force && committed_meanwhile(r, deps_, options_.verify, fingerprint_)) {
      say("batch: " + r.item.input +
              ": up to date now (another process committed it since this batch started): skipped",
          false);
      return;
    }
    const Config c = file_config(r, w);
    RunOptions ro;
    ro.verify = options_.verify;
    ro.tolerance = options_.tolerance;
    ro.progress = false;
    ro.exiting = false;
    ro.log = file_log_;
    // The worker's backend goes from file to file (its lanes, steps and
    // buffers made once), as long as the files' plans fit it.
    ro.kept_backend = &kept;
    ro.threads = &threads;
    ro.backend_ready = std::move(backend_ready);
    r.device = w.device;
    const auto f0 = std::chrono::steady_clock::now();
    try {
      // Made before the work, like the pipeline's own outputs, so that an
      // unwritable path fails first; deleted if anything below throws.
      AtomicFile stats(r.item.stats_json);
      // The old record goes first and the new one comes last: in between (a
      // kill after the pipeline replaced the audio of a run made with another
      // config) the file is incomplete, never up to date with that record.
      // (Looked for first: an unlink locks the folder even for a name that
      // is not there, and a fresh batch's files have none. A look that
      // fails otherwise leaves the remove to say why.)
      std::error_code ec, look;
      const fs::file_status old = fs::symlink_status(r.item.stats_json, look);
      if (fs::exists(old) || (look && look != std::errc::no_such_file_or_directory))
        fs::remove(r.item.stats_json, ec);
      if (ec)
        throw Error(ErrorKind::io,
                    r.item.stats_json + ": cannot remove the previous statistics: " + ec.message());
      // The statistics are written before the pipeline commits the audio and
      // CSV, with their identities, and then, like the CSV, given a hidden
      // name: a worker killed between the commits leaves this record pending
      // (until then a kill leaves nothing), and a retry completes the commits
      // instead of committing the audio again (pipeline/batch_commit.hpp).
      bool recorded = false;
      ro.name_csv_before_commit = true;
      ro.before_commit = [&](const RunReport& done, const CommitFiles& files) {
        write_all(stats, batch_stats_json(done, fingerprint_, files));
        stats.name_temporary();
        recorded = true;
      };
      const auto p0 = std::chrono::steady_clock::now();
      const RunReport rep = runner_(c, ro);
      const auto p1 = std::chrono::steady_clock::now();
      fill_from_report(r, rep);
      if (!recorded)
        write_all(stats,
                  batch_stats_json(rep, fingerprint_, std::nullopt)); // a runner without the hook
      stats.commit();
      if (trace_on())
        add_to_profile(
            rep, std::chrono::duration<double>(p1 - p0).count(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - p1).count());
      r.outputs_written = true;
      r.status = BatchStatus::ok;
      if (rep.verification.ran && !rep.verification.passed) {
        r.status = BatchStatus::failed;
        r.error = r.item.input + ": verification failed: rel L2 error " +
                  fmt("%.3g", rep.verification.rel_l2_error) + " > tolerance " +
                  fmt("%.0e", rep.verification.tolerance) +
                  " (outputs kept; a re-run redoes this file)";
      }
    } catch (const Error& e) {
      r.status = e.kind() == ErrorKind::interrupted || interrupted() ? BatchStatus::interrupted
                                                                     : BatchStatus::failed;
      r.error = e.what();
    } catch (const std::exception& e) {
      r.status = interrupted() ? BatchStatus::interrupted : BatchStatus::failed;
      r.error = std::string("internal error: ") + e.what();
    } catch (...) {
      r.status = interrupted() ? BatchStatus::interrupted : BatchStatus::failed;
      r.error = "internal error: unknown exception";
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    if (r.status == BatchStatus::failed && r.channels == 0)
      fill_from_header(r);
    if (r.status == BatchStatus::interrupted && r.error.empty())
      r.error = "interrupted";
  }

  // Where the workers' time goes (printed with SIGSTREAM_TRACE=1): per phase,
  // summed over files.
  void add_to_profile(const RunReport& rep, double call_s, double stats_s) {
    std::lock_guard lock(mutex_);
    profile_.setup += rep.setup_s;
    profile_.read += rep.read_s;
    profile_.write += rep.write_s;
    profile_.run += rep.wall_s - rep.setup_s;
    profile_.commit += rep.commit_s;
    profile_.release += std::max(0.0, call_s - rep.wall_s - rep.commit_s);
    profile_.stats += stats_s;
    profile_.files += 1;
  }

  // A distributed batch's driver asked this one to stop (under mutex_, with
  // files left to hand out).
  bool asked_to_stop() {
    if (asked_stop_ || !options_.stop_requested)
      return asked_stop_;
    try {
      asked_stop_ = options_.stop_requested();
    } catch (...) {
      asked_stop_ = true;
    }
    return asked_stop_;
  }

  // Whether a worker of this device has anything to do once its context is
  // up: false when the other devices took every file meanwhile.
  bool device_ready(int device) {
    const auto up = device_up_.find(device);
    if (up == device_up_.end())
      return true;
    const std::shared_future<void> ready = up->second; // this thread's own copy
    while (ready.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
      std::lock_guard lock(mutex_);
      if (stop_ || interrupted() || next_ >= order_.size() || asked_to_stop())
        return false;
    }
    // A device not worth its start keeps its workers out: a context made by
    // a file's backend would cost what the rule saved.
    return !starts_.declined(device);
  }

  // After a file: the counts, a stop at a failure without keep_going or at
  // an interruption, and its line.
  void file_done(const BatchFileResult& r) {
    std::size_t n = 0;
    {
      std::lock_guard lock(mutex_);
      --running_;
      n = ++done_;
      bytes_done_ += r.item.bytes;
      if (r.status == BatchStatus::failed) {
        ++failures_;
        if (!keep_going_)
          stop_ = true;
      }
      if (r.status == BatchStatus::interrupted) {
        file_interrupted_ = true;
        stop_ = true;
      }
    }
    cv_.notify_all();
    const std::string count = "[" + std::to_string(n) + "/" + std::to_string(order_.size()) + "] ";
    if (r.status == BatchStatus::failed) {
      const bool named = r.error.find(r.item.input) != std::string::npos;
      say(count + "failed " + (named ? r.error : r.item.input + ": " + r.error), true);
    } else if (r.status == BatchStatus::ok && !display_->drawing()) {
      const double x = r.wall_s > 0 ? r.duration_s() / r.wall_s : 0.0;
      say(count + "ok " + r.item.input + " -> " +
              (r.item.output.empty() ? r.item.stats_json : r.item.output) + " (" +
              fmt("%.2f", r.wall_s) + " s, " + fmt("%.0f", x) + "x real time)",
          false);
    }
  }

  void worker_loop(const BatchWorker& w) {
    if (beside_ && w.device < 0)
      lower_priority();
    // (A CPU worker has no device to wait for; the map is the GPU starter's to fill.)
    const bool ready = w.device < 0 || device_ready(w.device);
    // A backend an earlier batch of this process left on this device (a Dask
    // or Python worker runs a batch call per file), else made by the first file.
    std::unique_ptr<Backend> kept =
        ready && w.device >= 0 ? idle_backends().take(w.device) : nullptr;
    // Its files' readers and writers, on threads made once (by this thread:
    // they run at its priority).
    RunThreads threads;
    bool first = true, said_ready = false, gpu_took_over = false;
    while (ready) {
      std::size_t idx = 0;
      {
        std::lock_guard lock(mutex_);
        if (stop_ || interrupted() || next_ >= order_.size() || asked_to_stop())
          break;
        // A CPU worker beside the GPUs leaves the files to them once they start.
        if (w.device < 0 && cpu_yields_) {
          gpu_took_over = true;
          break;
        }
        idx = order_[next_++];
        ++running_;
      }
      // The first file's backend holds this worker's lanes once it is ready
      // (said after the file too, in case it failed before its backend).
      std::function<void()> ready_once;
      if (std::exchange(first, false) && !(beside_ && w.device < 0))
        ready_once = [this, &said_ready, d = w.device] {
          if (std::exchange(said_ready, true))
            return;
          starts_.lanes_ready(d);
          if (d >= 0 && beside_ && trace_on())
            trace(("batch: a worker of device " + std::to_string(d) + " holds its lanes").c_str());
        };
      run_one(idx, w, kept, threads, ready_once);
      if (ready_once)
        ready_once();
      if (!(beside_ && w.device < 0)) // the GPUs' rate is their own
        starts_.file_done(summary_.files[idx].item.bytes);
      file_done(summary_.files[idx]);
    }
    if (!gpu_took_over)
      starts_.all_taken(); // this worker found no file left (or the batch stops)
    if (w.device >= 0)
      idle_backends().give(w.device, std::move(kept));
    {
      std::lock_guard lock(mutex_);
      ++finished_workers_;
    }
    cv_.notify_all();
  }

  // Every worker on a thread of its own, the progress drawn meanwhile;
  // returns how many ran.
  std::size_t run_workers() {
    if (order_.empty())
      starts_.planned({}, 0); // nothing to run: no device is worth starting
    if (!order_.empty()) {
      workers_t0_ = std::chrono::steady_clock::now();
      std::vector<BatchWorker> running_workers;
      for (const BatchWorker& w : summary_.workers) {
        std::lock_guard lock(mutex_);
        try {
          threads_.emplace_back([this, w] { worker_loop(w); });
          running_workers.push_back(w);
        } catch (const std::system_error&) {
          if (threads_.empty()) {
            starts_.planned({}, 0); // nothing runs: no device is worth starting
            throw;
          }
          break; // fewer workers than planned: those running take every file
        }
      }
      // The next devices' starts wait for workers that run, not for planned
      // ones (beside the CPU: for the GPUs' workers, planned when they start).
      std::uintmax_t total_bytes = 0;
      for (const std::size_t i : order_)
        total_bytes += summary_.files[i].item.bytes;
      if (beside_)
        start_gpus_beside_cpu();
      else
        starts_.planned(running_workers, total_bytes);
      std::unique_lock lock(mutex_);
      while (finished_workers_ < static_cast<int>(threads_.size())) {
        cv_.wait_for(lock, std::chrono::milliseconds(200));
        const std::size_t d = done_;
        const std::uintmax_t b = bytes_done_;
        const int f = failures_, run = running_;
        lock.unlock();
        display_->update(d, b, f, run);
        lock.lock();
      }
    }
    end_gpu_start();
    for (auto& t : threads_) // none is added now
      t.join();
    return threads_.size();
  }

  // --- the GPUs beside the CPU (backend auto) ---------------------------------

  // A CPU worker beside the GPUs runs at a lower priority (nice + 10, its
  // pipeline's threads too: Linux threads inherit it), so that the driver's
  // start gets a core when it wants one.
  static void lower_priority() {
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    if (errno == 0)
      static_cast<void>(setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), now + kCpuNice));
  }
  static constexpr int kCpuNice = 10;
  // At most this many CPU workers beside the GPUs. Files in one process
  // contend (page faults, the kernel's memory map: the CPU backend's batch
  // ends ~250 files/s on 16 cores and on 64 alike), and the files in flight
  // when the GPUs start hold up their contexts. Measured (4 x H100, 64
  // cores, 30 s stereo files, 255 taps, best of 2): 200 files in 0.82 s
  // with 16 CPU workers, 0.87 s with 32, 1.38 s with 64 (CUDA alone 1.97 s);
  // 800 files in 2.24 / 2.43 / 2.58 s (CUDA alone 2.44 s).
  static constexpr int kCpuWorkersBesideGpus = 16;

  // What the batch and the thread that starts its GPUs share. That thread
  // spends most of its time in the driver (listing the devices, making a
  // context) and may outlive the batch (BatchOptions::detach_device_start):
  // it touches the batch only between enter() and leave(), and never once
  // the batch is over.
  struct GpuStart {
    std::stop_source stop;
    std::mutex mutex;
    std::condition_variable cv;
    bool over = false;
    int inside = 0;
    bool enter() {
      std::lock_guard lock(mutex);
      if (over)
        return false;
      ++inside;
      return true;
    }
    void leave() {
      {
        std::lock_guard lock(mutex);
        --inside;
      }
      cv.notify_all();
    }
  };

  void start_gpus_beside_cpu() {
    gpu_start_ = std::make_shared<GpuStart>();
    std::function<void(int)> start = options_.start_device;
    if (!start)
      start = [](int d) { start_devices({d}); };
    try {
      gpu_starter_ = std::thread([this, st = gpu_start_, count = device_count_, t0 = listing_t0_,
                                  start = std::move(start)] {
        // Runs `f` on the batch's state unless the batch is over; false when
        // it is, or when `f` throws (the thread then stops: nothing escapes).
        const auto inside = [&](auto&& f) {
          if (!st->enter())
            return false;
          bool ok = true;
          try {
            f();
          } catch (...) {
            ok = false;
          }
          st->leave();
          return ok;
        };
        const int n = count.get();
        const double listed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<DeviceUp> devices;
        if (n <= 0 || !inside([&] { devices = plan_gpus_beside_cpu(n, listed_s); }))
          return;
        // Every device's workers wait for its signal: given once it is up or
        // declined, and on every way out of this thread.
        std::size_t k = 0;
        struct SignalRest {
          std::vector<DeviceUp>& devices;
          std::size_t& k;
          ~SignalRest() {
            for (; k < devices.size(); ++k)
              devices[k].up->set_value();
          }
        } const signal_rest{devices, k};
        for (; k < devices.size(); ++k) {
          const int d = devices[k].device;
          bool go = true;
          // A declined device declines the ones after it (wait_to_start
          // returns at once for them); their workers take no file.
          if (k > 0 && !inside([&] {
                go = starts_.wait_to_start(devices[k - 1].device, d, st->stop.get_token());
              }))
            return;
          if (!go) {
            devices[k].up->set_value();
            continue;
          }
          if (!inside([&] { starts_.starting(d); }))
            return;
          try {
            start(d);
          } catch (...) {
            // its workers make the context with their first file's backend
          }
          devices[k].up->set_value();
        }
      });
    } catch (const std::system_error&) {
      gpu_start_.reset(); // no thread to spare: the CPU workers take every file
    }
  }

  struct DeviceUp {
    int device = 0;
    std::shared_ptr<std::promise<void>> up;
  };

  // Once `n` devices are listed (`listed_s` after the batch began): if
  // device 0 still pays for its context by the CPU workers' rate
  // (first_device_pays), every
  // device's entry in the summary and its workers, which wait for their
  // device's signal (device_ready); the CPU workers take no new file from
  // then on. Returns the devices to start, in order, with their signals.
  // Why the CPU stops as soon as the GPUs start: a context made beside busy
  // CPU workers of the same process came late (H100 host, 16 cores, 200 and
  // 800 files x 30 s, 255 taps: the context 0.2-0.25 s after the driver was
  // up instead of 0.12 s, the first lanes 0.35-0.4 s after, even with the
  // workers at nice + 10 or glibc's malloc keeping freed memory), and the
  // GPU's files cost the cores a quarter of what the CPU's do (~1100 files/s
  // against ~260): the batch took 0.84 / 1.21 s against CUDA alone's 0.68 /
  // 1.00 s. The CPU's gain is the files it ends while the driver starts
  // (0.1-0.2 s on that host, 0.7-1 s on a 4-GPU one).
  std::vector<DeviceUp> plan_gpus_beside_cpu(int n, double listed_s) {
    std::vector<DeviceUp> out;
    std::lock_guard lock(mutex_);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - workers_t0_).count();
    std::uintmax_t total = 0;
    for (const std::size_t i : order_)
      total += summary_.files[i].item.bytes;
    const bool pays =
        first_device_pays(elapsed, static_cast<double>(bytes_done_), static_cast<double>(total));
    if (trace_on())
      trace(("batch: " + std::to_string(n) + " CUDA device(s) listed after " +
             fmt("%.3f", listed_s) + " s; " + std::to_string(done_) + " of " +
             std::to_string(order_.size()) + " files done on the CPU: the GPUs " +
             (pays ? "start" : "stay idle"))
                .c_str());
    if (!pays || stop_ || interrupted() || next_ >= order_.size() || asked_to_stop())
      return {};
    const std::vector<int> devices = resolve_batch_devices({}, n);
    for (const int d : devices) {
      out.push_back({d, std::make_shared<std::promise<void>>()});
      device_up_[d] = out.back().up->get_future().share();
    }
    // The workers wait for their device's signal (device_ready); those that
    // start are the GPUs' share.
    std::vector<BatchWorker> started;
    for (const BatchWorker& w :
         plan_batch_workers(devices, files_per_device(cpu_budget_, devices.size()), cpu_budget_,
                            order_.size() - next_)) {
      try {
        threads_.emplace_back([this, w] { worker_loop(w); });
        started.push_back(w);
      } catch (const std::system_error&) {
        break; // those running take the files
      }
    }
    if (started.empty()) {
      for (DeviceUp& d : out)
        d.up->set_value();
      return {}; // no thread to spare: the CPU workers go on
    }
    for (const DeviceUp& d : out) {
      BatchDeviceCount c;
      c.device = d.device;
      for (const BatchWorker& w : started)
        c.workers += w.device == d.device ? 1 : 0;
      summary_.devices.push_back(c);
    }
    summary_.workers.insert(summary_.workers.end(), started.begin(), started.end());
    // The GPUs' next starts are judged by the GPUs' own progress over the
    // files not yet taken (the CPU workers report none of theirs).
    std::uintmax_t left = 0;
    for (std::size_t j = next_; j < order_.size(); ++j)
      left += summary_.files[order_[j]].item.bytes;
    starts_.planned(started, left);
    cpu_yields_ = true;
    return out;
  }

  // The batch is over for the GPU starter: it is left in the driver, or joined.
  void end_gpu_start() {
    // Elsewhere than the CLI nothing is left in the driver: the listing is waited for.
    if (device_count_.valid() && !options_.detach_device_start)
      device_count_.wait();
    if (!gpu_start_)
      return;
    gpu_start_->stop.request_stop(); // a next device's wait ends
    {
      std::unique_lock lock(gpu_start_->mutex);
      gpu_start_->over = true;
      gpu_start_->cv.wait(lock, [&] { return gpu_start_->inside == 0; });
    }
    if (gpu_starter_.joinable()) {
      if (options_.detach_device_start)
        gpu_starter_.detach();
      else
        gpu_starter_.join();
    }
  }

  // --- the summary -----------------------------------------------------------

  void print_profile(std::size_t workers) const {
    if (!trace_on() || profile_.files <= 0)
      return;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const double budget = wall * static_cast<double>(workers);
    auto pct = [&](double v) {
      return fmt("%.1f", v) + " s (" + fmt("%.0f", 100.0 * v / budget) + "%)";
    };
    std::fprintf(
        stderr,
        "sigstream: batch profile: %zu worker(s) x %.3f s wall, %.0f files; worker time: setup %s, "
        "processing %s (reader %s, writer %s), commit %s, backend release %s, statistics %s\n",
        workers, wall, profile_.files, pct(profile_.setup).c_str(), pct(profile_.run).c_str(),
        pct(profile_.read).c_str(), pct(profile_.write).c_str(), pct(profile_.commit).c_str(),
        pct(profile_.release).c_str(), pct(profile_.stats).c_str());
  }

  // The counts by status and by device.
  void tally() {
    BatchSummary& summary = summary_;
    summary.interrupted = interrupted() || file_interrupted_ || asked_stop_;
    summary.skipped = 0; // counted again: a worker may have found a file committed meanwhile
    for (const BatchFileResult& r : summary.files) {
      switch (r.status) {
        case BatchStatus::ok:
          ++summary.ok;
          summary.bytes += r.item.bytes;
          break;
        case BatchStatus::failed:
          ++summary.failed;
          break;
        case BatchStatus::interrupted:
          ++summary.interrupted_files;
          break;
        case BatchStatus::not_run:
          ++summary.not_run;
          break;
        case BatchStatus::skipped:
          ++summary.skipped;
          break;
      }
      if (r.status == BatchStatus::ok || r.status == BatchStatus::failed ||
          r.status == BatchStatus::interrupted) {
        for (BatchDeviceCount& d : summary.devices) {
          if (d.device != r.device)
            continue;
          ++d.files;
          if (r.status != BatchStatus::ok)
            ++d.failed;
          if (r.status == BatchStatus::ok)
            d.frames += r.frames;
          d.busy_s += r.wall_s;
        }
      }
    }
    summary.stopped = stop_ && !summary.interrupted && summary.not_run > 0;
    summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

  // The summary, also after a stop or an interruption (it says which files are missing).
  void write_summary() {
    if (summary_.summary_json.empty())
      return;
    try {
      write_file_atomic(summary_.summary_json,
                        batch_summary_json(summary_, fingerprint_, cpu_threads()));
      write_file_atomic(summary_.summary_csv, batch_summary_csv(summary_, cpu_threads()));
      summary_.summary_written = true;
    } catch (const std::exception& e) {
      say(std::string("batch: error: cannot write the summary: ") + e.what(), true);
    }
  }

  void say_end() {
    const BatchSummary& summary = summary_;
    if (summary.interrupted) {
      say("batch: interrupted: " + std::to_string(summary.interrupted_files) +
              " file(s) in flight stopped (no partial output), " + std::to_string(summary.not_run) +
              " not started; run the same command again to resume",
          true);
    } else if (summary.stopped) {
      say("batch: stopped at the first failure (keep_going is off): " +
              std::to_string(summary.not_run) + " file(s) not started",
          true);
    }
    const double secs = summary.wall_s;
    std::string m = "batch: " + std::to_string(summary.ok) + " ok, " +
                    std::to_string(summary.failed) + " failed, " + std::to_string(summary.skipped) +
                    " up to date";
    if (summary.interrupted_files + summary.not_run > 0)
      m += ", " + std::to_string(summary.interrupted_files + summary.not_run) + " not done";
    m += " in " + fmt("%.2f", secs) + " s";
    if (secs > 0 && summary.ok > 0)
      m += " (" + fmt("%.2f", summary.ok / secs) + " files/s, " +
           human_bytes(static_cast<double>(summary.bytes) / secs) + "/s)";
    if (summary.summary_written)
      m += "; summary: " + summary.summary_json;
    say(m, summary.failed > 0);
  }

  struct Profile {
    double setup = 0, read = 0, write = 0, run = 0, commit = 0, release = 0, stats = 0, files = 0;
  };

  const Config& config_;
  const BatchOptions& options_;
  const std::chrono::steady_clock::time_point t0_;
  const bool keep_going_;
  const std::string out_dir_;
  // where
  BackendKind kind_ = BackendKind::automatic;
  std::vector<int> devices_;
  bool use_cuda_ = false;
  std::string backend_;
  DeviceStarts starts_;
  std::optional<SweptTargets> swept_; // the targets sweep_temps swept, while the batch runs
  bool beside_ = false;               // backend auto: CPU workers while the GPUs start
  bool cpu_alone_ = false; // backend auto: the CPU ends the batch before a GPU would start
  bool driver_after_estimate_ = false; // narrow_visible_devices: the driver waits for the list
  // The largest file's CPU seconds on one thread, and the list's seconds on
  // one GPU (infinite: unknown; estimate_work).
  double file_estimate_ = std::numeric_limits<double>::infinity();
  double gpu_file_estimate_ = std::numeric_limits<double>::infinity();
  double gpu_batch_estimate_ = std::numeric_limits<double>::infinity();
  bool gpu_bound_ = false; // the largest file is one the GPU bounds (gpu_bound_file)
  bool estimated_ = false;
  std::vector<int> listed_; // execution.device, or the GPUs of it that pay (narrow_visible_devices)
  std::string cut_note_;    // why listed_ is shorter than execution.device
  bool resume_checked_ = false;
  std::size_t completed_ = 0, other_config_ = 0; // check_resume's, for say_resume
  bool cpu_yields_ = false; // the GPUs start: CPU workers take no new file (guarded)
  std::shared_ptr<GpuStart> gpu_start_;
  std::shared_future<int>
      device_count_; // backend auto: the devices, listed on a thread of their own
  std::chrono::steady_clock::time_point listing_t0_;
  std::thread gpu_starter_;
  int cpu_budget_ = 1;
  std::chrono::steady_clock::time_point workers_t0_;
  std::map<int, std::shared_future<void>> device_up_;
  std::jthread starting_; // after starts_ and device_up_: stopped and joined first
  // planning and scheduling
  std::vector<BatchItem> items_;
  BatchSummary summary_;
  std::string fingerprint_;
  std::vector<std::string> deps_;
  std::vector<std::size_t> todo_, order_;
  std::uintmax_t total_bytes_ = 0;
  // the workers
  std::optional<BatchDisplay> display_;
  std::mutex log_mutex_;
  std::set<std::string> seen_messages_;
  std::function<void(const std::string&)> file_log_;
  std::function<RunReport(const Config&, const RunOptions&)> runner_;
  Profile profile_;
  std::mutex mutex_; // guards what follows
  std::condition_variable cv_;
  std::vector<std::thread> threads_; // the workers (GPU ones join a batch begun on the CPU)
  std::size_t next_ = 0, done_ = 0;
  std::uintmax_t bytes_done_ = 0;
  int running_ = 0, finished_workers_ = 0, failures_ = 0;
  bool stop_ = false;
  bool file_interrupted_ = false;
  bool asked_stop_ = false; // options_.stop_requested said so, with files left (under mutex_)
};

} // namespace

BatchSummary run_batch(const Config& config, const BatchOptions& options) {
  return BatchRun(config, options).run();
}

} // namespace sigstream
