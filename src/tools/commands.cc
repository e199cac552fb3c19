#include "tools/commands.h"

#include <CLI/CLI.hpp>

namespace dmindex::tools {

void AddCommands(CLI::App& app) {
  // Subcommands are added here as they land (memserver, fabric-bench, bench, plot).
  (void)app;
}

}  // namespace dmindex::tools
