// Shards of a batch, input lists and summary merging (pipeline/batch_shard.hpp).
// Over 600 lines (~700) and one file on purpose: shard selection, the Slurm
// reading, input lists and the merge all read and write the same summary
// JSON and shard record; the merge is the part to split off when it grows.
#include "pipeline/batch_shard.hpp"
#include "pipeline/batch_summary_json.hpp"
#include "pipeline/canonical_path.hpp"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>

#include "core/error.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kSlurmId = "SLURM_ARRAY_TASK_ID";
constexpr const char* kSlurmMin = "SLURM_ARRAY_TASK_MIN";
constexpr const char* kSlurmMax = "SLURM_ARRAY_TASK_MAX";
constexpr const char* kSlurmStep = "SLURM_ARRAY_TASK_STEP";
constexpr const char* kSlurmCount = "SLURM_ARRAY_TASK_COUNT";
constexpr const char* kSlurmVars[] = {kSlurmId, kSlurmMin, kSlurmMax, kSlurmStep, kSlurmCount};

// A decimal integer, the whole text (an optional leading '-'; no spaces, no '+').
std::optional<long long> whole_number(std::string_view s) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// "SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_MIN=1, ..." with unset ones marked.
std::string slurm_values(const ShardEnvironment& env) {
  std::string s;
  for (const char* v : kSlurmVars) {
    const auto it = env.find(v);
    s += (s.empty() ? "" : ", ") + std::string(v) + "=" +
         (it == env.end() ? "(not set)" : "'" + it->second + "'");
  }
  return s;
}

void check_shard(BatchShard shard) {
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
    throw Error(ErrorKind::invalid_argument, "batch shard " + std::to_string(shard.index) + "/" +
                                                 std::to_string(shard.count) +
                                                 ": expected 0 <= index < count");
}

std::string list_output(const BatchItem& it) {
  return it.output.empty() ? it.stats_json : it.output;
}

std::string list_text(const std::vector<BatchItem>& items, bool strict) {
  std::string s;
  for (const BatchItem& it : items) {
    const std::string out = list_output(it);
    if (strict)
      for (const std::string* p : {&it.input, &out})
        if (p->find_first_of("\t\n\r") != std::string::npos)
          throw config_error("batch: '" + *p +
                             "' holds a tab or a line break and cannot be written to an input list "
                             "(rename it, or run without --list-inputs/--inputs-from)");
    s += it.input + '\t' + out + '\n';
  }
  return s;
}

// ---------------------------------------------------------------------------
// Summaries

struct Parsed {
  std::string name;
  json j;
  std::optional<BatchShardRecord> rec;
};

Parsed parse_summary(const std::string& text, const std::string& name) {
  Parsed p;
  p.name = name;
  p.j = json::parse(text, nullptr, false);
  if (p.j.is_discarded() || !p.j.is_object())
    throw config_error(name + ": not a batch summary (not a JSON object)");
  if (!p.j.contains("files") || !p.j["files"].is_array() || !p.j.contains("config_fingerprint") ||
      !p.j["config_fingerprint"].is_string())
    throw config_error(
        name + ": not a sigstream batch summary (expected 'files' and 'config_fingerprint')");
  if (p.j.contains("shard")) {
    const json& s = p.j["shard"];
    const bool ok = s.is_object() && s.contains("index") && s["index"].is_number_integer() &&
                    s.contains("count") && s["count"].is_number_integer() &&
                    s.contains("inputs_sha256") && s["inputs_sha256"].is_string() &&
                    s.contains("config_sha256") && s["config_sha256"].is_string() &&
                    s.contains("inputs_total") && s["inputs_total"].is_number_unsigned();
    if (!ok)
      throw config_error(name +
                         ": its 'shard' object is malformed (expected index, count, inputs_sha256, "
                         "config_sha256, inputs_total)");
    BatchShardRecord r;
    r.shard.index = s["index"].get<int>();
    r.shard.count = s["count"].get<int>();
    r.inputs_sha256 = s["inputs_sha256"].get<std::string>();
    r.config_sha256 = s["config_sha256"].get<std::string>();
    r.inputs_total = s["inputs_total"].get<std::size_t>();
    if (r.shard.count < 1 || r.shard.index < 0 || r.shard.index >= r.shard.count)
      throw config_error(name + ": shard " + std::to_string(r.shard.index) + " of " +
                         std::to_string(r.shard.count) +
                         " is not a shard (expected 0 <= index < count)");
    p.rec = r;
  }
  return p;
}

