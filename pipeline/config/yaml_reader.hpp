#pragma once
// The generic half of the config reader: it walks a YAML tree against key
// tables (pipeline/config/schema.hpp) and collects every problem with its
// position, key path and a did-you-mean suggestion, so that one Error(config)
// can report them all. It knows no section and no stage kind: config.cpp and
// each stages/<kind>/schema.cpp say what their keys mean.
//
// Only the config reader's own files include this header (it brings in
// yaml-cpp, which stays private to sigstream_core).
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/text_match.hpp"
#include "pipeline/config/schema.hpp"

namespace sigstream::config {

// ---------------------------------------------------------------------------
// Text

[[nodiscard]] std::string lower(std::string_view s);
// Shortest text that reads back as the same double.
[[nodiscard]] std::string format_number(double v);
[[nodiscard]] std::string join(std::span<const std::string_view> items, std::string_view sep);
// Did-you-mean (core/text_match.hpp).
using sigstream::closest;
using sigstream::did_you_mean;
using sigstream::edit_distance;
// "what was expected" for a value of `k`, as messages and the reference print it.
[[nodiscard]] std::string expected(const Key& k);

// ---------------------------------------------------------------------------
// Key paths and problem collection

class Path {
public:
  Path() = default;
  explicit Path(std::vector<std::string> parts) : parts_(std::move(parts)) {}
  [[nodiscard]] Path operator/(std::string_view key) const {
    Path p = *this;
    p.parts_.emplace_back(key);
    return p;
  }
  [[nodiscard]] Path operator/(std::size_t index) const { return *this / std::to_string(index); }
  [[nodiscard]] std::string str() const;
  [[nodiscard]] bool starts_with(const Path& prefix) const;
  [[nodiscard]] bool empty() const { return parts_.empty(); }

private:
  std::vector<std::string> parts_;
};

// Collects problems ("ORIGIN:LINE:COL: KEY.PATH: what") and throws them as one
// Error(config). Problems in values that --set put there name the override
// instead of a position.
class Context {
public:
  explicit Context(std::string origin) : origin_(std::move(origin)) {}

  // An override that set `path` ("KEY=VALUE" as given).
  void add_override(Path path, std::string text) {
    overrides_.push_back({std::move(path), std::move(text)});
  }

  // A problem at `path`, located at node `at` (a value, a key or the enclosing map).
  void error(const YAML::Node& at, const Path& path, const std::string& what);
  // A problem at a position in the file (no --set attribution).
  void error_at(const YAML::Mark& mark, const Path& path, const std::string& what);
  // A problem with an override itself (malformed, bad path): no YAML position.
  void override_error(const std::string& override_text, const std::string& what);

  [[nodiscard]] bool ok() const { return problems_.empty(); }
  // Throws every problem found, in file order, as one Error(config).
  void throw_if_any();

private:
  struct AppliedOverride {
    Path path;
    std::string text;
  };
  struct Problem {
    int group;
    int line;
    int column;
    std::size_t seq;
    std::string text;
  };

  void add_unplaced(const Path& path, const std::string& what);
  [[nodiscard]] const AppliedOverride* covering_override(const YAML::Node& at,
                                                         const Path& path) const;

