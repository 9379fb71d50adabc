// The generic YAML walker (see yaml_reader.hpp): text helpers and
// suggestions, problem collection, scalar readers and the mapping reader.
#include "pipeline/config/yaml_reader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <tuple>

#include "core/error.hpp"

namespace sigstream::config {

// ---------------------------------------------------------------------------
// Text

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Shortest text that reads back as the same double.
std::string format_number(double v) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), res.ptr};
}

std::string join(std::span<const std::string_view> items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += sep;
    out += items[i];
  }
  return out;
}

namespace {

std::string range_phrase(const Key& k) {
  if (k.min && k.max && *k.min == *k.max)
    return " equal to " + format_number(*k.min);
  // Bounds that only say "fits an int" are not worth printing.
  const bool show_max = k.max && *k.max < kMaxInt;
  if (k.min && show_max) {
    return " from " + format_number(*k.min) + " to " + format_number(*k.max);
  }
  if (k.min)
    return (k.min_open ? " > " : " >= ") + format_number(*k.min);
  if (show_max)
    return " <= " + format_number(*k.max);
  return {};
}

std::vector<std::string_view> names_of(std::span<const Key* const> keys) {
  std::vector<std::string_view> out;
  for (const Key* k : keys)
    out.push_back(k->name);
  return out;
}

} // namespace

// "what was expected", as messages print it.
std::string expected(const Key& k) {
  switch (k.type) {
    case Type::integer:
      return "an integer" + range_phrase(k);
    case Type::uint64:
      return "an integer from 0 to 18446744073709551615";
    case Type::number:
      return "a finite number" + range_phrase(k);
    case Type::boolean:
      return "true or false";
    case Type::string:
      return k.type_text.empty() ? std::string("a string") : std::string(k.type_text);
    case Type::section:
      return k.type_text.empty() ? std::string("a mapping") : std::string(k.type_text);
    case Type::choice:
    case Type::custom:
      if (!k.type_text.empty())
        return std::string(k.type_text);
      if (k.choices)
        return "one of " + join(k.choices(), " | ");
      return "a value";
  }
  return "a value";
}

// ---------------------------------------------------------------------------
// Key paths and problem collection

std::string Path::str() const {
  std::string out;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i)
      out += '.';
    out += parts_[i];
  }
  return out;
}

bool Path::starts_with(const Path& prefix) const {
  return prefix.parts_.size() <= parts_.size() &&
         std::equal(prefix.parts_.begin(), prefix.parts_.end(), parts_.begin());
}

void Context::error(const YAML::Node& at, const Path& path, const std::string& what) {
  if (const AppliedOverride* o = covering_override(at, path)) {
    add_unplaced(path, what + " (from --set " + o->text + ")");
    return;
  }
  error_at(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), path, what);
}

void Context::error_at(const YAML::Mark& mark, const Path& path, const std::string& what) {
  if (mark.is_null()) {
    add_unplaced(path, what);
    return;
  }
  std::string text =
      origin_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": ";
  if (!path.empty())
    text += path.str() + ": ";
  problems_.push_back({1, mark.line, mark.column, problems_.size(), text + what});
}

void Context::override_error(const std::string& override_text, const std::string& what) {
  problems_.push_back(
      {2, 0, 0, problems_.size(), origin_ + ": --set " + override_text + ": " + what});
}

void Context::throw_if_any() {
  if (problems_.empty())
    return;
  // Unplaced (0) first, then by position in the file, then override problems;
  // within one position, in the order found.
  std::sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
    return std::tie(a.group, a.line, a.column, a.seq) < std::tie(b.group, b.line, b.column, b.seq);
  });
  std::string message;
  std::vector<std::string_view> seen;
  for (const Problem& p : problems_) {
    if (std::find(seen.begin(), seen.end(), p.text) != seen.end())
      continue;
    seen.push_back(p.text);
    if (!message.empty())
      message += '\n';
    message += p.text;
  }
  throw config_error(message);
}

void Context::add_unplaced(const Path& path, const std::string& what) {
  std::string text = origin_ + ": ";
  if (!path.empty())
    text += path.str() + ": ";
  problems_.push_back({0, 0, 0, problems_.size(), text + what});
}