std::vector<Parsed> parse_summaries(const std::vector<std::string>& texts,
                                    const std::vector<std::string>& names) {
  std::vector<Parsed> out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    out.push_back(
        parse_summary(texts[i], i < names.size() ? names[i] : "summary " + std::to_string(i + 1)));
  return out;
}

std::string short_hash(const std::string& h) {
  return h.size() > 12 ? h.substr(0, 12) + "..." : h;
}

// Throws unless the values agree: "<what>: 4 in a, b; 3 in c (<hint>)".
template <class Key>
void require_same(const std::vector<Parsed>& ps, Key key, const std::string& what,
                  const std::string& hint) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const Parsed& p : ps) {
    const std::string v = key(p);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == v; });
    if (it == groups.end())
      groups.push_back({v, {p.name}});
    else
      it->second.push_back(p.name);
  }
  if (groups.size() <= 1)
    return;
  std::string m = "batch merge: " + what + ": ";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    m += (g ? "; " : "") + groups[g].first + " in ";
    for (std::size_t k = 0; k < groups[g].second.size(); ++k) {
      if (k == 3 && groups[g].second.size() > 4) {
        m += " and " + std::to_string(groups[g].second.size() - 3) + " more";
        break;
      }
      m += (k ? ", " : "") + groups[g].second[k];
    }
  }
  throw config_error(m + " (" + hint + "); nothing merged");
}

// The checks of merge_batch_summaries; returns N (0 for summaries without shards).
int check_together(const std::vector<Parsed>& ps) {
  if (ps.empty())
    throw config_error("batch merge: no summaries to merge");
  std::vector<std::string> with, without;
  for (const Parsed& p : ps)
    (p.rec ? with : without).push_back(p.name);
  if (!with.empty() && !without.empty())
    throw config_error("batch merge: " + with.front() + " is a shard summary (--shard) and " +
                       without.front() +
                       " is not: a batch's shards merge with each other only; nothing merged");
  if (!without.empty()) {
    require_same(
        ps,
        [](const Parsed& p) { return short_hash(p.j["config_fingerprint"].get<std::string>()); },
        "the summaries were made by different configs (config_fingerprint)",
        "stages, sink or backend differ");
    return 0;
  }
  require_same(
      ps, [](const Parsed& p) { return std::to_string(p.rec->shard.count); },
      "the shards disagree on N, the shard count",
      "every shard of one job runs --shard I/N with the same N; summaries of an earlier job with "
      "another N (batch_summary.I-of-M.json) left in the folder must be removed first");
  require_same(
      ps, [](const Parsed& p) { return "inputs_sha256 " + short_hash(p.rec->inputs_sha256); },
      "the shards saw different input lists",
      "files were added, removed or renamed between shards, or the inputs or out_dir differ; give "
      "every shard one list: --list-inputs > LIST, then --inputs-from LIST");
  require_same(
      ps, [](const Parsed& p) { return "config_sha256 " + short_hash(p.rec->config_sha256); },
      "the shards ran different configs",
      "stages, sink, stats.csv or backend differ; rerun the odd shards");
  std::map<int, std::string> seen;
  for (const Parsed& p : ps) {
    auto [it, fresh] = seen.emplace(p.rec->shard.index, p.name);
    if (!fresh)
      throw config_error("batch merge: shard " + std::to_string(p.rec->shard.index) + " of " +
                         std::to_string(p.rec->shard.count) + " appears twice: " + it->second +
                         " and " + p.name + "; nothing merged");
  }
  return ps.front().rec->shard.count;
}

