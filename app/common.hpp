#pragma once
// What the subcommands share (SPEC §1): the flags that several of them take,
// the run's summary and exit code, and the way a flag's value reaches the
// config: as a "key.path=value" override that the schema checks, with the
// schema's message put back in the flag's words.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/pipeline.hpp"

namespace sigstream::app {

// --backend, --verify, --quiet, --no-progress, --stats and --plot (run,
// filter; batch takes all but --plot).
struct CommonFlags {
  std::string backend;
  bool verify = false;
  bool quiet = false;
  bool no_progress = false;
  std::string stats;
  std::string plot; // run/filter --plot FIG
};

// How --backend's value is checked: by CLI11 as it parses (batch, which may
// hand it to a Dask run before any config is read), or by the config's
// schema once it is an override (run, filter).
enum class BackendCheck { cli, schema };

void add_common(CLI::App* cmd, CommonFlags& f, BackendCheck check);
// A flag's value that must be given: an empty one ("" from an unset shell
// variable) is refused, as is one that starts with "--" (`--out-dir=
// --list-inputs`: CLI11 fills an empty `--flag=` from the next argument).
// `what` names what is expected ("a folder"). A name that starts with "--"
// is given as ./--name.
CLI::Validator given_value(const std::string& what);
// `--flag=` with nothing after the '=' anywhere before a "--": CLI11 would
// take the next argument as its value (`--stats= in/a.wav` wrote the summary
// over an input). The message, or nothing.
std::optional<std::string> empty_flag_value(int argc, char** argv);
void add_plot_flag(CLI::App* cmd, CommonFlags& f);
// --set KEY.PATH=VALUE, repeatable.
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);

// A figure's name must say its format (.png, .svg or .pdf).
void check_figure_name(const std::string& fig, const char* what);

// The live-mode flags of run and filter (SPEC §6); each is an execution.* key.
struct LiveFlags {
  std::string latency;
  bool busy_poll = false;
  bool redundant = false;
};

void add_live_flags(CLI::App* cmd, LiveFlags& f);

// Shortest text that reads back as the same double.
std::string format_double(double v);

// A flag's value as YAML text for an override: as typed where YAML reads it
// back as the same plain scalar (numbers, names), else double-quoted, so that
// a value such as "kaiser:" or "a # b" stays one string.
std::string yaml_value(const std::string& text);
// Always double-quoted: for paths, which are strings whatever they look like.
std::string yaml_string(const std::string& text);

// The overrides that flags stand for, each with the flag's words. A config
// error names an override's key path and "(from --set KEY=VALUE)"; rethrow()
// puts such lines in the words the user typed ("--mode: ..."), so that the
// schema's rule is the only one and its message still names the flag.
class FlagOverrides {
public:
  // `flag`: how messages name it ("--mode", "OUTPUT"); `key_value`: "key.path=yaml".
  void add(std::string flag, std::string key_value);
  // In the reworded lines, a key the schema's message names (e.g.
  // "sink.type") is called by its flag ("--type").
  void name(std::string key, std::string flag);
  [[nodiscard]] const std::vector<std::string>& overrides() const { return texts_; }
  // Rethrows the current config error with its lines about these overrides
  // reworded; any other exception unchanged.
  [[noreturn]] void rethrow(const std::string& origin) const;

private:
  std::vector<std::string> texts_;
  std::vector<std::pair<std::string, std::string>> flags_; // (override text, flag)
  std::vector<std::pair<std::string, std::string>> keys_;  // (key path, flag)
};

RunOptions run_options(const CommonFlags& f);

// Prints the summary and the verification line; draws --plot's figure.
// Returns the exit code.
int finish(const RunReport& r, const CommonFlags& f, const std::optional<std::string>& stats_path);

// Headerless PCM input (SPEC §6) of filter and info: --input-type raw with
// its description, the source.raw keys.
struct RawFlags {
  std::string input_type;
  std::string rate;
  std::string channels;
  std::string encoding;
};

void add_raw_flags(CLI::App* cmd, RawFlags& f);

// Adds source.raw's overrides for the raw flags given to `cmd`. The flags
// must come together (a stream has no header to fill the gaps), which only
// the command line can say; their values are the schema's to check.
void add_raw_overrides(CLI::App* cmd, const RawFlags& f, FlagOverrides& out);

} // namespace sigstream::app
