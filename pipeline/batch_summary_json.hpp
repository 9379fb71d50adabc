// A batch summary as a JSON object, for the code that edits one before it is
// written (the merge of shards' or Dask tasks' summaries): building it as an
// object and dumping it once, where a text would be parsed again (a merged
// summary of 800 files is ~0.7 MB; each parse and dump of it cost ~10 ms).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "pipeline/batch.hpp"

namespace sigstream {

// What batch_summary_json writes (it dumps this with two-space indents).
nlohmann::ordered_json batch_summary_object(const BatchSummary& summary,
                                            const std::string& fingerprint);

// What merge_batch_summaries writes (batch_shard.hpp), as an object.
nlohmann::ordered_json merged_batch_summaries(const std::vector<std::string>& summary_json_texts,
                                              const std::string& out_dir);

} // namespace sigstream