std::vector<int> missing_of(const std::vector<Parsed>& ps, int count) {
  std::set<int> have;
  for (const Parsed& p : ps)
    if (p.rec)
      have.insert(p.rec->shard.index);
  std::vector<int> out;
  for (int i = 0; i < count; ++i)
    if (have.count(i) == 0)
      out.push_back(i);
  return out;
}

std::optional<BatchStatus> status_named(const std::string& s) {
  for (BatchStatus b : {BatchStatus::ok, BatchStatus::skipped, BatchStatus::failed,
                        BatchStatus::interrupted, BatchStatus::not_run})
    if (to_string(b) == s)
      return b;
  return std::nullopt;
}

// A summary's file entry back into the result it was written from.
BatchFileResult file_from_json(const json& e, const std::string& name) {
  auto str = [&](const char* k) {
    return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string();
  };
  auto num = [&](const char* k) {
    return e.contains(k) && e[k].is_number() ? e[k].get<double>() : 0.0;
  };
  auto integer = [&](const char* k) -> std::int64_t {
    return e.contains(k) && e[k].is_number() ? e[k].get<std::int64_t>() : 0;
  };
  auto numbers = [&](const char* k) {
    std::vector<double> v;
    if (e.contains(k) && e[k].is_array())
      for (const json& x : e[k])
        v.push_back(x.is_number() ? x.get<double>() : 0.0);
    return v;
  };
  if (!e.is_object() || !e.contains("file") || !e["file"].is_string())
    throw config_error(name + ": a 'files' entry has no 'file'");
  const auto status = status_named(str("status"));
  if (!status)
    throw config_error(name + ": '" + str("file") + "' has an unknown status '" + str("status") +
                       "'");
  BatchFileResult r;
  r.item.input = str("file");
  r.item.output = str("output");
  r.item.stats_json = str("stats");
  r.item.bytes =
      e.contains("bytes") && e["bytes"].is_number_unsigned() ? e["bytes"].get<std::uintmax_t>() : 0;
  r.status = *status;
  r.error = str("error");
  r.outputs_written = e.contains("stats") && e["stats"].is_string();
  r.sample_rate = num("sample_rate");
  r.channels = static_cast<int>(integer("channels"));
  r.frames = integer("frames");
  r.output_frames = integer("output_frames");
  r.input_format = str("input_format");
  r.output_format = str("output_format");
  r.wall_s = num("wall_s");
  r.backend = str("backend");
  r.device = e.contains("device") && e["device"].is_number_integer() ? e["device"].get<int>() : -1;
  r.device_name = str("device_name");
  r.clipped_samples = integer("clipped_samples");
  r.nonfinite = integer("nonfinite");
  r.output_rms = numbers("output_rms");
  r.output_peak = numbers("output_peak");
  if (e.contains("integrated_lufs") && e["integrated_lufs"].is_number())
    r.integrated_lufs = e["integrated_lufs"].get<double>();
  if (e.contains("true_peak_dbtp") && e["true_peak_dbtp"].is_number())
    r.true_peak_dbtp = e["true_peak_dbtp"].get<double>();
  r.verification_ran = e.contains("rel_l2_error") && e["rel_l2_error"].is_number();
  r.rel_l2_error = num("rel_l2_error");
  return r;
}

void count_statuses(BatchSummary& s) {
  for (const BatchFileResult& r : s.files) {
    switch (r.status) {
      case BatchStatus::ok:
        ++s.ok;
        break;
      case BatchStatus::skipped:
        ++s.skipped;
        break;
      case BatchStatus::failed:
        ++s.failed;
        break;
      case BatchStatus::interrupted:
        ++s.interrupted_files;
        break;
      case BatchStatus::not_run:
        ++s.not_run;
        break;
    }
  }
}

int device_of(const json& d) {
  return d.is_number_integer() ? d.get<int>() : -1;
}