// The override a problem comes from: one that set this path or an enclosing
// one (the latest wins, like the override itself), or, for nodes that the
// overrides created (no position), one that set something inside it.
const Context::AppliedOverride* Context::covering_override(const YAML::Node& at,
                                                           const Path& path) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    if (path.starts_with(it->path))
      return &*it;
  }
  if (!at.IsDefined() || at.Mark().is_null()) {
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
      if (it->path.starts_with(path))
        return &*it;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Scalars

std::string describe(const YAML::Node& v) {
  switch (v.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "an empty value";
    case YAML::NodeType::Scalar:
      break;
  }
  std::string s = v.Scalar();
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return (v.Tag() == "!" ? "the quoted string '" : "'") + s + "'";
}

namespace {

// Plain scalars only: a quoted "4" is a string in YAML, and silently reading it
// as a number would hide a mistake.
bool is_plain(const YAML::Node& v) {
  return v.Tag() != "!" && v.Tag() != "tag:yaml.org,2002:str";
}

// YAML 1.1 allows '_' between digits (1_048_576); from_chars does not.
std::string without_digit_separators(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool between_digits = s[i] == '_' && i > 0 && i + 1 < s.size() &&
                                std::isxdigit(static_cast<unsigned char>(s[i - 1])) &&
                                std::isxdigit(static_cast<unsigned char>(s[i + 1]));
    if (!between_digits)
      out += s[i];
  }
  return out;
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

enum class ParseStatus { ok, invalid, out_of_range };

// Decimal or 0x hexadecimal, optional sign.
template <class T> ParseStatus parse_integer_text(std::string_view text, T& out) {
  std::string s = without_digit_separators(text);
  bool negative = false;
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
  }
  int base = 10;
  if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  if (i >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i]))) {
    return ParseStatus::invalid;
  }
  std::string digits = (negative ? "-" : "") + s.substr(i);
  const char* end = digits.data() + digits.size();
  const auto res = std::from_chars(digits.data(), end, out, base);
  if (res.ec == std::errc::result_out_of_range)
    return ParseStatus::out_of_range;
  if (res.ec != std::errc() || res.ptr != end)
    return ParseStatus::invalid;
  return ParseStatus::ok;
}

