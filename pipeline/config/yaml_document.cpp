// Loading the YAML document and applying --set overrides to it (see
// yaml_document.hpp).
#include "pipeline/config/yaml_document.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>
#include <system_error>

#include "core/error.hpp"

namespace sigstream::config {
namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

std::optional<std::size_t> parse_index(const std::string& s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), is_digit))
    return std::nullopt;
  std::size_t out = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  if (res.ec != std::errc())
    return std::nullopt;
  return out;
}

std::string position(const YAML::Mark& m) {
  return std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// Sees where each YAML document starts and where its first node is.
class DocumentProbe : public YAML::EventHandler {
public:
  void reset() {
    first_node_.reset();
    empty_ = true;
  }
  [[nodiscard]] const YAML::Mark& start() const { return start_; }
  [[nodiscard]] YAML::Mark first_node() const { return first_node_.value_or(start_); }
  // Nothing but a null (e.g. after a trailing "---").
  [[nodiscard]] bool empty() const { return empty_; }

  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, true);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark, true);
  }
  void OnMapEnd() override {}

private:
  void node(const YAML::Mark& mark, bool content) {
    if (!first_node_)
      first_node_ = mark;
    if (content)
      empty_ = false;
  }
  YAML::Mark start_;
  std::optional<YAML::Mark> first_node_;
  bool empty_ = true;
};

} // namespace

// Applies one "key.path=value" to the tree. Map keys on the way are created;
// list indices must exist.
void apply_override(Context& cx, YAML::Node& root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    cx.override_error(text, "malformed override (expected KEY.PATH=VALUE, e.g. "
                            "execution.streams=8)");
    return;
  }
  const std::string key = trim(std::string_view(text).substr(0, eq));
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.push_back(trim(std::string_view(key).substr(start, dot - start)));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    cx.override_error(text, "the key path '" + key +
                                "' has an empty component (expected KEY.PATH=VALUE, e.g. "
                                "stages.0.design.cutoff_hz=3000)");
    return;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    cx.override_error(text, "the value is not valid YAML: " + e.msg);
    return;
  }
  if (root.IsNull())
    root = YAML::Node(YAML::NodeType::Map);
  // Node::reset rebinds a handle; operator= would overwrite the node it refers to.
  YAML::Node cur;
  cur.reset(root);
  std::vector<std::string> done;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = done.empty() ? "the top level" : "'" + Path(done).str() + "'";
    YAML::Node next;
    if (cur.IsSequence()) {
      const auto index = parse_index(part);
      if (!index) {
        cx.override_error(text, here + " is a list: '" + part +
                                    "' is not an index (expected a number from 0)");
        return;
      }
      if (*index >= cur.size()) {
        cx.override_error(text, "index " + part + " is past the end of " + here + " (" +
                                    std::to_string(cur.size()) + " item" +
                                    (cur.size() == 1 ? "" : "s") + "; expected 0 to " +
                                    std::to_string(static_cast<long long>(cur.size()) - 1) + ")");
        return;
      }
      done.push_back(std::to_string(*index));
      if (last) {
        cur[*index] = value;
        break;
      }
      next.reset(cur[*index]);
    } else if (cur.IsMap()) {
      done.push_back(part);
      if (last) {
        cur[part] = value;
        break;
      }
      const YAML::Node& const_cur = cur;
      if (!const_cur[part] || const_cur[part].IsNull()) {
        cur[part] = YAML::Node(YAML::NodeType::Map);
      }
      next.reset(cur[part]);
    } else {
      cx.override_error(text, here + " is " + describe(cur) +
                                  ", not a mapping or list, so it "
                                  "has no '" +
                                  part + "' (expected a path to a key)");
      return;
    }
    cur.reset(next);
  }
  cx.add_override(Path(done), text);
}

// Loads the first YAML document and checks that there is no other. Not
// YAML::LoadAll: in yaml-cpp 0.7 a document that starts with a stray ',' makes
// the parser hand out the same empty document forever (LoadAll then allocates
// until it dies), and YAML::Load silently returns null for it. Such a document
// is recognised by a start that does not advance, and reported as the syntax
// error it is.
YAML::Node load_document(const std::string& text, const std::string& origin, Context& cx) {
  const auto syntax_error = [&](const YAML::Mark& mark, const std::string& what) {
    return config_error(origin + ":" + position(mark) + ": YAML syntax error: " + what);
  };
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe probe;
    std::vector<YAML::Mark> documents;
    std::optional<YAML::Mark> second; // the first node of the first extra document
    int extra = 0;
    while (true) {
      probe.reset();
      if (!parser.HandleNextDocument(probe))
        break;
      if (!documents.empty() && probe.start().pos == documents.back().pos) {
        const YAML::Mark at = probe.first_node();
        const bool in_text = at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size();
        throw syntax_error(at, in_text ? "unexpected '" + text.substr(at.pos, 1) + "'"
                                       : std::string("unexpected content"));
      }
      documents.push_back(probe.start());
      if (documents.size() > 1 && !probe.empty()) {
        ++extra;
        if (!second)
          second = probe.first_node();
      }
    }
    if (extra > 0) {
      cx.error_at(*second, Path{},
                  "the file holds " + std::to_string(extra + 1) + " YAML documents (expected one)");
    }
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw syntax_error(e.mark, e.msg);
  } catch (const YAML::Exception& e) {
    throw config_error(origin + ": YAML error: " + e.msg);
  }
}

} // namespace sigstream::config
