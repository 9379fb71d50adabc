#pragma once
// Statistics in the JSON schema of SPEC §4 and the per-chunk CSV.
#include <string>

#include <nlohmann/json.hpp>

#include "model/report.hpp"

namespace sigstream {

// The statistics as a JSON value (for callers that add to it, like batch;
// the excerpt's samples are placeholders in it) and as the text written to
// stats.json: stats_text writes such a value with the report's samples put in.
nlohmann::ordered_json stats_json_value(const RunReport& report);
std::string stats_text(const nlohmann::ordered_json& value, const RunReport& report);
std::string stats_json(const RunReport& report);
// JSON as sigstream writes it (statistics, summaries, merges): a name that is
// not UTF-8 (a Latin-1 file) with U+FFFD for its odd bytes, JSON text being
// UTF-8 (nlohmann's strict dump throws on it). `indent` as dump's.
std::string json_text(const nlohmann::ordered_json& value, int indent = 2);
// Whether `s` goes into JSON text as it is (json_text changes nothing of it).
bool is_utf8(const std::string& s);
std::string stats_csv(const RunReport& report);
// The CSV's header line, and the rows of one chunk of one metrics block (for
// live mode, which writes rows as they come).
std::string stats_csv_header();
// `paired` false (after a rate change): dot_input and correlation_input are
// empty, as they are null in the JSON.
std::string stats_csv_rows(const std::string& stage, const ChunkMetricsRow& chunk,
                           bool paired = true);

} // namespace sigstream
