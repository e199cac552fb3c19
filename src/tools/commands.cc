#include "tools/commands.h"

#include <CLI/CLI.hpp>

namespace dmindex::tools {

void AddCommands(CLI::App& app) {
  AddFabricBenchCommand(app);
}

}  // namespace dmindex::tools