json merge_parsed(const std::vector<Parsed>& ps, const std::string& out_dir) {
  check_together(ps);
  BatchSummary m;
  m.out_dir = out_dir;
  m.backend = ps.front().j.value("backend", std::string());
  for (const Parsed& p : ps) {
    for (const json& e : p.j["files"])
      m.files.push_back(file_from_json(e, p.name));
    m.interrupted = m.interrupted || p.j.value("interrupted", false);
    m.stopped = m.stopped || p.j.value("stopped_at_failure", false);
    m.wall_s = std::max(m.wall_s, p.j.value("wall_s", 0.0));
    m.bytes += p.j.value("bytes", std::uintmax_t{0});
    for (const json& w : p.j.value("workers", json::array()))
      if (w.is_object())
        m.workers.push_back({device_of(w.value("device", json())), w.value("threads", 0)});
    for (const json& d : p.j.value("devices", json::array())) {
      if (!d.is_object())
        continue;
      const int dev = device_of(d.value("device", json()));
      auto it = std::find_if(m.devices.begin(), m.devices.end(),
                             [&](const auto& c) { return c.device == dev; });
      if (it == m.devices.end())
        it = m.devices.insert(m.devices.end(), BatchDeviceCount{dev});
      it->workers += d.value("workers", 0);
      it->files += d.value("files", 0);
      it->failed += d.value("failed", 0);
      it->frames += d.value("frames", std::int64_t{0});
      it->busy_s += d.value("busy_s", 0.0);
    }
  }
  std::stable_sort(m.files.begin(), m.files.end(),
                   [](const BatchFileResult& a, const BatchFileResult& b) {
                     return a.item.input < b.item.input;
                   });
  count_statuses(m);

  json merged = batch_summary_object(m, ps.front().j["config_fingerprint"].get<std::string>());
  json out;
  for (auto& [k, v] : merged.items()) {
    out[k] = std::move(v);
    if (k != "config_fingerprint")
      continue;
    out["shards"] = ps.size();
    if (ps.front().rec) {
      out["inputs_sha256"] = ps.front().rec->inputs_sha256;
      out["config_sha256"] = ps.front().rec->config_sha256;
      out["inputs_total"] = ps.front().rec->inputs_total;
    }
  }
  return out;
}

} // namespace

// ---------------------------------------------------------------------------

ShardEnvironment slurm_array_environment() {
  ShardEnvironment env;
  for (const char* v : kSlurmVars)
    if (const char* value = std::getenv(v))
      env[v] = value;
  return env;
}

