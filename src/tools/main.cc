// dmindex: the command-line tool. Each subcommand lives in its own file (commands.h).
#include <CLI/CLI.hpp>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"dmindex: a range index for disaggregated memory"};
  app.set_version_flag("--version", "dmindex 0.1");
  app.require_subcommand(1);
  dmindex::tools::AddCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
