#pragma once
// Shards of a batch, no engine needed (SPEC §10): N independent processes
// (a Slurm array, a Kubernetes Indexed Job, or any N commands) each run the
// files at positions I, I+N, I+2N, ... of one sorted list and write their own
// summary, out_dir/batch_summary.I-of-N.json (and .csv), which `batch --merge`
// turns into the batch's batch_summary.json/.csv.
//
// Each shard summary carries "shard": {"index", "count", "inputs_sha256",
// "config_sha256", "inputs_total"}: inputs_sha256 is the SHA-256 of the whole
// list as `--list-inputs` prints it (every shard of a job sees the same list,
// so has the same value; `sigstream batch CONFIG --list-inputs | sha256sum`
// gives it), config_sha256 that of batch_config_facts (the facts the per-file
// resume record hashes: stages, sink format and extension, stats.csv,
// backend). A merge refuses shards that disagree on either, or on N.
//
// Lists. `--list-inputs` prints `input<TAB>output` lines (output: the audio
// output, or the statistics JSON when the config has no sink.file);
// `--inputs-from` reads such a list back, or one input path a line.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/batch.hpp"
#include "pipeline/config.hpp"

namespace sigstream {

// ---------------------------------------------------------------------------
// Choosing a shard

// The environment variables --shard auto reads (Slurm's array variables),
// name -> value, only those that are set.
using ShardEnvironment = std::map<std::string, std::string>;

// The Slurm array variables of this process's environment.
ShardEnvironment slurm_array_environment();

// Parses --shard: "I/N" (0 <= I < N, decimal), or "auto": from Slurm's array
// variables in `env` (shard_from_slurm). Throws Error(config) naming the text
// and what was expected.
BatchShard parse_batch_shard(const std::string& text, const ShardEnvironment& env);

// --shard auto: I = (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) /
// SLURM_ARRAY_TASK_STEP, N = SLURM_ARRAY_TASK_COUNT. Throws Error(config),
// naming the variables and their values, outside an array (a variable
// missing or not a whole number) or for an array whose task ids are not
// evenly stepped (COUNT != (MAX - MIN) / STEP + 1, e.g. --array=1,3,7, or an
// ID off the step), where ids would not map onto shards 0..N-1.
BatchShard shard_from_slurm(const ShardEnvironment& env);

// The warning for a batch without --shard inside a Slurm array (every task
// would process every file); nullopt outside an array.
std::optional<std::string> unsharded_array_warning(const ShardEnvironment& env);

// The items at positions shard.index, shard.index + shard.count, ... (in order).
std::vector<BatchItem> select_batch_shard(const std::vector<BatchItem>& items, BatchShard shard);

// ---------------------------------------------------------------------------
// Lists of inputs

// The list `--list-inputs` prints: one `input<TAB>output` line per item.
// Throws Error(config) for a path holding a tab or a line break (it could not
// be read back).
std::string batch_input_list(const std::vector<BatchItem>& items);

// Reads a list (`--inputs-from`): lines `input<TAB>output` or `input`; blank
// lines and lines starting with '#' are skipped, a trailing '\r' dropped.
// Paths are taken as they are (relative ones from the working folder), never
// globbed. An explicit output is the item's output, its statistics beside it
// (<stem>.json, and <stem>.csv with stats.csv); without sink.file the output
// is the statistics JSON itself. Lines with the input alone get the outputs
// plain path inputs get (finish_batch_items, run by run_batch, also checks
// collisions). Throws Error(config) naming `origin` and the line for a
// malformed line or a file listed twice, and for a list with no inputs.
std::vector<BatchItem> read_batch_input_list(const Config& config, const std::string& text,
                                             const std::string& origin);

// Where the command line names an output folder too (--out-dir): a warning
// when lines of the list `origin` put their outputs outside it (a list made
// by --list-inputs fixes every output's path, so the folder gets only the
// summary). Lines with the input alone go into it.
std::optional<std::string> list_outputs_outside(const std::vector<BatchItem>& items,
                                                const std::string& out_dir,
                                                const std::string& origin);

// ---------------------------------------------------------------------------
// Planning a run (used by run_batch)

// The whole list of a batch, before sharding: options.items when non-empty
// (through finish_batch_items), else the expansion of batch.inputs and
// options.extra_inputs (collect_batch_items). Throws as those do.
std::vector<BatchItem> batch_items(const Config& config, const BatchOptions& options,
                                   const std::string& out_dir,
                                   const std::function<void(const std::string&)>& log = {},
                                   CanonicalPaths* canon = nullptr);

struct BatchPlan {
  std::vector<BatchItem> items;          // the files this run processes (its shard's)
  std::optional<BatchShardRecord> shard; // set with options.shard
  std::string summary_json;              // the default summary path (batch_summary[.I-of-N].json)
};

// The batch summary (`summary_json` and its CSV) is never written over a
// file the batch reads or writes (SPEC §5): an input, an output or a file's
// statistics of the whole list (`all`, every shard's), the config
// (`config_path`), the input list (`inputs_from`), or a stage's file (taps).
// Throws a config error naming both. `canon`: the spellings batch_items
// found (plan_batch), else one of its own.
void refuse_summary_over_batch_files(const std::string& summary_json,
                                     const std::vector<BatchItem>& all, const Config& config,
                                     const std::string& config_path, const std::string& inputs_from,
                                     CanonicalPaths* canon = nullptr);

// batch_items, then options.shard's part of it and its record (`backend`:
// the resolved "cpu" or "cuda", part of config_sha256). Logs a line naming
// the shard.
BatchPlan plan_batch(const Config& config, const BatchOptions& options, const std::string& out_dir,
                     const std::string& backend,
                     const std::function<void(const std::string&)>& log = {});

// out_dir/batch_summary.I-of-N.json
std::string shard_summary_path(const std::string& out_dir, BatchShard shard);

// Lowercase hex SHA-256 of `data` (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view data);
// `bytes` in lowercase hex, two digits a byte.
std::string hex_of(std::string_view bytes);

// ---------------------------------------------------------------------------
// Merging summaries

// Merges batch summaries (shard summaries of one job, or per-task summaries
// without a "shard" object, e.g. of Dask tasks) into one in the CLI's schema:
// files in input order, counts and totals summed, wall_s the largest,
// exit_code the merged one, workers listed, devices summed by ordinal, and
// "shards": how many were merged (plus the job's inputs_sha256 and
// config_sha256 for shards). Throws Error(config) for a text that is not a
// batch summary, a mix of shard and other summaries, shards that disagree on
// N, inputs_sha256 or config_sha256 (naming which differ), a shard twice, or
// summaries without shards that disagree on config_fingerprint. Missing
// shards are not checked here: see missing_shards.
std::string merge_batch_summaries(const std::vector<std::string>& summary_json_texts,
                                  const std::string& out_dir);
// The same, naming each summary by `names` (file names) in its messages.
std::string merge_batch_summaries(const std::vector<std::string>& summary_json_texts,
                                  const std::string& out_dir,
                                  const std::vector<std::string>& names);

// The shard indices 0..N-1 that none of the summaries holds (ascending);
// empty for summaries without shards. Throws as merge_batch_summaries does
// for summaries that do not belong together.
std::vector<int> missing_shards(const std::vector<std::string>& summary_json_texts);

// Indices as a Slurm --array list: ascending runs joined, "2,5" or "0-3,7".
std::string slurm_array_list(std::vector<int> indices);

// The summary CSV (batch_summary_csv's columns) of a summary JSON text.
std::string batch_summary_csv_from_json(const std::string& summary_json_text);

// `sigstream batch --merge DIR`: reads DIR/batch_summary.I-of-N.json (a
// name's I and N must match its "shard"), and unless shards are missing
// writes DIR/batch_summary.json and .csv atomically. Throws Error(config)
// when DIR holds no shard summary or they do not belong together (as above).
struct BatchMergeResult {
  std::vector<std::string> inputs;       // the shard summaries read
  int shard_count = 0;                   // N
  std::vector<int> missing;              // missing shard indices: nothing was written
  std::string summary_json, summary_csv; // written (when nothing is missing)
  int exit_code = 0;                     // the merged summary's exit_code
  std::size_t files = 0;
};
BatchMergeResult merge_batch_dir(const std::string& dir);

} // namespace sigstream