BatchShard parse_batch_shard(const std::string& text, const ShardEnvironment& env) {
  if (text == "auto")
    return shard_from_slurm(env);
  const std::string expected =
      " (expected I/N with 0 <= I < N, e.g. --shard 0/4, or --shard auto in a Slurm job array)";
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw config_error("--shard: '" + text + "' is not a shard" + expected);
  const auto i = whole_number(std::string_view(text).substr(0, slash));
  const auto n = whole_number(std::string_view(text).substr(slash + 1));
  if (!i || !n)
    throw config_error("--shard: '" + text + "' is not a shard" + expected);
  if (*n < 1 || *n > 1'000'000'000)
    throw config_error("--shard: '" + text + "': N, the number of shards, must be 1 or more" +
                       expected);
  if (*i < 0 || *i >= *n)
    throw config_error("--shard: '" + text + "': I must be 0.." + std::to_string(*n - 1) +
                       " for N = " + std::to_string(*n) + expected);
  return {static_cast<int>(*i), static_cast<int>(*n)};
}

BatchShard shard_from_slurm(const ShardEnvironment& env) {
  const std::string values = " (" + slurm_values(env) + ")";
  if (env.find(kSlurmId) == env.end())
    throw config_error(
        "--shard auto: not inside a Slurm job array: SLURM_ARRAY_TASK_ID is not set" + values +
        "; submit with sbatch --array=0-(N-1), or give --shard I/N");
  long long v[5] = {};
  for (int k = 0; k < 5; ++k) {
    const auto it = env.find(kSlurmVars[k]);
    if (it == env.end())
      throw config_error("--shard auto: " + std::string(kSlurmVars[k]) +
                         " is not set, so the array's shape is unknown" + values +
                         "; give --shard I/N");
    const auto n = whole_number(it->second);
    if (!n)
      throw config_error("--shard auto: " + std::string(kSlurmVars[k]) + "='" + it->second +
                         "' is not a whole number" + values);
    v[k] = *n;
  }
  const long long id = v[0], min = v[1], max = v[2], step = v[3], count = v[4];
  if (step < 1 || count < 1 || max < min || id < min || id > max)
    throw config_error("--shard auto: the Slurm array variables do not describe an array" + values +
                       " (expected STEP >= 1, COUNT >= 1 and MIN <= ID <= MAX)");
  const long long even = (max - min) / step + 1;
  if (count > 1'000'000'000)
    throw config_error("--shard auto: SLURM_ARRAY_TASK_COUNT " + std::to_string(count) +
                       " is more than 1,000,000,000 shards" + values + " (the most a batch takes)");
  if (count != even || (id - min) % step != 0) {
    const std::string why = count != even
                                ? "COUNT is " + std::to_string(count) +
                                      ", (MAX - MIN) / STEP + 1 is " + std::to_string(even)
                                : "task " + std::to_string(id) + " is not MIN + k x STEP";
    throw config_error(
        "--shard auto: the Slurm array is not evenly stepped" + values + ": " + why +
        ", so task ids do not map onto shards 0..COUNT-1 (an array like --array=1,3,7); submit "
        "--array=A-B or --array=A-B:S (a %K throttle is fine), or give --shard I/N");
  }
  return {static_cast<int>((id - min) / step), static_cast<int>(count)};
}

std::optional<std::string> unsharded_array_warning(const ShardEnvironment& env) {
  const auto it = env.find(kSlurmId);
  if (it == env.end())
    return std::nullopt;
  std::string count;
  if (const auto c = env.find(kSlurmCount); c != env.end())
    count = " of " + c->second;
  return "batch: warning: this is Slurm array task " + it->second + count +
         " (SLURM_ARRAY_TASK_ID is set) and there is no --shard: every task of the array processes "
         "every "
         "file; add --shard auto to split the files over the tasks";
}

std::vector<BatchItem> select_batch_shard(const std::vector<BatchItem>& items, BatchShard shard) {
  check_shard(shard);
  std::vector<BatchItem> out;
  for (std::size_t k = static_cast<std::size_t>(shard.index); k < items.size();
       k += static_cast<std::size_t>(shard.count))
    out.push_back(items[k]);
  return out;
}

std::string batch_input_list(const std::vector<BatchItem>& items) {
  return list_text(items, true);
}

std::vector<BatchItem> read_batch_input_list(const Config& config, const std::string& text,
                                             const std::string& origin) {
  std::vector<std::string> plain;
  std::vector<BatchItem> given;
  std::map<fs::path, int> first_line;
  CanonicalPaths canon;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#')
      continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    const auto tab = line.find('\t');
    const std::string input = line.substr(0, tab);
    if (tab != std::string::npos && line.find('\t', tab + 1) != std::string::npos)
      throw config_error(where +
                         "expected 'input<TAB>output' or one input path, got more than one tab");
    if (input.empty())
      throw config_error(where + "the input path before the tab is empty");
    if (auto [it, fresh] = first_line.emplace(canon.of(input), number); !fresh)
      throw config_error(where + "'" + input + "' is listed again (first on line " +
                         std::to_string(it->second) + "); a file is processed once");
    if (tab == std::string::npos) {
      plain.push_back(input);
      continue;
    }
    const std::string output = line.substr(tab + 1);
    if (output.empty())
      throw config_error(where + "the output path after the tab is empty");
    BatchItem it;
    it.input = input;
    fs::path stem(output);
    stem.replace_extension();
    if (config.sink.file) {
      it.output = output;
      it.stats_json = stem.string() + ".json";
    } else {
      it.stats_json = output;
    }
    if (config.stats.csv)
      it.stats_csv = stem.string() + ".csv";
    given.push_back(std::move(it));
  }
  if (plain.empty() && given.empty())
    throw config_error(
        origin + ": lists no inputs (expected lines 'input<TAB>output' or one input path a line)");
  std::vector<BatchItem> items = plain_batch_items(plain);
  items.insert(items.end(), std::make_move_iterator(given.begin()),
               std::make_move_iterator(given.end()));
  return items;
}

std::optional<std::string> list_outputs_outside(const std::vector<BatchItem>& items,
                                                const std::string& out_dir,
                                                const std::string& origin) {
  const fs::path dir = canonical_of(out_dir);
  const auto written = [](const BatchItem& it) -> const std::string& {
    return it.output.empty() ? it.stats_json : it.output;
  };
  std::size_t outside = 0;
  const BatchItem* first = nullptr;
  CanonicalPaths canon;
  for (const BatchItem& it : items) {
    if (it.stats_json.empty())
      continue; // a line with the input alone: its outputs go into out_dir
    const fs::path rel = canon.of(written(it)).lexically_relative(dir);
    if ((rel.empty() || *rel.begin() == "..") && outside++ == 0)
      first = &it;
  }
  if (first == nullptr)
    return std::nullopt;
  return "batch: warning: " + origin + " puts the outputs of " + std::to_string(outside) +
         " file(s) outside --out-dir '" + out_dir + "' (first '" + first->input + "' at '" +
         written(*first) +
         "'): a line 'input<TAB>output', as --list-inputs prints, fixes its outputs, and only "
         "the summary goes to --out-dir. To write into --out-dir, take the list's inputs alone: "
         "cut -f1 " +
         origin + " | sigstream batch CONFIG --inputs-from - --out-dir " + out_dir;
}

std::vector<BatchItem> batch_items(const Config& config, const BatchOptions& options,
                                   const std::string& out_dir,
                                   const std::function<void(const std::string&)>& log,
                                   CanonicalPaths* canon) {
  check_out_dir(out_dir);
  if (!options.items.empty())
    return finish_batch_items(config, options.items, out_dir, canon);
  return collect_batch_items(config, options.extra_inputs, out_dir, log, canon);
}

std::string shard_summary_path(const std::string& out_dir, BatchShard shard) {
  return (fs::path(out_dir) / ("batch_summary." + std::to_string(shard.index) + "-of-" +
                               std::to_string(shard.count) + ".json"))
      .string();
}

void refuse_summary_over_batch_files(const std::string& summary_json,
                                     const std::vector<BatchItem>& all, const Config& config,
                                     const std::string& config_path, const std::string& inputs_from,
                                     CanonicalPaths* shared) {
  CanonicalPaths own;
  CanonicalPaths& canon = shared != nullptr ? *shared : own;
  fs::path csv(summary_json);
  csv.replace_extension(".csv");
  const std::string json_c = canon.key(summary_json), csv_c = canon.key(csv.native());
  // `what()` names the file: made only for the one refused.
  const auto refuse_if = [&](const std::string& p, const auto& what) {
    if (p.empty() || is_std_stream(p))
      return;
    const std::string& c = canon.key(p);
    if (c == json_c || c == csv_c)
      throw config_error("batch: the summary " + (c == json_c ? summary_json : csv.string()) +
                         " would be written over " + what() + "; give --stats another path");
  };
  for (const BatchItem& item : all) {
    refuse_if(item.input, [&] { return "the input " + item.input; });
    for (const std::string* p : {&item.output, &item.stats_json, &item.stats_csv})
      refuse_if(*p, [&] { return "an output of " + item.input + " (" + *p + ")"; });
  }
  refuse_if(config_path, [&] { return "the config " + config_path; });
  refuse_if(inputs_from, [&] { return "the input list " + inputs_from; });
  for (const StageSpec& s : config.stages)
    if (const auto files = stage_kind(s.type).files)
      for (const std::string& f : files(s))
        refuse_if(f, [&] { return "the file " + f + " of stage '" + s.name + "'"; });
}

BatchPlan plan_batch(const Config& config, const BatchOptions& options, const std::string& out_dir,
                     const std::string& backend,
                     const std::function<void(const std::string&)>& log) {
  // One cache of canonical spellings for the list and the checks after it.
  CanonicalPaths canon;
  std::vector<BatchItem> all = batch_items(config, options, out_dir, log, &canon);
  BatchPlan plan;
  const auto refuse_summary_over_files = [&] {
    if (options.write_summary)
      refuse_summary_over_batch_files(
          options.summary_json.empty() ? plan.summary_json : options.summary_json, all, config,
          options.config_path, options.inputs_from, &canon);
  };
  if (!options.shard) {
    plan.summary_json = (fs::path(out_dir) / "batch_summary.json").string();
    refuse_summary_over_files();
    plan.items = std::move(all);
    return plan;
  }
  const BatchShard shard = *options.shard;
  check_shard(shard);
  plan.summary_json = shard_summary_path(out_dir, shard);
  refuse_summary_over_files();
  {
    // The shard summaries' names are taken too (finish_batch_items claims batch_summary.*).
    fs::path csv(plan.summary_json);
    csv.replace_extension(".csv");
    const std::set<std::string> taken = {canonical_of(plan.summary_json).native(),
                                         canonical_of(csv).native()};
    for (const BatchItem& it : all)
      for (const std::string* p : {&it.output, &it.stats_json, &it.stats_csv})
        if (!p->empty() && taken.count(canon.key(*p)) > 0)
          throw config_error(
              "batch: the output '" + *p + "' of '" + it.input +
              "' is the shard's summary (rename the input, or choose another out_dir)");
  }
  BatchShardRecord r;
  r.shard = shard;
  r.inputs_sha256 = sha256_hex(list_text(all, false));
  r.config_sha256 = sha256_hex(batch_config_facts(config, backend));
  r.inputs_total = all.size();
  plan.items = select_batch_shard(all, shard);
  plan.shard = std::move(r);
  if (log)
    log("batch: shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + ": " +
        std::to_string(plan.items.size()) + " of " + std::to_string(all.size()) +
        " file(s) (inputs sha256 " + short_hash(plan.shard->inputs_sha256) + ")");
  return plan;
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw internal_error("SHA-256 failed (OpenSSL EVP_Digest)");
  return hex_of(std::string_view(reinterpret_cast<const char*>(md), n));
}

std::string hex_of(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    s += kHex[b >> 4U];
    s += kHex[b & 15U];
  }
  return s;
}

