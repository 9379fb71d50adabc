// `sigstream schema`: the reference, rendered from the tables the config
// reader validates with, so that it cannot drift from what is accepted.
#include "app/schema_command.hpp"

#include <iostream>

#include "pipeline/config.hpp"

namespace sigstream::app {

CLI::App* add_schema_command(CLI::App& app) {
  return app.add_subcommand("schema", "Print every YAML key (type, default, meaning) as markdown "
                                      "(docs/yaml-reference.md)");
}

int run_schema_command() {
  std::cout << "# YAML reference\n\nEvery key of a sigstream config (SPEC §2), printed by "
               "`sigstream schema` "
               "from the tables the config reader validates with.\n\n"
            << config_reference();
  return 0;
}

} // namespace sigstream::app