// YAML core-schema floats, including .inf/.nan (caller decides about finiteness).
ParseStatus parse_number_text(std::string_view text, double& out) {
  const std::string l = lower(text);
  if (l == ".inf" || l == "+.inf") {
    out = std::numeric_limits<double>::infinity();
    return ParseStatus::ok;
  }
  if (l == "-.inf") {
    out = -std::numeric_limits<double>::infinity();
    return ParseStatus::ok;
  }
  if (l == ".nan") {
    out = std::numeric_limits<double>::quiet_NaN();
    return ParseStatus::ok;
  }
  std::int64_t as_int = 0;
  if (parse_integer_text(text, as_int) == ParseStatus::ok) {
    out = static_cast<double>(as_int);
    return ParseStatus::ok;
  }
  std::string s = without_digit_separators(text);
  if (!s.empty() && s[0] == '+')
    s.erase(0, 1);
  // from_chars also reads "inf", "nan" and friends, which YAML spells differently.
  const bool has_digit = std::any_of(s.begin(), s.end(), is_digit);
  const bool letters_ok = std::all_of(s.begin(), s.end(), [](char c) {
    return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  if (s.empty() || !has_digit || !letters_ok)
    return ParseStatus::invalid;
  const char* end = s.data() + s.size();
  const auto res = std::from_chars(s.data(), end, out, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range)
    return ParseStatus::out_of_range;
  if (res.ec != std::errc() || res.ptr != end)
    return ParseStatus::invalid;
  return ParseStatus::ok;
}

bool in_range(const Key& k, double v) {
  if (k.min && (k.min_open ? !(v > *k.min) : !(v >= *k.min)))
    return false;
  if (k.max && !(v <= *k.max))
    return false;
  return true;
}

// Checks that `v` is a plain scalar fit for a number/bool key; reports otherwise.
bool plain_scalar(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                  std::string_view what) {
  if (v.IsScalar() && is_plain(v))
    return true;
  std::string msg = describe(v) + " is not " + std::string(what) + " (expected " + expected(k);
  if (v.IsScalar())
    msg += "; write it without quotes";
  cx.error(v, p, msg + ")");
  return false;
}

} // namespace

std::optional<std::int64_t> read_integer(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k) {
  if (!plain_scalar(cx, v, p, k, "an integer"))
    return std::nullopt;
  std::int64_t out = 0;
  switch (parse_integer_text(v.Scalar(), out)) {
    case ParseStatus::ok:
      break;
    case ParseStatus::out_of_range:
      cx.error(v, p, describe(v) + " is too large (expected " + expected(k) + ")");
      return std::nullopt;
    case ParseStatus::invalid:
      cx.error(v, p, describe(v) + " is not an integer (expected " + expected(k) + ")");
      return std::nullopt;
  }
  if (!in_range(k, static_cast<double>(out))) {
    cx.error(v, p, v.Scalar() + " is out of range (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return out;
}

std::optional<std::uint64_t> read_uint64(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k) {
  if (!plain_scalar(cx, v, p, k, "an integer"))
    return std::nullopt;
  std::uint64_t out = 0;
  if (parse_integer_text(v.Scalar(), out) != ParseStatus::ok) {
    cx.error(v, p,
             describe(v) + " is not a valid " + std::string(k.name) + " (expected " + expected(k) +
                 ")");
    return std::nullopt;
  }
  return out;
}

std::optional<double> read_number(Context& cx, const YAML::Node& v, const Path& p, const Key& k) {
  if (!plain_scalar(cx, v, p, k, "a number"))
    return std::nullopt;
  double out = 0.0;
  const ParseStatus status = parse_number_text(v.Scalar(), out);
  if (status == ParseStatus::invalid) {
    cx.error(v, p, describe(v) + " is not a number (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (status == ParseStatus::out_of_range || !std::isfinite(out)) {
    cx.error(v, p, describe(v) + " is not a finite number (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (!in_range(k, out)) {
    cx.error(v, p, v.Scalar() + " is out of range (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return out;
}

std::optional<bool> read_bool(Context& cx, const YAML::Node& v, const Path& p, const Key& k) {
  if (!plain_scalar(cx, v, p, k, "true or false"))
    return std::nullopt;
  const std::string s = lower(v.Scalar());
  if (s == "true" || s == "yes" || s == "on")
    return true;
  if (s == "false" || s == "no" || s == "off")
    return false;
  cx.error(v, p, describe(v) + " is not true or false (expected " + expected(k) + ")");
  return std::nullopt;
}

std::optional<std::string> read_string(Context& cx, const YAML::Node& v, const Path& p,
                                       const Key& k) {
  if (!v.IsScalar()) {
    cx.error(v, p, describe(v) + " is not a string (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (v.Scalar().empty()) {
    cx.error(v, p, "the string is empty (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return v.Scalar();
}

// Reports a name that is not among `choices`, with a suggestion.
void bad_choice(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                std::span<const std::string_view> choices) {
  std::string msg = describe(v) + " is not a valid " + std::string(k.name);
  if (v.IsScalar())
    msg += did_you_mean(v.Scalar(), choices);
  cx.error(v, p, msg + " (expected one of " + join(choices, " | ") + ")");
}

std::optional<std::size_t> read_choice_index(Context& cx, const YAML::Node& v, const Path& p,
                                             const Key& k,
                                             std::span<const std::string_view> choices) {
  if (v.IsScalar()) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (v.Scalar() == choices[i])
        return i;
    }
  }
  bad_choice(cx, v, p, k, choices);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Mappings

std::vector<const Key*> keys_of(std::initializer_list<std::span<const Key>> tables) {
  std::vector<const Key*> out;
  for (const auto& t : tables) {
    for (const Key& k : t)
      out.push_back(&k);
  }
  return out;
}

MapReader::MapReader(Context& cx, const YAML::Node& node, Path path, std::vector<const Key*> keys,
                     const ForeignKeyHint& hint)
    : cx_(cx), node_(node), path_(std::move(path)), keys_(std::move(keys)) {
  if (!node_.IsDefined() || node_.IsNull())
    return;
  if (!node_.IsMap()) {
    const auto names = names_of(keys_);
    cx_.error(node_, path_,
              describe(node_) + " is not a mapping (expected a mapping with keys " +
                  join(names, ", ") + ")");
    ok_ = false;
    return;
  }
  std::vector<std::string> misspelt; // required names that unknown keys resemble
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      cx_.error(key, path_, describe(key) + " is not a key name (expected a plain name)");
      continue;
    }
    const std::string& name = key.Scalar();
    if (const Entry* first = find_any(name)) {
      cx_.error(key, path_ / name,
                "duplicate key, first given at line " + std::to_string(first->key.Mark().line + 1) +
                    " (expected each key once)");
      continue;
    }
    const auto decl =
        std::find_if(keys_.begin(), keys_.end(), [&](const Key* k) { return k->name == name; });
    entries_.push_back({name, key, it->second, decl == keys_.end() ? nullptr : *decl});
    if (decl != keys_.end())
      continue;
    const auto names = names_of(keys_);
    std::string why = hint ? hint(name) : std::string();
    if (why.empty()) {
      why = "unknown key" + did_you_mean(name, names);
      if (const auto best = closest(name, names))
        misspelt.emplace_back(*best);
    }
    cx_.error(key, path_ / name, why + " (expected one of " + join(names, ", ") + ")");
  }
  for (const Key* k : keys_) {
    // A required key that an unknown key looks like a typo of is already
    // reported there ("did you mean"); a second line would only mislead.
    if (std::find(misspelt.begin(), misspelt.end(), k->name) != misspelt.end())
      continue;
    if (k->is_required && !has(k->name)) {
      const Entry* e = find(k->name);
      cx_.error(e ? e->key : node_, path_ / k->name,
                "missing required key (expected " + expected(*k) + ")");
    }
  }
}

std::optional<std::int64_t> MapReader::integer(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    return read_integer(cx_, v, p, k);
  });
}

std::optional<int> MapReader::int32(std::string_view name) {
  const auto v = integer(name);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::optional<std::uint64_t> MapReader::uint64(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    return read_uint64(cx_, v, p, k);
  });
}

std::optional<double> MapReader::number(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    return read_number(cx_, v, p, k);
  });
}

std::optional<bool> MapReader::boolean(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    return read_bool(cx_, v, p, k);
  });
}

