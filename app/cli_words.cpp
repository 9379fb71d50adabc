#include "app/cli_words.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "core/text_match.hpp"

namespace sigstream::app {

namespace {

std::string suggest(const std::string& word, const std::vector<std::string>& names) {
  const std::vector<std::string_view> views(names.begin(), names.end());
  return did_you_mean(word, views);
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

std::optional<std::string> unknown_word(CLI::App& app, int argc, char** argv) {
  int i = 1;
  while (i < argc && argv[i][0] == '-')
    ++i; // --help, --version (CLI11 says what else is wrong)
  if (i >= argc)
    return std::nullopt;
  const std::string command = argv[i];
  const std::vector<CLI::App*> named =
      app.get_subcommands([&](const CLI::App* a) { return a->get_name() == command; });
  if (named.empty()) {
    std::vector<std::string> commands;
    std::string list;
    for (const CLI::App* s :
         app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); })) {
      commands.push_back(s->get_name());
      list += (list.size() > 0 ? ", " : "") + s->get_name();
    }
    return "unknown command '" + command + "'" + suggest(command, commands) +
           " (commands: " + list + "; no command runs the demo)";
  }
  // Its options, and those of its option groups (nameless sub-apps, e.g. the filter kinds).
  std::vector<std::string> longs = {"--help"}, shorts = {"-h"};
  std::vector<CLI::App*> scopes = {named.front()};
  for (std::size_t k = 0; k < scopes.size(); ++k) {
    for (const CLI::Option* o : scopes[k]->get_options()) {
      for (const std::string& n : o->get_lnames())
        longs.push_back("--" + n);
      for (const std::string& n : o->get_snames())
        shorts.push_back("-" + n);
    }
    for (CLI::App* g :
         scopes[k]->get_subcommands([](const CLI::App* a) { return a->get_name().empty(); }))
      scopes.push_back(g);
  }
  for (int j = i + 1; j < argc; ++j) {
    const std::string word = argv[j];
    if (word == "--")
      break;
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      if (!contains(longs, name))
        return "unknown option '" + name + "' for '" + command + "'" + suggest(name, longs);
    } else if (word.size() == 2 && word[0] == '-' &&
               std::isalpha(static_cast<unsigned char>(word[1])) && !contains(shorts, word)) {
      return "unknown option '" + word + "' for '" + command + "'";
    }
  }
  return std::nullopt;
}

} // namespace sigstream::app
