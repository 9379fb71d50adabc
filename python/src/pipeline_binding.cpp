// sigstream._core's YAML pipelines (sigstream.run, sigstream.batch) and the
// parts of a distributed batch (sigstream.distributed, SPEC §10): the config
// as text in, statistics and summaries as JSON text out, with the GIL
// released while a pipeline runs. No arrays here (module.cpp has those).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/batch_shard.hpp"
#include "pipeline/batch_summary_json.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/pipeline.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace sigstream::py {
namespace {

std::function<void(const std::string&)> logger(bool quiet) {
  if (quiet)
    return nullptr;
  return [](const std::string& m) {
    nb::gil_scoped_acquire acquire; // sys.stderr may be redirected (pytest, notebooks)
    const std::string line = "sigstream: " + m + "\n";
    // A file name that is not UTF-8 (a Latin-1 name) with U+FFFD for its odd
    // bytes: a strict str raised in a worker thread, which ended the process.
    PyObject* text =
        PyUnicode_DecodeUTF8(line.data(), static_cast<Py_ssize_t>(line.size()), "replace");
    if (text == nullptr) {
      PyErr_Clear();
      return;
    }
    try {
      nb::module_::import_("sys").attr("stderr").attr("write")(nb::steal<nb::str>(text));
    } catch (const nb::python_error&) {
      // a closed or failing stderr loses the line, not the batch
    }
  };
}

std::string run(const std::string& yaml, const std::string& origin,
                const std::vector<std::string>& overrides, bool verify, bool quiet) {
  const Config config = parse_config(yaml, origin, overrides, ConfigUse::run);
  RunOptions o;
  o.verify = verify;
  o.progress = false;
  o.log = logger(quiet);
  nb::gil_scoped_release release;
  const RunReport report = run_pipeline(config, o);
  if (report.verification.ran && !report.verification.passed)
    throw Error(ErrorKind::verification, "verification failed: relative L2 error " +
                                             std::to_string(report.verification.rel_l2_error) +
                                             " above " +
                                             std::to_string(report.verification.tolerance));
  return stats_json(report);
}

// What every batch call from Python sets: no progress line, these flags and log.
BatchOptions batch_options(bool force, bool verify, bool quiet, const std::string& config_path,
                           std::function<void(const std::string&)> log) {
  BatchOptions bo;
  bo.force = force;
  bo.verify = verify;
  bo.quiet = quiet;
  bo.progress = false;
  bo.config_path = config_path;
  bo.log = std::move(log);
  return bo;
}

// run_batch without the GIL, and the fingerprint its summary is written with.
std::pair<BatchSummary, std::string> run_batch_released(const Config& config,
                                                        const BatchOptions& bo) {
  nb::gil_scoped_release release;
  BatchSummary summary = run_batch(config, bo);
  std::string fingerprint = batch_config_fingerprint(config, summary.backend);
  return {std::move(summary), std::move(fingerprint)};
}

std::tuple<std::string, int> batch(const std::string& yaml, const std::string& origin,
                                   const std::vector<std::string>& overrides,
                                   const std::vector<std::string>& inputs,
                                   std::optional<std::string> out_dir,
                                   std::optional<bool> keep_going, bool force, bool verify,
                                   bool quiet, const std::string& summary_json) {
  const Config config = parse_config(yaml, origin, overrides, ConfigUse::batch);
  // Failures are reported even when quiet, as in the CLI.
  BatchOptions bo = batch_options(force, verify, quiet, origin, logger(false));
  bo.extra_inputs = inputs;
  bo.out_dir = out_dir;
  bo.keep_going = keep_going;
  bo.summary_json = summary_json;
  const auto [summary, fingerprint] = run_batch_released(config, bo);
  return {batch_summary_json(summary, fingerprint), summary.exit_code()};
}

// ---------------------------------------------------------------------------
// Distributed batches (sigstream.distributed, SPEC §10): the driver plans once
// (batch_plan), each task runs its files (batch_items), the driver merges the
// tasks' summaries (merge_summaries) and writes the result (write_summary).
// Only paths and summaries cross the wire, as JSON text.

using json = nlohmann::ordered_json;

// The batch's whole sorted list, as the CLI plans it (inputs expanded, or the
// `--inputs-from` list `list_text`), with every path each file writes.
std::string batch_plan(const std::string& yaml, const std::string& origin,
                       const std::vector<std::string>& overrides,
                       const std::vector<std::string>& inputs, std::optional<std::string> list_text,
                       const std::string& list_origin, std::optional<std::string> out_dir,
                       bool quiet, const std::string& summary_json,
                       const std::string& config_path) {
  const Config config = parse_config(yaml, origin, overrides, ConfigUse::batch);
  BatchOptions bo;
  bo.extra_inputs = inputs;
  const auto log = logger(quiet); // null where quiet
  if (list_text) {
    bo.items = read_batch_input_list(config, *list_text, list_origin);
    if (out_dir && log)
      if (const auto w = list_outputs_outside(bo.items, *out_dir, list_origin))
        log(*w);
  }
  const std::string dir = out_dir.value_or(config.batch.out_dir);
  const std::vector<BatchItem> items = [&] {
    nb::gil_scoped_release release;
    return batch_items(config, bo, dir, log);
  }();
  // The plan reaches Python and the workers as JSON, whose text is UTF-8: a
  // name that is not (a Latin-1 file) cannot travel exactly.
  for (const BatchItem& it : items)
    for (const std::string* p : {&it.input, &it.output})
      if (!is_utf8(*p))
        throw config_error(
            "batch: " + json_text(json(*p), -1) +
            " is not a UTF-8 name, which a Dask batch cannot hand to its workers (rename it, "
            "e.g. with convmv, or run the batch without a client or --scheduler: the batch in "
            "one process takes such names)");
  json j;
  j["out_dir"] = dir;
  j["summary_json"] = (std::filesystem::path(dir) / "batch_summary.json").string();
  // (The list's origin names its file unless it came from standard input.)
  refuse_summary_over_batch_files(
      summary_json.empty() ? j["summary_json"].get<std::string>() : summary_json, items, config,
      config_path, list_text && list_origin != "<standard input>" ? list_origin : std::string());
  j["keep_going"] = config.batch.keep_going;
  j["threads"] = config.execution.threads;
  j["backend"] = std::string(to_string(config.execution.backend));
  // What each resolved backend records in the files' statistics (the resume check's key).
  j["config_fingerprint"] = {{"cpu", batch_config_fingerprint(config, "cpu")},
                             {"cuda", batch_config_fingerprint(config, "cuda")}};
  // The largest file's estimated seconds on one CPU thread (null where
  // unknown): the driver sizes its tasks from it.
  const BatchItem* largest = nullptr;
  for (const BatchItem& it : items)
    if (largest == nullptr || it.bytes > largest->bytes)
      largest = &it;
  FileSeconds est;
  if (largest != nullptr) {
    nb::gil_scoped_release release;
    est = estimate_file_seconds(config, *largest, bo);
  }
  auto seconds = [](double s) { return std::isfinite(s) ? json(s) : json(nullptr); };
  j["largest_file"] = {{"bytes", largest != nullptr ? largest->bytes : 0},
                       {"cpu_seconds", seconds(est.cpu)}};
  j["items"] = json::array();
  for (const BatchItem& it : items)
    j["items"].push_back({{"input", it.input},
                          {"subdir", it.subdir},
                          {"output", it.output},
                          {"stats_json", it.stats_json},
                          {"stats_csv", it.stats_csv},
                          {"bytes", it.bytes}});
  return j.dump();
}

std::vector<BatchItem> items_of(const std::string& items_json) {
  const json j = json::parse(items_json, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty())
    throw nb::value_error(
        "batch_items: expected a non-empty JSON array of items (from batch_plan)");
  std::vector<BatchItem> items;
  for (const json& e : j) {
    if (!e.is_object() || !e.contains("input") || !e["input"].is_string() ||
        !e.contains("stats_json") || !e["stats_json"].is_string() ||
        e["stats_json"].get<std::string>().empty())
      throw nb::value_error(
          "batch_items: an item needs 'input' and 'stats_json' (from batch_plan)");
    BatchItem it;
    it.input = e["input"].get<std::string>();
    it.subdir = e.value("subdir", std::string());
    it.output = e.value("output", std::string());
    it.stats_json = e["stats_json"].get<std::string>();
    it.stats_csv = e.value("stats_csv", std::string());
    items.push_back(std::move(it));
  }
  return items;
}

// Distributed batches whose driver asked them to stop (stop_batch, run on
// every worker by a worker plugin): a task's batch started with such a
// stop_token hands out no further file. Tokens are a batch's id; a worker
// keeps the few it is given.
std::mutex g_stopped_mutex;
std::set<std::string> g_stopped;

void stop_batch(const std::string& token) {
  const std::lock_guard lock(g_stopped_mutex);
  g_stopped.insert(token);
}

bool batch_stopped(const std::string& token) {
  const std::lock_guard lock(g_stopped_mutex);
  return g_stopped.count(token) > 0;
}

// Runs the batch over exactly these items (a task of a distributed batch):
// every file (keep_going false: up to the first failed one, the files not
// started are "not_run" entries, as under --stop-on-error; a stop_token
// stop_batch named: no further file), no summary file; the summary JSON
// comes back. A bad file is a "failed" entry in it; a bad config raises
// ConfigError.
std::string batch_items_run(const std::string& yaml, const std::string& origin,
                            const std::vector<std::string>& overrides,
                            const std::string& items_json, const std::string& out_dir, bool force,
                            bool verify, int files_per_device, const std::string& config_path,
                            bool quiet, bool sweep, bool keep_going,
                            const std::string& stop_token) {
  const Config config = parse_config(yaml, origin, overrides, ConfigUse::batch);
  BatchOptions bo = batch_options(force, verify, quiet, config_path, logger(quiet));
  bo.items = items_of(items_json);
  bo.out_dir = out_dir;
  bo.keep_going = keep_going;
  bo.files_per_device = files_per_device;
  bo.write_summary = false;
  bo.sweep_temps = sweep;
  if (!stop_token.empty())
    bo.stop_requested = [stop_token] { return batch_stopped(stop_token); };
  const auto [summary, fingerprint] = run_batch_released(config, bo);
  return batch_summary_json(summary, fingerprint);
}

// Removes the temporaries of dead writers of this host beside these targets
// (remove_stale_temps): a distributed batch's driver runs it on every worker
// once its tasks are done. (removed, of other hosts, of live writers).
std::tuple<int, int, int> sweep_temps(const std::vector<std::string>& targets) {
  nb::gil_scoped_release release;
  const TempSweep s = remove_stale_temps(targets);
  return {s.removed, s.other_hosts, s.live};
}

// The C++ merge of task summaries (batch_shard.hpp), then what a distributed
// batch knows better than its tasks: the wall time (and so the rates) of the
// whole batch, its workers and its tasks: "tasks" replaces the merge's
// "shards" (the driver's count of tasks whose summaries came back; default:
// the texts).
std::string merge_summaries(const std::vector<std::string>& texts, const std::string& out_dir,
                            std::optional<double> wall_s, std::optional<std::string> workers_json,
                            std::optional<int> tasks) {
  json j = merged_batch_summaries(texts, out_dir); // an object: no text parsed again
  if (wall_s) {
    const double w = *wall_s;
    const double ok = j["counts"].value("ok", 0.0);
    j["wall_s"] = w;
    j["files_per_s"] = w > 0 ? ok / w : 0.0;
    j["bytes_per_s"] = w > 0 ? j.value("bytes", 0.0) / w : 0.0;
    j["frames_per_s"] = w > 0 ? j.value("frames", 0.0) / w : 0.0;
  }
  if (workers_json) {
    json workers = json::parse(*workers_json, nullptr, false);
    if (workers.is_discarded() || !workers.is_array())
      throw nb::value_error("merge_summaries: workers must be a JSON array");
    // Each device's workers are the cluster's workers on it (the tasks' summaries count a task as
    // one).
    for (json& d : j["devices"]) {
      int n = 0;
      for (const json& w : workers)
        n += w.is_object() && w.value("device", json()) == d.value("device", json()) ? 1 : 0;
      d["workers"] = n;
    }
    j["workers"] = std::move(workers);
  }
  json out;
  for (auto& [k, v] : j.items()) {
    if (k == "shards")
      out["tasks"] = tasks ? static_cast<std::size_t>(*tasks) : texts.size();
    else
      out[k] = std::move(v);
  }
  return json_text(out) + "\n";
}

// Writes a summary JSON text and its CSV (same stem, .csv) atomically; returns the CSV's path.
std::string write_summary(const std::string& summary_json, const std::string& path) {
  const std::string csv = batch_summary_csv_from_json(summary_json);
  std::filesystem::path csv_path(path);
  csv_path.replace_extension(".csv");
  nb::gil_scoped_release release;
  write_file_atomic(path, summary_json);
  write_file_atomic(csv_path.string(), csv);
  return csv_path.string();
}

} // namespace