  std::string origin_;
  std::vector<AppliedOverride> overrides_;
  std::vector<Problem> problems_;
};

// ---------------------------------------------------------------------------
// Scalars: each reports what is wrong at the value and returns nullopt.

// "'abc'", "a list", "the quoted string '4'": a value as messages name it.
[[nodiscard]] std::string describe(const YAML::Node& v);

std::optional<std::int64_t> read_integer(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k);
std::optional<std::uint64_t> read_uint64(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k);
// Finite numbers only.
std::optional<double> read_number(Context& cx, const YAML::Node& v, const Path& p, const Key& k);
std::optional<bool> read_bool(Context& cx, const YAML::Node& v, const Path& p, const Key& k);
// Non-empty strings only.
std::optional<std::string> read_string(Context& cx, const YAML::Node& v, const Path& p,
                                       const Key& k);
// Reports a name that is not among `choices`, with a suggestion.
void bad_choice(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                std::span<const std::string_view> choices);
// The index in `choices` of the name `v` spells.
std::optional<std::size_t> read_choice_index(Context& cx, const YAML::Node& v, const Path& p,
                                             const Key& k,
                                             std::span<const std::string_view> choices);

template <class E>
std::optional<E> read_choice(Context& cx, const YAML::Node& v, const Path& p, const Key& k) {
  const auto i = read_choice_index(cx, v, p, k, enum_names<E>());
  return i ? std::optional<E>(EnumValues<E>::values[*i]) : std::nullopt;
}

// ---------------------------------------------------------------------------
// Mappings

// The keys of several tables, in order, as a MapReader takes them.
[[nodiscard]] std::vector<const Key*> keys_of(std::initializer_list<std::span<const Key>> tables);

// Explains a key that is not allowed here but means something elsewhere
// ("" = none: a plain unknown key).
using ForeignKeyHint = std::function<std::string(std::string_view)>;

// One YAML mapping checked against its key table: unknown keys, duplicate keys and
// missing required keys are reported on construction; typed getters apply the
// table's type, range and default. A YAML null value counts as absent (so
// `--set sink.file=~` removes a sink).
class MapReader {
public:
  MapReader(Context& cx, const YAML::Node& node, Path path, std::vector<const Key*> keys,
            const ForeignKeyHint& hint = {});

  // False when the node was not a mapping (already reported).
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const YAML::Node& node() const { return node_; }
  [[nodiscard]] const Path& path() const { return path_; }
  [[nodiscard]] Path path(std::string_view name) const { return path_ / name; }

  [[nodiscard]] bool has(std::string_view name) const {
    const Entry* e = find(name);
    return e && !e->value.IsNull();
  }
  // The value of a present key (check has() first).
  [[nodiscard]] YAML::Node value(std::string_view name) const { return find(name)->value; }
  // Where to point at for a problem with this key: its key if present, else the map.
  [[nodiscard]] YAML::Node key_node(std::string_view name) const {
    const Entry* e = find(name);
    return e ? e->key : node_;
  }
  // Where to point at for a problem with this key's value.
  [[nodiscard]] YAML::Node value_node(std::string_view name) const {
    return has(name) ? value(name) : key_node(name);
  }

  void error(std::string_view name, const std::string& what) {
    cx_.error(value_node(name), path(name), what);
  }

  std::optional<std::int64_t> integer(std::string_view name);
  // For keys stored in an int: the table's max keeps the value in range.
  std::optional<int> int32(std::string_view name);
  std::optional<std::uint64_t> uint64(std::string_view name);
  std::optional<double> number(std::string_view name);
  std::optional<bool> boolean(std::string_view name);
  std::optional<std::string> string(std::string_view name);
  template <class E> std::optional<E> choice(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_choice<E>(cx_, v, p, k);
    });
  }
  // For a choice key whose names are not an enum's (the table's Key::choices):
  // the index of the given name among them.
  std::optional<std::size_t> choice_index(std::string_view name);

  // The text a custom key is read from: the user's value, or the table default.
  [[nodiscard]] std::optional<YAML::Node> value_or_default(std::string_view name) const;

  [[nodiscard]] const Key& decl(std::string_view name) const;

private:
  struct Entry {
    std::string name;
    YAML::Node key;
    YAML::Node value;
    const Key* decl;
  };

  [[nodiscard]] const Entry* find_any(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name)
        return &e;
    }
    return nullptr;
  }
  [[nodiscard]] const Entry* find(std::string_view name) const {
    const Entry* e = find_any(name);
    return e && e->decl ? e : nullptr;
  }

  template <class Read>
  std::invoke_result_t<Read, const YAML::Node&, const Path&, const Key&> get(std::string_view name,
                                                                             Read read) {
    const Key& k = decl(name);
    if (has(name))
      return read(value(name), path(name), k);
    if (k.default_text.empty() || k.computed_default)
      return std::nullopt;
    // Defaults go through the same reader as user values, so a table default
    // means exactly what the same text in a config would.
    return read(YAML::Load(std::string(k.default_text)), path(name), k);
  }

  Context& cx_;
  YAML::Node node_;
  Path path_;
  std::vector<const Key*> keys_;
  std::vector<Entry> entries_;
  bool ok_ = true;
};

// Reports when more than one of `names` is present (at the later one) or
// none is. Returns how many are present.
int exactly_one_of(Context& cx, const MapReader& r, std::initializer_list<std::string_view> names);

} // namespace sigstream::config
