#pragma once
// Exactly-once commits of a batch file's outputs when a worker dies between
// them (SPEC §10). A file's commits go: audio (an unnamed O_TMPFILE file
// linked into place), CSV, then the statistics JSON, which marks the file
// done. The JSON, written before the first commit, records the identity
// (device, inode, size, mtime: what a link or rename keeps) of the audio and
// CSV files being committed ("batch": {"commit": {"output": {...}, "csv":
// {...}}}); then the CSV's and the JSON's temporaries get their hidden names
// (AtomicFile::name_temporary), so that from there on they outlive a killed
// worker. (Named only then, not from the start: a kill while the file is
// being computed still leaves nothing, SPEC §5.)
//
// A retry (another process on this host) finding the JSON missing completes
// the dead worker's commits instead of redoing the file, when a pending JSON
// temporary of a dead writer of this host records this run's config, is up
// to date like a committed JSON would be, and the audio at its path is the
// one recorded (so it was committed); the CSV is at its path as recorded,
// or still the dead writer's temporary, which is then renamed into place.
// The JSON then moves into place (rename, never over an existing file).
// Anything else (the audio not committed, replaced since, another config, a
// live writer, another host) is left to the normal path: the file is redone
// and the dead writer's temporaries removed. Kills before the audio commit
// commit nothing; after it, each output is committed once in all. The
// folder is listed for a dead writer's temporaries only where the first
// output a commit puts in place (the audio, else the CSV) is at its path:
// without it nothing was committed, and the file is redone (a pending
// statistics-only commit too).
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "pipeline/batch.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/pipeline.hpp"

namespace sigstream {

// The commit record: {"output": {...}, "csv": {...}} (keys of the files there are).
nlohmann::ordered_json commit_record_json(const CommitFiles& files);
// An identity as recorded there (nullopt where missing or malformed).
std::optional<FileIdentity> identity_from_json(const nlohmann::ordered_json& j);

// Completes the commit of `item` left pending by a dead worker (see above).
// `is_current(probe)`: whether statistics at probe.stats_json, with the CSV at
// probe.stats_csv, make the file up to date for this run (the resume check).
// True when this call moved a statistics JSON into place; false when there
// was nothing to complete, it did not match, or another process was faster
// (the caller checks the file again either way).
bool complete_pending_commit(const BatchItem& item,
                             const std::function<bool(const BatchItem& probe)>& is_current);

} // namespace sigstream