std::string merge_batch_summaries(const std::vector<std::string>& summary_json_texts,
                                  const std::string& out_dir) {
  return merge_batch_summaries(summary_json_texts, out_dir, {});
}

std::string merge_batch_summaries(const std::vector<std::string>& summary_json_texts,
                                  const std::string& out_dir,
                                  const std::vector<std::string>& names) {
  return json_text(merge_parsed(parse_summaries(summary_json_texts, names), out_dir)) + "\n";
}

json merged_batch_summaries(const std::vector<std::string>& summary_json_texts,
                            const std::string& out_dir) {
  return merge_parsed(parse_summaries(summary_json_texts, {}), out_dir);
}

std::vector<int> missing_shards(const std::vector<std::string>& summary_json_texts) {
  const std::vector<Parsed> ps = parse_summaries(summary_json_texts, {});
  return missing_of(ps, check_together(ps));
}

std::string slurm_array_list(std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::string s;
  for (std::size_t k = 0; k < indices.size();) {
    std::size_t e = k;
    while (e + 1 < indices.size() && indices[e + 1] == indices[e] + 1)
      ++e;
    s += (s.empty() ? "" : ",") + std::to_string(indices[k]);
    if (e > k)
      s += "-" + std::to_string(indices[e]);
    k = e + 1;
  }
  return s;
}

