#pragma once
// Stages that need a first pass over the signal before the run (normalize,
// SPEC §13; StageKind::first_pass): each, in chain order, measures its input
// with the metrics stage its kind names, in a run of the stages before it
// with no outputs, and then sets its spec from that block
// (StageKind::measured). The second pass is the normal run.
#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"

namespace sigstream {

// Whether a stage of `config` still needs its first pass.
[[nodiscard]] bool needs_first_pass(const Config& config);

// `config` with every such stage measured. Throws Error(config), naming the
// stage, where the signal cannot be read twice: a stream (`open_ended`:
// standard input, a pipe; SourceInfo::open_ended of the opened source) or
// live mode.
[[nodiscard]] Config with_first_passes(const Config& config, const RunOptions& options,
                                       bool open_ended);

} // namespace sigstream