void bind_pipelines(nb::module_& m) {
  m.def("run", &run, "yaml"_a, "origin"_a, "overrides"_a, "verify"_a, "quiet"_a);
  m.def("batch", &batch, "yaml"_a, "origin"_a, "overrides"_a, "inputs"_a, "out_dir"_a.none(),
        "keep_going"_a.none(), "force"_a, "verify"_a, "quiet"_a, "summary_json"_a = "");
  m.def("batch_plan", &batch_plan, "yaml"_a, "origin"_a, "overrides"_a, "inputs"_a,
        "list_text"_a.none(), "list_origin"_a, "out_dir"_a.none(), "quiet"_a, "summary_json"_a = "",
        "config_path"_a = "");
  m.def("batch_items", &batch_items_run, "yaml"_a, "origin"_a, "overrides"_a, "items_json"_a,
        "out_dir"_a, "force"_a, "verify"_a, "files_per_device"_a, "config_path"_a, "quiet"_a,
        "sweep"_a = true, "keep_going"_a = true, "stop_token"_a = "");
  m.def("stop_batch", &stop_batch, "token"_a);
  m.def("batch_stopped", &batch_stopped, "token"_a);
  m.def("sweep_temps", &sweep_temps, "targets"_a);
  m.def("temp_host_tag", [] { return temp_host_tag(); }); // this host in temporary names
  m.def("merge_summaries", &merge_summaries, "texts"_a, "out_dir"_a, "wall_s"_a.none(),
        "workers_json"_a.none(), "tasks"_a.none() = nb::none());
  m.def("write_summary", &write_summary, "summary_json"_a, "path"_a);
}

} // namespace sigstream::py