namespace {

// The CSV of a summary object (`name` for its errors).
std::string summary_csv(const json& j, const std::string& name) {
  BatchSummary s;
  for (const json& e : j["files"])
    s.files.push_back(file_from_json(e, name));
  return batch_summary_csv(s);
}

} // namespace

std::string batch_summary_csv_from_json(const std::string& summary_json_text) {
  const Parsed p = parse_summary(summary_json_text, "batch summary");
  return summary_csv(p.j, p.name);
}

BatchMergeResult merge_batch_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw config_error("batch --merge: '" + dir +
                       "' is not a folder (expected the out_dir of the shards)");
  static const std::regex kName(R"(batch_summary\.([0-9]+)-of-([0-9]+)\.json)");
  struct Named {
    long long index, count;
    fs::path path;
  };
  std::vector<Named> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    std::smatch m;
    if (!std::regex_match(n, m, kName) || !it->is_regular_file(ec))
      continue;
    const auto i = whole_number(m[1].str()), c = whole_number(m[2].str());
    found.push_back({i.value_or(-1), c.value_or(-1), it->path()});
  }
  if (ec)
    throw io_error("batch --merge: cannot read the folder '" + dir + "': " + ec.message());
  if (found.empty())
    throw config_error(
        "batch --merge: '" + dir +
        "' holds no shard summaries (batch_summary.I-of-N.json, written by sigstream batch "
        "--shard I/N with this out_dir)");
  std::sort(found.begin(), found.end(), [](const Named& a, const Named& b) {
    return std::tie(a.count, a.index) < std::tie(b.count, b.index);
  });

  BatchMergeResult result;
  std::vector<Parsed> ps;
  for (const Named& f : found) {
    std::ifstream in(f.path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
      throw io_error(f.path.string() + ": cannot read it");
    Parsed p = parse_summary(text.str(), f.path.string());
    if (!p.rec)
      throw config_error(p.name +
                         ": has no 'shard' object, so it is not a shard's summary; move it away");
    if (p.rec->shard.index != f.index || p.rec->shard.count != f.count)
      throw config_error(p.name + ": its name says shard " + std::to_string(f.index) + " of " +
                         std::to_string(f.count) + ", its 'shard' object " +
                         std::to_string(p.rec->shard.index) + " of " +
                         std::to_string(p.rec->shard.count) + " (renamed?)");
    result.inputs.push_back(p.name);
    ps.push_back(std::move(p));
  }
  result.shard_count = check_together(ps);
  result.missing = missing_of(ps, result.shard_count);
  if (!result.missing.empty())
    return result;

  // The shards' out_dir as they wrote it (their entries' paths are spelled
  // from where they ran), not as this command names the folder.
  const auto out_dir_of = [](const Parsed& p) {
    const json& o = p.j.value("out_dir", json());
    return o.is_string() ? o.get<std::string>() : std::string();
  };
  std::string out_dir = out_dir_of(ps.front());
  for (const Parsed& p : ps)
    if (out_dir_of(p) != out_dir)
      out_dir.clear();
  const json merged = merge_parsed(ps, out_dir.empty() ? dir : out_dir);
  result.summary_json = (fs::path(dir) / "batch_summary.json").string();
  result.summary_csv = (fs::path(dir) / "batch_summary.csv").string();
  // (The folder named here, where the shards spelled theirs two ways, may be
  // a name that is not UTF-8.)
  write_file_atomic(result.summary_json, json_text(merged) + "\n");
  write_file_atomic(result.summary_csv, summary_csv(merged, result.summary_json));
  result.exit_code = merged.value("exit_code", 0);
  result.files = merged["files"].size();
  return result;
}

} // namespace sigstream