std::optional<std::string> MapReader::string(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    return read_string(cx_, v, p, k);
  });
}

std::optional<std::size_t> MapReader::choice_index(std::string_view name) {
  return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
    if (!k.choices) {
      throw internal_error("config key '" + std::string(k.name) + "' in " + path_.str() +
                           " declares no choices");
    }
    return read_choice_index(cx_, v, p, k, k.choices());
  });
}

std::optional<YAML::Node> MapReader::value_or_default(std::string_view name) const {
  if (has(name))
    return value(name);
  const Key& k = decl(name);
  if (k.default_text.empty() || k.computed_default)
    return std::nullopt;
  return YAML::Load(std::string(k.default_text));
}

const Key& MapReader::decl(std::string_view name) const {
  for (const Key* k : keys_) {
    if (k->name == name)
      return *k;
  }
  throw internal_error("config key '" + std::string(name) + "' is not declared in " + path_.str());
}

// Reports when more than one of `names` is present (at the later one) or, when
// `required`, none is. Returns how many are present.
int exactly_one_of(Context& cx, const MapReader& r, std::initializer_list<std::string_view> names) {
  std::vector<std::string_view> present;
  for (std::string_view n : names) {
    if (r.has(n))
      present.push_back(n);
  }
  std::vector<std::string_view> all(names);
  const std::string alternatives = join(all, " / ");
  if (present.empty()) {
    const std::string none = all.size() == 2
                                 ? "neither " + std::string(all[0]) + " nor " + std::string(all[1])
                                 : "none of " + join(all, ", ");
    cx.error(r.node(), r.path(), none + " is given (expected exactly one of " + alternatives + ")");
  }
  if (present.size() > 1) {
    // Point at the key that comes last in the file: the first one was fine
    // until the second appeared.
    // Keys that --set added have no position and count as last.
    const auto order = [&](std::string_view n) {
      const YAML::Mark m = r.key_node(n).Mark();
      constexpr int kEnd = std::numeric_limits<int>::max();
      return m.is_null() ? std::pair(kEnd, kEnd) : std::pair(m.line, m.column);
    };
    std::string_view later = present[0];
    for (std::string_view n : present) {
      if (order(n) > order(later))
        later = n;
    }
    cx.error(r.key_node(later), r.path(later),
             join(present, " and ") + " are both given (expected exactly one of " + alternatives +
                 ")");
  }
  return static_cast<int>(present.size());
}

} // namespace sigstream::config
